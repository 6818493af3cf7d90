"""Write new values (scalars, lists, mappings) the way the surrounding file writes them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.recipes.edit.edits import Scalar, YamlValue
from bot.recipes.edit.scalars import Style, format_key, format_scalar, is_scalar, list_family


@dataclass(frozen=True)
class HouseStyle:
    """How this file writes things: string quoting and indentation steps."""

    value_styles: tuple[Style, ...]  # for strings that are mapping values
    item_styles: tuple[Style, ...]  # for strings that are sequence items
    key_styles: tuple[Style, ...] = ("",)
    map_step: int = 2  # child keys are indented this much under their parent key
    seq_offset: int = 2  # a block sequence's dashes are this far right of its key (0 or 2)
    # item styles of the file's lists per family (:func:`list_family` of their key): a file
    # that quotes its args but not its feature names writes a new args list quoted
    list_styles: Mapping[str, tuple[Style, ...]] | None = None


def normalize(value: YamlValue) -> YamlValue:
    """Lists for sequences, dicts for mappings (tuples and other containers accepted)."""
    if is_scalar(value):
        return value
    if isinstance(value, Mapping):
        out: dict[str, YamlValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"mapping keys must be strings, not {key!r}")
            out[key] = normalize(item)
        return out
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [normalize(item) for item in value]
    raise TypeError(f"cannot write {value!r} as YAML")


def _scalar(value: Scalar, styles: tuple[Style, ...]) -> str:
    return format_scalar(value, styles, "block")


def entry_lines(key: str, value: YamlValue, col: int, house: HouseStyle) -> list[str]:
    """``key: value`` as block lines at indentation ``col`` (no line terminators)."""
    head = " " * col + format_key(key, house.key_styles) + ":"
    if is_scalar(value):
        return [f"{head} {_scalar(value, house.value_styles)}"]  # type: ignore[arg-type]
    if not value:
        return [f"{head} {'{}' if isinstance(value, Mapping) else '[]'}"]
    if isinstance(value, Mapping):
        lines = [head]
        for child_key, child in value.items():
            lines.extend(entry_lines(child_key, child, col + house.map_step, house))
        return lines
    assert isinstance(value, Sequence)
    return [head, *item_lines(value, col + house.seq_offset, house, key)]


def item_lines(
    items: Sequence[YamlValue], dash_col: int, house: HouseStyle, key: str | None = None
) -> list[str]:
    """Block sequence items with their dashes at ``dash_col`` (``key``: the list's key)."""
    lines: list[str] = []
    dash = " " * dash_col + "- "
    styles = house.item_styles
    if key is not None and house.list_styles:
        found = house.list_styles.get(list_family(key), ())
        styles = found + tuple(style for style in styles if style not in found)
    # a JSON value reads best single-quoted where the file single-quotes any such item
    quoted = ("'", *(style for style in styles if style != "'")) if "'" in styles else styles
    for item in items:
        if is_scalar(item):
            json_like = isinstance(item, str) and '"' in item and "'" not in item
            lines.append(dash + _scalar(item, quoted if json_like else styles))  # type: ignore[arg-type]
        elif not item:
            lines.append(dash + ("{}" if isinstance(item, Mapping) else "[]"))
        else:
            # Nested collection: lay it out two columns in, then put the dash on its first line.
            if isinstance(item, Mapping):
                nested: list[str] = []
                for child_key, child in item.items():
                    nested.extend(entry_lines(child_key, child, dash_col + 2, house))
            else:
                assert isinstance(item, Sequence)
                nested = item_lines(item, dash_col + 2, house)
            lines.append(dash + nested[0][dash_col + 2 :])
            lines.extend(nested[1:])
    return lines


def flow_text(value: YamlValue, house: HouseStyle, *, item: bool = False) -> str:
    """A value inside a flow collection: ``[a, b]`` / ``{k: v}`` / a scalar."""
    if is_scalar(value):
        styles = house.item_styles if item else house.value_styles
        return format_scalar(value, styles, "flow")  # type: ignore[arg-type]
    if isinstance(value, Mapping):
        inner = ", ".join(
            f"{format_key(key, house.key_styles)}: {flow_text(child, house)}"
            for key, child in value.items()
        )
        return "{" + inner + "}"
    assert isinstance(value, Sequence)
    return "[" + ", ".join(flow_text(child, house, item=True) for child in value) + "]"


def comment_lines(comment: Sequence[str], col: int) -> list[str]:
    return [" " * col + ("# " + line if line else "#") for line in comment]

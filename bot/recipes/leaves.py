"""Recipe launch settings as comparable leaves: one flag, env var, image or scalar at one node.

Both sides of the agreement score are reduced to this shape. A recipe's args list
(``extra_args: [--attention-config, '{"a": 1}', --async-scheduling]``) becomes one leaf per
canonical flag — a JSON-valued flag one leaf per field (``--attention-config.a``), so the
dotted and the JSON spelling of one setting compare equal; an env map one leaf per variable;
``docker_image`` one leaf per brand key; other scalars one leaf per path. The *node* of a leaf
is the container it lives in (``variants.mxfp8.hardware_overrides.mi300x.extra_env``), its
*scope* the layer block (``variants.mxfp8.hardware_overrides.mi300x``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bot.vllm.pairs import canonical_value, flag_pairs

Slot = Literal["arg", "env", "image", "scalar"]
ARGS_KEYS = frozenset({"base_args", "extra_args", "args", "vllm_args"})
ENV_KEYS = frozenset({"base_env", "extra_env", "env"})
# scalars that change what is launched (the rest — descriptions, dates, notes, sizes — do not)
LAUNCH_SCALARS = frozenset({"tp", "dp", "ep", "pp", "min_vllm_version"})
INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True, order=True)
class Leaf:
    recipe: str  # models/<org>/<name>.yaml
    node: str  # the container path: `...extra_args`, `...extra_env`, `...docker_image`, a scalar
    slot: Slot
    subject: str  # canonical flag (dotted for a JSON field), env var, "image", or the scalar key
    value: str  # canonical text ("" for a bare switch)

    @property
    def scope(self) -> str:
        """The layer block the leaf is written in (the node without its container key)."""
        if self.slot == "scalar":
            return self.node.rpartition(".")[0]
        head = self.node
        if self.slot == "image":
            head = head.split(".docker_image", 1)[0] + ".docker_image"
        return head.rpartition(".")[0]

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity without the value: a later commit that sets this key set this leaf."""
        return (self.recipe, self.node, self.subject)

    @property
    def launch(self) -> bool:
        """Does the leaf change a launched command (not metadata such as a description)?"""
        if self.slot != "scalar":
            return True
        last = self.node.rpartition(".")[2]
        return last in LAUNCH_SCALARS or self.node.startswith("meta.hardware.")


def image_value(text: str) -> str:
    """An image reference as written, without a copied ``docker pull`` prefix."""
    text = text.strip()
    return text[len("docker pull ") :].strip() if text.startswith("docker pull ") else text


def recipe_leaves(recipe: str, data: Any) -> dict[tuple[str, str, str], Leaf]:
    """Every leaf of one recipe document, by key. ``guide`` is prose, not a leaf."""
    found: dict[tuple[str, str, str], Leaf] = {}
    if not isinstance(data, dict):
        return found

    def add(leaf: Leaf) -> None:
        found[leaf.key] = leaf

    def walk(value: Any, path: str) -> None:
        last = path.rpartition(".")[2]
        if last in ARGS_KEYS and isinstance(value, list):
            for flag, setting in flag_pairs([str(v) for v in value if v is not None]):
                add(Leaf(recipe, path, "arg", flag, setting))
            return
        if last in ENV_KEYS and isinstance(value, dict):
            for name, setting in value.items():
                add(Leaf(recipe, path, "env", str(name), canonical_value(setting)))
            return
        if last == "docker_image":
            if isinstance(value, dict):
                for brand, image in _images(value):
                    add(Leaf(recipe, f"{path}.{brand}", "image", "image", image))
            elif value is not None:
                add(Leaf(recipe, path, "image", "image", image_value(str(value))))
            return
        if isinstance(value, dict):
            for key, inner in value.items():
                if path == "" and key == "guide":
                    continue
                walk(inner, f"{path}.{key}" if path else str(key))
            return
        if isinstance(value, list):
            text = canonical_value([v for v in value if not isinstance(v, dict | list)])
            if all(not isinstance(v, dict | list) for v in value):
                add(Leaf(recipe, path, "scalar", last, text))
                return
            for index, inner in enumerate(value):
                walk(inner, f"{path}[{index}]")
            return
        subject = path if path.startswith("meta.hardware.") else last
        add(Leaf(recipe, path, "scalar", subject, canonical_value(value)))

    walk(data, "")
    return found


def _images(value: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, inner in value.items():
        if isinstance(inner, dict):
            yield from _images(inner, f"{prefix}{key}.")
        elif inner is not None:
            yield f"{prefix}{key}", image_value(str(inner))


@dataclass(frozen=True)
class LeafChange:
    """One leaf a commit (or a proposal) sets, changes or removes."""

    leaf: Leaf  # the value after (for a removal: the value before)
    before: str | None  # None: the key was not there
    removed: bool = False


def diff_leaves(
    before: Mapping[tuple[str, str, str], Leaf], after: Mapping[tuple[str, str, str], Leaf]
) -> tuple[LeafChange, ...]:
    changes: list[LeafChange] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if new is not None and (old is None or old.value != new.value):
            changes.append(LeafChange(new, old.value if old is not None else None))
        elif new is None and old is not None:
            changes.append(LeafChange(old, old.value, removed=True))
    return tuple(changes)


def strip_indices(path: str) -> str:
    return INDEX.sub("", path)

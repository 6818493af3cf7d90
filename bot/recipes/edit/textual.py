"""One edit → line splices on a :class:`Document`, touching only the lines the edit needs."""

from __future__ import annotations

from collections.abc import Sequence

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bot.recipes.edit.document import (
    Document,
    Located,
    indent_of,
    is_blank,
    is_comment,
    is_empty,
    is_flow,
    kind,
    plural,
)
from bot.recipes.edit.edits import (
    AppendItems,
    InsertItems,
    InsertKey,
    RemoveItems,
    SetComment,
    SetScalar,
    YamlValue,
)
from bot.recipes.edit.errors import EditError
from bot.recipes.edit.paths import NodePath, format_path
from bot.recipes.edit.render import (
    HouseStyle,
    comment_lines,
    entry_lines,
    flow_text,
    item_lines,
    normalize,
)
from bot.recipes.edit.scalars import (
    Context,
    Style,
    format_key,
    format_scalar,
    is_scalar,
    printable,
    reads_as,
)
from bot.recipes.edit.splice import Splice, split_lines

TextEdit = SetScalar | InsertKey | InsertItems | AppendItems | RemoveItems | SetComment


def splices_for(doc: Document, edit: TextEdit) -> list[Splice]:
    if isinstance(edit, SetScalar):
        return _set_scalar(doc, edit)
    if isinstance(edit, InsertKey):
        return _insert_key(doc, edit)
    if isinstance(edit, InsertItems):
        return _insert_items(doc, edit.list_path, edit.index, edit.items, edit.comment)
    if isinstance(edit, AppendItems):
        return _insert_items(doc, edit.list_path, None, edit.items, edit.comment)
    if isinstance(edit, SetComment):
        return _set_comment(doc, edit)
    return _remove_items(doc, edit)


# --- text primitives -------------------------------------------------------------------


def _replace_span(doc: Document, start: int, end: int, new_text: str) -> Splice:
    """Replace characters ``start .. end-1`` (the lines they touch become changed lines)."""
    first = doc.line_of(start)
    last = doc.line_of(max(start, end - 1))
    head = doc.text[doc.line_starts[first] : start]
    tail = doc.text[end : doc.line_starts[last + 1]]
    return Splice(first, last + 1, tuple(split_lines(head + new_text + tail)))


def _terminated(doc: Document, lines: Sequence[str], *, last_open: bool) -> tuple[str, ...]:
    out = [line + doc.newline for line in lines]
    if last_open and out:  # keep "no newline at end of file"
        out[-1] = lines[-1]
    return tuple(out)


def _insert_lines(doc: Document, at: int, lines: Sequence[str]) -> list[Splice]:
    """Insert whole lines before line ``at`` (``len(lines)`` appends)."""
    if at == len(doc.lines) and doc.lines and not doc.lines[-1].endswith("\n"):
        last = doc.lines[-1]
        grown = Splice(at - 1, at, (last + doc.newline, *_terminated(doc, lines, last_open=True)))
        header = _strip_chomping(doc, at - 1)
        return [grown] if header is None else [header, grown]
    return [Splice(at, at, _terminated(doc, lines, last_open=False))]


def _delete_lines(doc: Document, start: int, end: int) -> Splice:
    if end == len(doc.lines) and start > 0 and not doc.lines[-1].endswith("\n"):
        if _block_header(doc, start - 1) is not None:
            # The new last line ends a block scalar: dropping its line break would change
            # the scalar, so the file keeps a final newline instead.
            return Splice(start, end, ())
        kept = doc.lines[start - 1].rstrip("\r\n")  # the new last line loses its newline
        return Splice(start - 1, end, (kept,))
    return Splice(start, end, ())


def _block_header(doc: Document, last_line: int) -> tuple[int, int, str] | None:
    """(line, column after ``|``/``>``, chomping/indent indicators) of a block scalar that
    ends on ``last_line`` and does not strip its final line break; else None."""
    node = doc.block_scalar_ending_at(last_line)
    if node is None:
        return None
    start = node.start_mark.index
    line = doc.line_of(start)
    text = doc.lines[line]
    col = start - doc.line_starts[line]
    if line == last_line or text[col : col + 1] not in ("|", ">"):
        return None
    end = col + 1
    while end < len(text) and text[end] in "+-0123456789":
        end += 1
    indicators = text[col + 1 : end]
    return None if "-" in indicators else (line, col + 1, indicators)


def _strip_chomping(doc: Document, last_line: int) -> Splice | None:
    """A block scalar ending the file without a newline has no final line break; when that
    line gets one, switch the header to strip (``-``) so the value stays the same."""
    header = _block_header(doc, last_line)
    if header is None:
        return None
    line, col, indicators = header
    text = doc.lines[line]
    chomp = indicators.replace("+", "-") if "+" in indicators else "-" + indicators
    return Splice(line, line + 1, (text[:col] + chomp + text[col + len(indicators) :],))


def _colon_after(doc: Document, key: Node, path: NodePath) -> int:
    colon = doc.text.find(":", key.end_mark.index)
    if colon < 0 or doc.text[key.end_mark.index : colon].strip(" \t"):
        raise EditError(doc.file, format_path(path), "cannot find the ':' after this key")
    return colon


def _after_line(doc: Document, last_line: int, col: int) -> int:
    """The line after an entry ending at ``last_line``, past comments indented under it."""
    line = last_line + 1
    while (
        line < len(doc.lines) and is_comment(doc.lines[line]) and indent_of(doc.lines[line]) > col
    ):
        line += 1
    return line


def _item_dash(doc: Document, item: Node, path: NodePath) -> int:
    pos: int = item.start_mark.index - 1
    while pos >= 0 and doc.text[pos] in " \t\r\n":
        pos -= 1
    if pos < 0 or doc.text[pos] != "-":
        raise EditError(
            doc.file, format_path(path), "cannot find this item's '-'", doc.line_number(item)
        )
    return pos


def _block_from_empty_flow(
    doc: Document, loc: Located, new_lines: list[str], path: NodePath
) -> list[Splice]:
    """``key: {}`` / ``key: []`` → ``key:`` followed by ``new_lines`` (block style)."""
    assert loc.key_node is not None
    colon = _colon_after(doc, loc.key_node, path)
    first = doc.line_of(loc.key_node.start_mark.index)
    last = doc.line_of(loc.node.end_mark.index - 1)
    head = doc.text[doc.line_starts[first] : colon + 1]
    tail = doc.text[loc.node.end_mark.index : doc.line_starts[last + 1]]
    key_line = head + tail  # the comment after `{}` stays on the key line
    if key_line.endswith("\n"):
        lines = (key_line, *_terminated(doc, new_lines, last_open=False))
    else:
        lines = (key_line + doc.newline, *_terminated(doc, new_lines, last_open=True))
    return [Splice(first, last + 1, lines)]


def _is_block_mapping_value(loc: Located) -> bool:
    return (
        isinstance(loc.parent, MappingNode) and not is_flow(loc.parent) and loc.key_node is not None
    )


# --- house style -------------------------------------------------------------------------


def _merge(*groups: tuple[Style, ...]) -> tuple[Style, ...]:
    out: list[Style] = []
    for group in groups:
        out.extend(style for style in group if style not in out)
    return tuple(out)


def _house_for_map(doc: Document, node: MappingNode) -> HouseStyle:
    map_step, seq_offset = doc.indent_steps()
    values = [value for _, value in node.value]
    sibling_items: list[Node] = []
    for key, value in node.value:
        if isinstance(value, SequenceNode) and not is_flow(value):
            sibling_items.extend(value.value)
            if value.value:  # a sibling list shows this map's own dash offset
                seq_offset = doc.column_of(value.start_mark.index) - doc.column_of(
                    key.start_mark.index
                )
    key_styles = doc.scalar_styles([key for key, _ in node.value])
    return HouseStyle(
        value_styles=_merge(doc.scalar_styles(values), doc.document_styles("value")),
        item_styles=_merge(doc.scalar_styles(sibling_items), doc.document_styles("item")),
        key_styles=_merge(("",), tuple(s for s in key_styles if s)),
        map_step=map_step,
        seq_offset=max(seq_offset, 0),
        list_styles=doc.item_styles_by_list(),
    )


def _house_for_seq(doc: Document, node: SequenceNode) -> HouseStyle:
    map_step, seq_offset = doc.indent_steps()
    return HouseStyle(
        value_styles=doc.document_styles("value"),
        item_styles=_merge(doc.scalar_styles(list(node.value)), doc.document_styles("item")),
        map_step=map_step,
        seq_offset=seq_offset,
        list_styles=doc.item_styles_by_list(),
    )


# --- SetScalar ---------------------------------------------------------------------------


def _set_scalar(doc: Document, edit: SetScalar) -> list[Splice]:
    where = format_path(edit.path)
    if not edit.path:
        raise EditError(doc.file, where, "SetScalar needs a path to a scalar, not the root")
    if not is_scalar(edit.value):
        raise EditError(doc.file, where, f"SetScalar takes a scalar value, not {edit.value!r}")
    loc = doc.locate(edit.path)
    node = loc.node
    line = loc.line
    if not isinstance(node, ScalarNode):
        raise EditError(doc.file, where, f"is a {kind(node)}, not a scalar", line)
    assert loc.parent is not None
    start, end = node.start_mark.index, node.end_mark.index
    if doc.text.startswith("!", start):
        raise EditError(doc.file, where, "refusing to edit a scalar with an explicit tag", line)
    if isinstance(loc.parent, MappingNode):
        siblings = [value for _, value in loc.parent.value if value is not node]
        doc_styles = doc.document_styles("value")
    else:
        siblings = [item for item in loc.parent.value if item is not node]
        doc_styles = doc.document_styles("item")
    own: tuple[Style, ...] = (node.style or "",) if node.style in (None, '"', "'") else ()
    styles = _merge(own, doc.scalar_styles(siblings), doc_styles)
    context: Context = "flow" if is_flow(loc.parent) else "block"
    try:
        if node.style in ("|", ">"):
            # A block scalar's end mark is past its trailing blank lines: keep those lines.
            last = doc.content_end_line(node)
            while last > doc.line_of(start) and is_blank(doc.lines[last]):
                last -= 1
            end = doc.line_starts[last] + len(doc.lines[last].rstrip("\r\n"))
            literal = _literal_block(doc, node, edit.value) if isinstance(edit.value, str) else None
            text = literal or format_scalar(edit.value, ('"',), "block")
        else:
            text = format_scalar(edit.value, styles, context)
    except ValueError as err:
        raise EditError(doc.file, where, str(err), line) from err
    if is_empty(node):
        if loc.key_node is None:
            raise EditError(doc.file, where, "cannot fill an empty sequence item", line)
        colon = _colon_after(doc, loc.key_node, edit.path)
        return [_replace_span(doc, colon + 1, colon + 1, " " + text)]
    return [_replace_span(doc, start, end, text)]


def _literal_block(doc: Document, node: ScalarNode, value: str) -> str | None:
    """``|`` block text for a multi-line value at the node's content indent, if expressible."""
    trailing = len(value) - len(value.rstrip("\n"))
    body = value[: len(value) - trailing]
    if trailing > 1 or not body or "\r" in body or body[0] in " \t":
        return None
    if not all(printable(line) for line in body.split("\n")):
        return None
    last = doc.content_end_line(node)
    if trailing and last == len(doc.lines) - 1 and not doc.lines[last].endswith("\n"):
        return None  # at the end of a file without a final newline there is no line break
    header = doc.line_of(node.start_mark.index)
    indent = indent_of(doc.lines[header]) + 2
    for line in range(header + 1, doc.content_end_line(node) + 1):
        if not is_blank(doc.lines[line]):
            indent = indent_of(doc.lines[line])
            break
    pad = " " * indent
    lines = [pad + part if part else "" for part in body.split("\n")]
    header_text = "|" + ("" if trailing else "-")
    if not reads_as(header_text + "\n" + "\n".join(lines) + "\n", value, "block"):
        return None  # e.g. a line that would end the block early: fall back to quotes
    return header_text + doc.newline + doc.newline.join(lines)


# --- InsertKey ---------------------------------------------------------------------------


def _insert_key(doc: Document, edit: InsertKey) -> list[Splice]:
    path = (*edit.map_path, edit.key)
    where = format_path(path)
    loc = doc.locate(edit.map_path)
    node = loc.node
    if not isinstance(node, MappingNode):
        what = "empty (null)" if is_empty(node) else f"a {kind(node)}"
        raise EditError(
            doc.file,
            where,
            f"cannot add a key: the parent is {what}, not a mapping",
            loc.line,
        )
    existing = doc.find_key(node, edit.key)
    if existing is not None:
        raise EditError(
            doc.file, where, "key already exists", doc.line_number(node.value[existing][0])
        )
    sibling = edit.after if edit.after is not None else edit.before
    position: int | None = None
    if sibling is not None:
        position = doc.find_key(node, sibling)
        if position is None:
            raise EditError(
                doc.file,
                where,
                f"no sibling key {sibling!r} to insert next to",
                loc.line,
            )
    try:
        value = normalize(edit.value)
        house = _house_for_map(doc, node)
        if is_flow(node):
            return _insert_into_flow_map(doc, loc, edit, value, house, position, path)
        return _insert_into_block_map(doc, loc, edit, value, house, position, path)
    except (ValueError, TypeError) as err:
        raise EditError(doc.file, where, str(err), loc.line) from err


def _insert_into_block_map(
    doc: Document,
    loc: Located,
    edit: InsertKey,
    value: YamlValue,
    house: HouseStyle,
    position: int | None,
    path: NodePath,
) -> list[Splice]:
    node = loc.node
    assert isinstance(node, MappingNode)
    first_key = node.value[0][0]
    col = doc.column_of(first_key.start_mark.index)
    new = comment_lines(edit.comment, col) + entry_lines(edit.key, value, col, house)
    blank = [""] if doc.blank_separated(node) else []
    if edit.before is not None and position is not None:
        key = node.value[position][0]
        if not doc.starts_line(key.start_mark.index):
            raise EditError(
                doc.file,
                format_path(path),
                f"cannot insert above {edit.before!r}: it shares its line with a '-'",
                doc.line_number(key),
            )
        if position > 0:
            floor = doc.entry_end_line(*node.value[position - 1])
        elif loc.key_node is not None:
            floor = doc.line_of(loc.key_node.start_mark.index)
        else:
            floor = -1
        at = doc.leading_comment_start(doc.line_of(key.start_mark.index), floor)
        return _insert_lines(doc, at, new + blank)
    index = position if position is not None else len(node.value) - 1
    at = _after_line(doc, doc.entry_end_line(*node.value[index]), col)
    return _insert_lines(doc, at, blank + new)


def _insert_into_flow_map(
    doc: Document,
    loc: Located,
    edit: InsertKey,
    value: YamlValue,
    house: HouseStyle,
    position: int | None,
    path: NodePath,
) -> list[Splice]:
    node = loc.node
    assert isinstance(node, MappingNode)
    if not node.value and _is_block_mapping_value(loc):
        # `key: {}` becomes a block mapping, laid out like the rest of the file.
        assert loc.key_node is not None
        col = doc.column_of(loc.key_node.start_mark.index) + house.map_step
        new = comment_lines(edit.comment, col) + entry_lines(edit.key, value, col, house)
        return _block_from_empty_flow(doc, loc, new, path)
    if edit.comment:
        raise EditError(
            doc.file,
            format_path(path),
            "comments cannot be added inside a flow mapping",
            loc.line,
        )
    entry = f"{_flow_key(edit.key, house)}: {flow_text(value, house)}"
    if not node.value:
        return [_replace_span(doc, node.start_mark.index + 1, node.end_mark.index - 1, entry)]
    if edit.before is not None and position is not None:
        at = node.value[position][0].start_mark.index
        return [_replace_span(doc, at, at, entry + ", ")]
    index = position if position is not None else len(node.value) - 1
    key, item = node.value[index]
    at = key.end_mark.index if is_empty(item) else item.end_mark.index
    return [_replace_span(doc, at, at, ", " + entry)]


def _flow_key(key: str, house: HouseStyle) -> str:
    return format_key(key, house.key_styles)


# --- InsertItems / AppendItems -----------------------------------------------------------


def _insert_items(
    doc: Document,
    list_path: NodePath,
    index: int | None,
    raw_items: Sequence[YamlValue],
    comment: Sequence[str],
) -> list[Splice]:
    where = format_path(list_path)
    loc = doc.locate(list_path)
    node = loc.node
    if not isinstance(node, SequenceNode):
        raise EditError(doc.file, where, "is not a sequence", loc.line)
    count = len(node.value)
    at_index = count if index is None else index
    if not 0 <= at_index <= count:
        raise EditError(
            doc.file,
            where,
            f"cannot insert at index {at_index}: the sequence has {plural(count, 'item')}",
            loc.line,
        )
    if not raw_items:
        return []
    try:
        items = [normalize(item) for item in raw_items]
        house = _house_for_seq(doc, node)
        if is_flow(node):
            return _insert_into_flow_seq(doc, loc, at_index, items, comment, house)
        return _insert_into_block_seq(doc, loc, at_index, items, comment, house)
    except (ValueError, TypeError) as err:
        raise EditError(doc.file, where, str(err), loc.line) from err


def _insert_into_flow_seq(
    doc: Document,
    loc: Located,
    index: int,
    items: list[YamlValue],
    comment: Sequence[str],
    house: HouseStyle,
) -> list[Splice]:
    node = loc.node
    assert isinstance(node, SequenceNode)
    if not node.value and _is_block_mapping_value(loc):
        # `key: []` becomes a block sequence, like the file's other lists.
        assert loc.key_node is not None
        col = doc.column_of(loc.key_node.start_mark.index) + house.seq_offset
        new = comment_lines(comment, col) + item_lines(items, col, house)
        return _block_from_empty_flow(doc, loc, new, loc.path)
    if comment:
        raise EditError(
            doc.file,
            format_path(loc.path),
            "comments cannot be added inside a flow sequence",
            loc.line,
        )
    texts = ", ".join(flow_text(item, house, item=True) for item in items)
    if not node.value:
        return [_replace_span(doc, node.start_mark.index + 1, node.end_mark.index - 1, texts)]
    if index < len(node.value):
        at = node.value[index].start_mark.index
        return [_replace_span(doc, at, at, texts + ", ")]
    at = node.value[-1].end_mark.index
    return [_replace_span(doc, at, at, ", " + texts)]


def _floor_above_item(
    doc: Document, loc: Located, node: SequenceNode, index: int, line: int
) -> int:
    """The line above which comments no longer belong to item ``index``."""
    if index > 0:
        return doc.item_end_line(node.value[index - 1])
    if loc.key_node is not None and _is_block_mapping_value(loc):
        return doc.line_of(loc.key_node.start_mark.index)
    return line - 1


def _insert_into_block_seq(
    doc: Document,
    loc: Located,
    index: int,
    items: list[YamlValue],
    comment: Sequence[str],
    house: HouseStyle,
) -> list[Splice]:
    node = loc.node
    assert isinstance(node, SequenceNode)
    dash_col = doc.column_of(node.start_mark.index)
    new = comment_lines(comment, dash_col) + item_lines(items, dash_col, house)
    if index < len(node.value):
        dash = _item_dash(doc, node.value[index], loc.path)
        if not doc.starts_line(dash):
            # Compact `- - a`: the new items take the shared line, the old first item moves
            # to its own line under them.
            if comment:
                raise EditError(
                    doc.file,
                    format_path(loc.path),
                    "cannot add a comment above the first item of a compact '- - item' sequence",
                    loc.line,
                )
            text = doc.newline.join(new)[dash_col:] + doc.newline + " " * dash_col
            return [_replace_span(doc, dash, dash, text)]
        line = doc.line_of(dash)
        floor = _floor_above_item(doc, loc, node, index, line)
        at = doc.leading_comment_start(line, floor)
    else:
        at = _after_line(doc, doc.item_end_line(node.value[-1]), dash_col)
    return _insert_lines(doc, at, new)


# --- RemoveItems -------------------------------------------------------------------------


def _remove_items(doc: Document, edit: RemoveItems) -> list[Splice]:
    where = format_path(edit.list_path)
    loc = doc.locate(edit.list_path)
    node = loc.node
    if not isinstance(node, SequenceNode):
        raise EditError(doc.file, where, "is not a sequence", loc.line)
    count = len(node.value)
    first = edit.index
    if first < 0 or first + edit.count > count:
        raise EditError(
            doc.file,
            where,
            f"cannot remove items {first}..{first + edit.count - 1}: "
            f"the sequence has {plural(count, 'item')}",
            loc.line,
        )
    last = first + edit.count - 1
    items = node.value
    if is_flow(node):
        if edit.count == count:
            start, end = node.start_mark.index + 1, node.end_mark.index - 1
        elif last + 1 < count:
            start, end = items[first].start_mark.index, items[last + 1].start_mark.index
        else:
            start, end = items[first - 1].end_mark.index, items[last].end_mark.index
        return [_replace_span(doc, start, end, "")]
    dash = _item_dash(doc, items[first], edit.list_path)
    if not doc.starts_line(dash):
        # Compact `- - a` (only the first item shares its line): splice characters.
        if edit.count < count:
            end = _item_dash(doc, items[last + 1], edit.list_path)
            return [_replace_span(doc, dash, end, "")]
        end_line = doc.item_end_line(items[last])
        end = doc.line_starts[end_line] + len(doc.lines[end_line].rstrip("\r\n"))
        return [_replace_span(doc, dash, end, "[]")]
    line = doc.line_of(dash)
    start_line = doc.leading_comment_start(line, _floor_above_item(doc, loc, node, first, line))
    dash_col = doc.column_of(dash)
    end_line = _after_line(doc, doc.item_end_line(items[last]), dash_col)
    if edit.count < count:
        return [_delete_lines(doc, start_line, end_line)]
    # Every item goes: the key keeps an empty flow sequence, `key: []`.
    if not _is_block_mapping_value(loc):
        raise EditError(
            doc.file,
            where,
            "cannot remove every item of a block sequence that is not a mapping value",
            loc.line,
        )
    assert loc.key_node is not None
    colon = _colon_after(doc, loc.key_node, edit.list_path)
    key_line = doc.line_of(colon)
    start = doc.line_starts[key_line]
    key_text = (
        doc.text[start : colon + 1] + " []" + doc.text[colon + 1 : doc.line_starts[key_line + 1]]
    )
    at_eof_without_newline = end_line == len(doc.lines) and not doc.lines[-1].endswith("\n")
    if at_eof_without_newline and start_line == key_line + 1:
        return [Splice(key_line, end_line, (key_text.rstrip("\r\n"),))]
    return [Splice(key_line, key_line + 1, (key_text,)), _delete_lines(doc, start_line, end_line)]


# --- SetComment --------------------------------------------------------------------------


def _comment_span(doc: Document, path: NodePath) -> tuple[int, int, int]:
    """(first comment line, the node's line, its column) of the ``#`` lines directly above
    the entry or block item at ``path`` (``first == line`` when there are none)."""
    where = format_path(path)
    if not path:
        raise EditError(doc.file, where, "a comment belongs to an entry or item, not the root")
    loc = doc.locate(path)
    parent = loc.parent
    assert parent is not None and loc.index is not None
    if is_flow(parent):
        raise EditError(
            doc.file,
            where,
            "comments cannot be set inside a flow collection",
            loc.line,
        )
    if isinstance(parent, MappingNode):
        assert loc.key_node is not None
        start = loc.key_node.start_mark.index
        if loc.index > 0:
            floor = doc.entry_end_line(*parent.value[loc.index - 1])
        else:
            owner = doc.locate(path[:-1])
            floor = (
                doc.line_of(owner.key_node.start_mark.index)
                if owner.key_node is not None and _is_block_mapping_value(owner)
                else doc.line_of(start) - 1
            )
    else:
        assert isinstance(parent, SequenceNode)
        start = _item_dash(doc, loc.node, path)
        owner = doc.locate(path[:-1])
        floor = _floor_above_item(doc, owner, parent, loc.index, doc.line_of(start))
    if not doc.starts_line(start):
        raise EditError(
            doc.file,
            where,
            "cannot set a comment on a node that shares its line",
            loc.line,
        )
    line = doc.line_of(start)
    return doc.leading_comment_start(line, floor), line, doc.column_of(start)


def comment_above(doc: Document, path: NodePath) -> tuple[str, ...]:
    """The ``#`` lines directly above the entry or block item at ``path``, without ``#``
    (what :class:`SetComment` would replace)."""
    first, line, _ = _comment_span(doc, path)
    return tuple(
        text.strip().removeprefix("#").removeprefix(" ").rstrip() for text in doc.lines[first:line]
    )


def _set_comment(doc: Document, edit: SetComment) -> list[Splice]:
    first, line, col = _comment_span(doc, edit.path)
    new = comment_lines(edit.comment, col)
    old = [text.rstrip("\r\n") for text in doc.lines[first:line]]
    if new == old:
        return []
    return [Splice(first, line, _terminated(doc, new, last_open=False))]

"""A recipe text with the positions of its YAML nodes, for surgical text edits.

ruamel.yaml's round-trip composer gives every node its start and end character offsets and
its style (plain / quoted / block scalar, flow / block collection). The editor never dumps
YAML: it reads positions here and splices text.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bot.memo import BoundedMemo
from bot.recipes.edit.errors import EditError
from bot.recipes.edit.paths import NodePath, format_path
from bot.recipes.edit.scalars import Style, list_family
from bot.recipes.edit.splice import split_lines

STR_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"


def is_blank(line: str) -> bool:
    return not line.strip(" \t\r\n")


def is_comment(line: str) -> bool:
    return line.lstrip(" \t").startswith("#")


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def is_empty(node: Node) -> bool:
    """An empty plain scalar (``key:`` with nothing after it): its marks point elsewhere."""
    return isinstance(node, ScalarNode) and node.start_mark.index == node.end_mark.index


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def is_flow(node: Node) -> bool:
    """A ``[...]`` / ``{...}`` collection (scalars are never flow collections)."""
    return bool(getattr(node, "flow_style", False))


def kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "mapping"
    if isinstance(node, SequenceNode):
        return "sequence"
    return "scalar"


@dataclass(frozen=True)
class Located:
    """A node found by path, with its parent collection and where it sits in it."""

    node: Node
    path: NodePath
    parent: Node | None
    key_node: ScalarNode | None  # when the parent is a mapping
    index: int | None  # position in the parent's entries / items
    line: int  # 1-based, for messages: the key's line for a mapping value


COMPOSED_TEXTS = 64  # a backtest plans the same few recipes PR after PR; the App re-syncs
_COMPOSED: BoundedMemo[str, MappingNode] = BoundedMemo(COMPOSED_TEXTS)  # text → tree, read only


class Document:
    """Text + node tree. Offsets are character offsets into ``text``; lines are 0-based."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.lines = split_lines(text)
        self.newline = "\r\n" if self.lines and self.lines[0].endswith("\r\n") else "\n"
        starts = [0]
        for line in self.lines:
            starts.append(starts[-1] + len(line))
        self.line_starts = starts
        self.root = self._compose()
        self._style_cache: dict[str, tuple[Style, ...]] = {}
        self._list_cache: dict[str, tuple[Style, ...]] | None = None
        self._indent_cache: tuple[int, int] | None = None
        self._occurrences: Counter[int] = Counter()
        self._count_occurrences(self.root)

    # --- parsing -------------------------------------------------------------------------

    def _compose(self) -> MappingNode:
        """The tree of ``text``, composed once per process while it is among the last
        :data:`COMPOSED_TEXTS`. Nothing here mutates a tree except the constructor flattening
        merge keys (``<<``), so a text with ``<<`` anywhere is composed afresh each time."""
        shared = "<<" not in self.text
        if shared:
            return _COMPOSED.get_or_make(self.text, self._compose_text)
        return self._compose_text()

    def _compose_text(self) -> MappingNode:
        try:
            root = YAML(typ="rt").compose(self.text)
        except MarkedYAMLError as err:
            mark = err.problem_mark or err.context_mark
            line = mark.line + 1 if mark is not None else None
            problem = err.problem or err.context or "syntax error"
            raise EditError(self.file, "", f"malformed YAML: {problem}", line) from err
        except YAMLError as err:
            raise EditError(self.file, "", f"malformed YAML: {err}") from err
        if not isinstance(root, MappingNode):
            raise EditError(self.file, "", "a recipe must be a YAML mapping at the top level")
        return root

    def _count_occurrences(self, node: Node) -> None:
        # An alias is the anchored node object seen again: count, and do not descend twice.
        self._occurrences[id(node)] += 1
        if self._occurrences[id(node)] > 1:
            return
        for child in self.children(node):
            self._count_occurrences(child)

    @staticmethod
    def children(node: Node) -> Iterator[Node]:
        if isinstance(node, MappingNode):
            for key, value in node.value:
                yield key
                yield value
        elif isinstance(node, SequenceNode):
            yield from node.value

    def walk(self, node: Node | None = None) -> Iterator[tuple[Node | None, Node]]:
        """(parent, node) pairs in document order, each node once."""
        seen: set[int] = set()
        stack: list[tuple[Node | None, Node]] = [(None, node or self.root)]
        while stack:
            parent, current = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            yield parent, current
            stack.extend((current, child) for child in reversed(list(self.children(current))))

    # --- positions -----------------------------------------------------------------------

    def line_of(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self.line_starts, offset) - 1)

    def column_of(self, offset: int) -> int:
        return offset - self.line_starts[self.line_of(offset)]

    def line_number(self, node: Node) -> int:
        """1-based line for messages."""
        return self.line_of(node.start_mark.index) + 1

    def content_end_line(self, node: Node) -> int:
        """The last line holding text of ``node`` (its trailing comment lines excluded)."""
        if isinstance(node, ScalarNode):
            start, end = node.start_mark.index, node.end_mark.index
            if node.style in ("|", ">"):
                header = self.text[start : self.line_starts[self.line_of(start) + 1]]
                if "+" in header.split("#", 1)[0]:  # kept trailing blank lines are content
                    return self.line_of(end - 1)
                last = self.line_of(end - 1)
                first = self.line_of(start)
                while last > first and is_blank(self.lines[last]):
                    last -= 1
                return last
            return self.line_of(max(start, end - 1))
        if is_flow(node):
            return self.line_of(node.end_mark.index - 1)
        if isinstance(node, MappingNode):
            return self.entry_end_line(*node.value[-1])
        assert isinstance(node, SequenceNode)
        return self.item_end_line(node.value[-1])

    def entry_end_line(self, key: Node, value: Node) -> int:
        """The last line of a mapping entry (``key:`` alone when its value is empty)."""
        if is_empty(value):
            return self.content_end_line(key)
        return self.content_end_line(value)

    def block_scalar_ending_at(self, line: int) -> ScalarNode | None:
        """The ``|`` / ``>`` scalar whose text ends on ``line``, if any."""
        for _, node in self.walk():
            if (
                isinstance(node, ScalarNode)
                and node.style in ("|", ">")
                and self.content_end_line(node) == line
            ):
                return node
        return None

    def item_end_line(self, item: Node) -> int:
        if is_empty(item):  # `-` alone: an empty scalar's marks sit right after the dash
            return self.line_of(item.start_mark.index)
        return self.content_end_line(item)

    def leading_comment_start(self, line: int, floor: int) -> int:
        """Start of the run of comment lines directly above ``line`` (not above ``floor``)."""
        while line - 1 > floor and is_comment(self.lines[line - 1]):
            line -= 1
        return line

    def starts_line(self, offset: int) -> bool:
        """Whether only indentation precedes ``offset`` on its line."""
        start = self.line_starts[self.line_of(offset)]
        return not self.text[start:offset].strip(" ")

    # --- path resolution -----------------------------------------------------------------

    def locate(self, path: NodePath, *, for_edit: str = "edit") -> Located:
        """Find the node at ``path``; refuse paths through aliases, anchors or merge keys."""
        node: Node = self.root
        parent: Node | None = None
        key_node: ScalarNode | None = None
        index: int | None = None
        line = self.line_number(node)
        for depth, part in enumerate(path):
            self._refuse_shared(node, path[:depth], line)
            here = format_path(path[: depth + 1])
            if isinstance(node, MappingNode) and isinstance(part, str):
                found = self.find_key(node, part)
                if found is None:
                    raise EditError(self.file, here, f"no key {part!r} in this mapping", line)
                parent, index = node, found
                key_node, node = node.value[found]
                line = self.line_number(key_node)
            elif isinstance(node, SequenceNode) and isinstance(part, int):
                count = len(node.value)
                if not -count <= part < count:
                    raise EditError(
                        self.file,
                        here,
                        f"index {part} is out of range (the sequence has {plural(count, 'item')})",
                        line,
                    )
                parent, index, key_node = node, part % count, None
                node = node.value[index]
                line = self.line_number(node)
            else:
                wanted = "a mapping key" if isinstance(part, str) else "a sequence index"
                raise EditError(
                    self.file,
                    here,
                    f"path goes through a {kind(node)} where {wanted} was expected",
                    line,
                )
        self._refuse_shared(node, path, line)
        return Located(node, path, parent, key_node, index, line)

    def find_key(self, node: MappingNode, key: str) -> int | None:
        for position, (key_node, _) in enumerate(node.value):
            if isinstance(key_node, ScalarNode) and key_node.value == key:
                return position
        return None

    def _refuse_shared(self, node: Node, path: NodePath, line: int) -> None:
        where = format_path(path)
        if self._occurrences[id(node)] > 1 or getattr(node, "anchor", None):
            name = getattr(node, "anchor", None) or "?"
            raise EditError(
                self.file,
                where,
                f"refusing to edit through the anchor/alias '{name}' (it is shared); "
                "edit the recipe by hand",
                line,
            )
        if isinstance(node, MappingNode) and any(k.tag == MERGE_TAG for k, _ in node.value):
            raise EditError(
                self.file,
                where,
                "refusing to edit a mapping with a '<<' merge key",
                line,
            )

    # --- house style ---------------------------------------------------------------------

    def scalar_styles(self, nodes: list[Node]) -> tuple[Style, ...]:
        """String scalar styles among ``nodes``, most common first (ties: first seen)."""
        counts: Counter[Style] = Counter()
        for node in nodes:
            if (
                isinstance(node, ScalarNode)
                and node.tag == STR_TAG
                and node.style in (None, '"', "'")
            ):
                counts[node.style or ""] += 1
        return tuple(style for style, _ in counts.most_common())

    def document_styles(self, where: str) -> tuple[Style, ...]:
        """String styles of block-sequence items (``where='item'``) or mapping values."""
        if where not in self._style_cache:
            self._style_cache[where] = self._document_styles(where)
        return self._style_cache[where]

    def item_styles_by_list(self) -> dict[str, tuple[Style, ...]]:
        """String styles of the items of the file's block lists, per list family
        (:func:`list_family` of the list's key), most common first: a recipe that quotes its
        args but not its feature names writes a new args list quoted."""
        if self._list_cache is None:
            groups: dict[str, list[Node]] = {}  # family → the items of its lists
            for _, node in self.walk():
                if not isinstance(node, MappingNode) or is_flow(node):
                    continue
                for key, value in node.value:
                    if isinstance(value, SequenceNode) and not is_flow(value):
                        family = list_family(str(key.value))
                        groups.setdefault(family, []).extend(value.value)
            self._list_cache = {
                family: self.scalar_styles(items) for family, items in groups.items()
            }
        return self._list_cache

    def _document_styles(self, where: str) -> tuple[Style, ...]:
        nodes: list[Node] = []
        for _, node in self.walk():
            if isinstance(node, ScalarNode) or is_flow(node):
                continue
            if where == "item" and isinstance(node, SequenceNode):
                nodes.extend(node.value)
            elif where == "value" and isinstance(node, MappingNode):
                nodes.extend(value for _, value in node.value)
        return self.scalar_styles(nodes)

    def indent_steps(self) -> tuple[int, int]:
        """(mapping indent step, sequence offset under a key), the most common in the file."""
        if self._indent_cache is None:
            self._indent_cache = self._indent_steps()
        return self._indent_cache

    def _indent_steps(self) -> tuple[int, int]:
        map_steps: Counter[int] = Counter()
        seq_offsets: Counter[int] = Counter()
        for _, node in self.walk():
            if not isinstance(node, MappingNode) or is_flow(node):
                continue
            for key, value in node.value:
                if getattr(value, "flow_style", True) or getattr(value, "anchor", None):
                    continue
                if not isinstance(value, MappingNode | SequenceNode) or not value.value:
                    continue
                key_col = self.column_of(key.start_mark.index)
                if isinstance(value, MappingNode):
                    child = value.value[0][0]
                    map_steps[self.column_of(child.start_mark.index) - key_col] += 1
                else:
                    seq_offsets[self.column_of(value.start_mark.index) - key_col] += 1
        map_step = map_steps.most_common(1)[0][0] if map_steps else 2
        seq_offset = seq_offsets.most_common(1)[0][0] if seq_offsets else 2
        return max(map_step, 1), max(seq_offset, 0)

    def blank_separated(self, node: MappingNode) -> bool:
        """Whether every pair of consecutive entries has a blank line between them."""
        if len(node.value) < 2 or is_flow(node):
            return False
        for (prev_key, prev), (key, _) in itertools.pairwise(node.value):
            gap = range(self.entry_end_line(prev_key, prev) + 1, self.line_of(key.start_mark.index))
            if not any(is_blank(self.lines[line]) for line in gap):
                return False
        return True

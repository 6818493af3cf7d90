"""tree-sitter-bash parsing, memoised per file, with the indexes the evaluator needs.

The concrete syntax tree gives statement structure (commands, lists, if/case/loops, functions,
heredocs). Words are expanded from their source text by :mod:`bot.shell.words`, which asks this
module where a ``${…}``, ``$(…)`` or ``$((…))`` that starts at a byte offset ends, so the two
never disagree about nesting.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from bot.errors import InputError
from bot.shell.budget import Limits
from bot.shell.errors import BudgetExceeded, ExtractionError
from bot.sources import FileSource, RecordingSource, git_blob_sha

_LANGUAGE = Language(tree_sitter_bash.language())

# Node types whose end the word scanner takes from the tree.
_NEWLINE = re.compile(b"\n")
_SPAN_TYPES = frozenset(
    {"expansion", "command_substitution", "arithmetic_expansion", "process_substitution"}
)


@dataclass(eq=False)
class ParsedFile:
    """One parsed script (or a fragment of one: an ``eval`` string, a substitution)."""

    display: str  # the repository path shown in spans
    data: bytes
    tree: Tree
    line_base: int = 0  # added to tree-sitter rows (fragments of a larger file)
    blob_sha: str = ""
    ends: dict[int, int] = field(default_factory=dict)
    substitutions: dict[int, Node] = field(default_factory=dict)
    memo: dict[object, object] = field(default_factory=dict)  # analyses of this file
    _newlines: list[int] = field(default_factory=list)

    @property
    def root(self) -> Node:
        return self.tree.root_node

    def line_of(self, offset: int) -> int:
        """1-based line of a byte offset."""
        return bisect.bisect_right(self._newlines, offset - 1) + 1 + self.line_base

    def node_line(self, node: Node) -> int:
        return node.start_point[0] + 1 + self.line_base

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def slice(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")


def _index(parsed: ParsedFile) -> None:
    """Record expansion ends and substitution nodes; iterative (deep trees stay safe)."""
    stack = [parsed.root]
    count = 0
    while stack:
        node = stack.pop()
        count += 1
        if node.type in _SPAN_TYPES:
            parsed.ends[node.start_byte] = node.end_byte
            if node.type == "command_substitution":
                parsed.substitutions[node.start_byte] = node
        stack.extend(node.children)
    parsed._newlines = [match.start() for match in _NEWLINE.finditer(parsed.data)]
    if count > 50 * max(len(parsed.data), 1) + 1000:  # defensive; never seen
        raise BudgetExceeded(parsed.display, None, "syntax tree unreasonably large")


class ScriptParser:
    """Parses files of a repository once each (memoised by path and blob SHA) and fragments."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._parser = Parser(_LANGUAGE)
        self._files: dict[str, ParsedFile] = {}
        self._fragments: dict[tuple[str, int, bytes], ParsedFile] = {}
        self.hits = 0
        self.misses = 0

    def parse_bytes(self, data: bytes, display: str, line_base: int = 0) -> ParsedFile:
        if len(data) > self.limits.max_file_bytes:
            raise BudgetExceeded(
                display, None, f"script larger than {self.limits.max_file_bytes} bytes"
            )
        tree = self._parser.parse(data)
        parsed = ParsedFile(display, data, tree, line_base, git_blob_sha(data))
        _index(parsed)
        return parsed

    def parse_file(self, source: FileSource, path: str) -> ParsedFile:
        """The parse of ``path`` in ``source``; a second call for the same path is a cache hit."""
        if isinstance(source, RecordingSource):
            source.note(path)  # a memoised parse is still a read of the file
        cached = self._files.get(path)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        try:
            data = source.read_bytes(path)
        except InputError as err:  # missing, too large, outside the repository
            raise ExtractionError(path, None, err.reason) from err
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ExtractionError(path, None, "script is not UTF-8") from err
        parsed = self.parse_bytes(data, path)
        self._files[path] = parsed
        return parsed

    def parse_fragment(self, text: str, display: str, line: int) -> ParsedFile:
        """Parse shell text found inside a value (``eval``, ``bash -c``) as if at ``line``."""
        data = text.encode("utf-8")
        key = (display, line, data)
        cached = self._fragments.get(key)
        if cached is not None:
            return cached
        parsed = self.parse_bytes(data, display, line - 1)
        if len(self._fragments) < 4096:
            self._fragments[key] = parsed
        return parsed


def named_children(node: Node) -> list[Node]:
    return [child for child in node.children if child.is_named]


def first_token(node: Node) -> str:
    return node.children[0].type if node.children else ""


def short_text(text: str, limit: int = 80) -> str:
    """One line, at most ``limit`` characters (for explanations)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def nodes_text(nodes: Sequence[Node], pf: ParsedFile) -> str:
    """The text of the named ``nodes``, space separated."""
    return " ".join(pf.text(n) for n in nodes if n.is_named)

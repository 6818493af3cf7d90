"""The recipe's ``guide:`` (Markdown in a YAML literal block scalar): read it, find the
copy-paste ``vllm serve`` commands in it, and replace or insert one managed block.

Pure. Everything works on whole lines of the recipe text: the block scalar's content lines map
one to one onto the guide's Markdown lines (minus the block indentation), so a splice of
Markdown lines is a splice of file lines, and every byte outside the spliced lines stays as it
was. :func:`splice_guide` re-parses the result and checks that the data is the original data
with only ``guide`` changed, to the expected string.

A managed block is the Markdown between ``<!-- recipe-sync:<kind> <id> -->`` and
``<!-- /recipe-sync -->`` (HTML comments: CommonMark passes them through as HTML blocks, the
site does not render them). Everything else in the guide is hand-written and is only ever
replaced when the caller says so (policy ``guide_sections: adopt``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt

from bot.errors import InputError, Location
from bot.yamlio.yaml12 import load_yaml

GUIDE_KEY = "guide"
MARK_OPEN = "<!-- recipe-sync:{kind} {id} -->"
MARK_CLOSE = "<!-- /recipe-sync -->"
_OPEN_RE = re.compile(r"^<!-- recipe-sync:([a-z-]+) (\S+) -->\s*$")
_CLOSE_RE = re.compile(r"^<!-- /recipe-sync -->\s*$")
# `guide: |`, `guide: |-`, `guide: |+2` … (a folded `>` guide is not line-mapped: not edited)
_HEADER_RE = re.compile(r"^guide:[ \t]*\|([0-9]?)([-+]?)([0-9]?)[ \t]*(#.*)?$")
_SHELL_INFO = frozenset({"", "bash", "sh", "shell", "console", "zsh"})
_EXPORT_RE = re.compile(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_ASSIGN_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


class GuideError(InputError):
    """The guide cannot be located or edited safely (one line naming file and line)."""


# ------------------------------------------------------------------------------ the block


@dataclass(frozen=True)
class GuideBlock:
    """Where the guide sits in the recipe text (0-based line indices of ``text_lines``)."""

    header: int  # the ``guide: |`` line
    start: int  # first content line
    end: int  # one past the last non-blank content line
    indent: str
    chomp: str  # "" (clip) | "-" (strip) | "+" (keep)
    lines: tuple[str, ...]  # the Markdown lines (content without indentation or newline)

    @property
    def markdown(self) -> str:
        return "".join(line + "\n" for line in self.lines)

    def file_line(self, md_line: int) -> int:
        """1-based line in the recipe file of a 0-based Markdown line."""
        return self.start + md_line + 1


def _split_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _strip_newline(line: str) -> str:
    return line.rstrip("\r\n")


def locate_guide(text: str, file: str = "<recipe>") -> GuideBlock | None:
    """The top-level ``guide: |`` block, or None when the recipe has none. A guide the line
    mapping cannot represent (folded, flow or quoted) raises :class:`GuideError`."""
    lines = _split_lines(text)
    header = None
    for index, line in enumerate(lines):
        if line.startswith(f"{GUIDE_KEY}:"):
            header = index
            break
    if header is None:
        return None
    match = _HEADER_RE.match(_strip_newline(lines[header]))
    if match is None:
        raise GuideError(
            Location(file, line=header + 1),
            "guide is not a literal block scalar (`guide: |`); recipe-sync edits only those",
        )
    explicit = match.group(1) or match.group(3)
    chomp = match.group(2)
    start = header + 1
    indent: str | None = " " * int(explicit) if explicit else None
    end = start
    index = start
    while index < len(lines):
        raw = _strip_newline(lines[index])
        if raw.strip() == "":
            index += 1
            continue
        width = len(raw) - len(raw.lstrip(" "))
        if indent is None:
            if width == 0:
                break
            indent = " " * width
        if width < len(indent):
            break
        index += 1
        end = index
    if indent is None:
        indent = "  "
    content = tuple(_strip_newline(line)[len(indent) :] for line in lines[start:end])
    return GuideBlock(header, start, end, indent, chomp, content)


# ------------------------------------------------------------------------------ Markdown


@dataclass(frozen=True)
class Heading:
    line: int  # 0-based Markdown line
    level: int
    title: str


@dataclass(frozen=True)
class Fence:
    start: int  # the opening fence line
    end: int  # one past the closing fence line
    info: str
    body: str


@dataclass(frozen=True)
class Managed:
    kind: str
    id: str
    start: int  # the opening marker line
    end: int  # one past the closing marker line


@dataclass(frozen=True)
class GuideCommand:
    """One copy-paste ``vllm serve`` command of the guide."""

    heading: Heading | None  # the nearest heading above it
    headings: tuple[Heading, ...]  # the heading path (outermost first)
    fence: Fence
    argv: tuple[str, ...]  # ("vllm", "serve", model, ...), shell words of the command
    env: Mapping[str, str]  # `export`s and `VAR=value` prefixes seen before it in its section
    line: int  # 0-based Markdown line of the `vllm serve`
    managed: Managed | None  # the managed block it sits in, if any
    placeholders: tuple[str, ...] = field(default=())  # flags whose value is `$VAR`

    @property
    def model(self) -> str:
        return self.argv[2] if len(self.argv) > 2 else ""

    def context(self) -> str:
        """The heading path as one string (for matching hardware / variant names)."""
        return " / ".join(h.title for h in self.headings)


_MD = MarkdownIt("commonmark")


def parse_markdown(markdown: str) -> list[Any]:
    """CommonMark tokens (markdown-it-py); the parser never fails, it is the validity model."""
    return list(_MD.parse(markdown))


def headings(markdown: str) -> list[Heading]:
    tokens = parse_markdown(markdown)
    out: list[Heading] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            title = tokens[i + 1].content if i + 1 < len(tokens) else ""
            out.append(Heading(token.map[0], int(token.tag[1:]), title.strip()))
    return out


def fences(markdown: str) -> list[Fence]:
    out: list[Fence] = []
    for token in parse_markdown(markdown):
        if token.type == "fence" and token.map is not None:
            out.append(Fence(token.map[0], token.map[1], token.info.strip(), token.content))
    return out


def managed_blocks(lines: Sequence[str]) -> list[Managed]:
    """Managed blocks by their markers (outside fences; an unclosed marker is ignored)."""
    out: list[Managed] = []
    open_: tuple[str, str, int] | None = None
    for index, line in enumerate(lines):
        opened = _OPEN_RE.match(line)
        if opened is not None and open_ is None:
            open_ = (opened.group(1), opened.group(2), index)
        elif _CLOSE_RE.match(line) and open_ is not None:
            out.append(Managed(open_[0], open_[1], open_[2], index + 1))
            open_ = None
    return out


def unbalanced_fences(markdown: str) -> bool:
    """True when a fence runs to the end of the document (an unclosed ``` swallows the rest)."""
    lines = markdown.splitlines()
    for fence in fences(markdown):
        closing = lines[fence.end - 1].strip() if fence.end - 1 < len(lines) else ""
        if fence.end - fence.start < 2 or not re.match(r"^(`{3,}|~{3,})\s*$", closing):
            return True
    return False


def _commands(body: str) -> list[tuple[int, str]]:
    """Logical shell lines of a fence body (backslash continuations joined, comments out),
    each with its 0-based first line in the body."""
    out: list[tuple[int, str]] = []
    current: list[str] = []
    first = 0
    for index, raw in enumerate(body.splitlines()):
        line = raw.rstrip()
        if not current:
            first = index
            if line.lstrip().startswith("#") or not line.strip():
                continue
        if line.endswith("\\"):
            current.append(line[:-1])
            continue
        current.append(line)
        out.append((first, " ".join(part.strip() for part in current)))
        current = []
    if current:
        out.append((first, " ".join(part.strip() for part in current)))
    return out


def _words(command: str) -> list[str] | None:
    try:
        return shlex.split(command, comments=True, posix=True)
    except ValueError:
        return None


def serve_commands(markdown: str) -> list[GuideCommand]:
    """Every ``vllm serve <model>`` in a shell fence, with the ``export``s (and ``VAR=value``
    prefixes) before it in the same section and the heading path above it."""
    lines = markdown.splitlines()
    heads = headings(markdown)
    blocks = managed_blocks(lines)
    out: list[GuideCommand] = []
    env_by_section: dict[int, dict[str, str]] = {}
    for fence in fences(markdown):
        if fence.info.split(" ")[0].lower() not in _SHELL_INFO:
            continue
        above = [h for h in heads if h.line < fence.start]
        section = above[-1].line if above else -1
        env = env_by_section.setdefault(section, {})
        for offset, command in _commands(fence.body):
            exported = _EXPORT_RE.match(command)
            if exported is not None:
                words = _words(exported.group(2))
                env[exported.group(1)] = words[0] if words else ""
                continue
            words = _words(command)
            if not words:
                continue
            prefix: dict[str, str] = {}
            while words and _ASSIGN_RE.match(words[0]):
                name, value = words[0].split("=", 1)
                prefix[name] = value
                words = words[1:]
            if len(words) < 3 or words[0] != "vllm" or words[1] != "serve":
                if prefix and not words:
                    env.update(prefix)  # a line of bare assignments, as the seed PR prints
                continue
            line = fence.start + 1 + offset
            path = _heading_path(above)
            managed = next((b for b in blocks if b.start <= line < b.end), None)
            holes = tuple(words[i - 1] for i in range(3, len(words)) if "$" in words[i] and i > 0)
            out.append(
                GuideCommand(
                    heading=above[-1] if above else None,
                    headings=tuple(path),
                    fence=fence,
                    argv=tuple(words),
                    env={**env, **prefix},
                    line=line,
                    managed=managed,
                    placeholders=holes,
                )
            )
    return out


def _heading_path(above: Sequence[Heading]) -> list[Heading]:
    path: list[Heading] = []
    for heading in above:
        while path and path[-1].level >= heading.level:
            path.pop()
        path.append(heading)
    return path


def section_end(markdown_lines: Sequence[str], heads: Sequence[Heading], heading: Heading) -> int:
    """One past the last line of ``heading``'s section (its subsections included)."""
    for other in heads:
        if other.line > heading.line and other.level <= heading.level:
            return other.line
    return len(markdown_lines)


# ------------------------------------------------------------------------------ editing


@dataclass(frozen=True)
class GuideEdit:
    """The result of :func:`place_block`: the new guide text and what happened."""

    text: str  # the whole recipe text after the edit
    action: str  # "inserted" | "updated" | "adopted" | "unchanged"
    where: str  # human: "after ### MI355X", "before ## Troubleshooting", "at the end"
    markdown_line: int  # 0-based Markdown line where the block starts


def block_lines(kind: str, block_id: str, body: Sequence[str]) -> list[str]:
    return [MARK_OPEN.format(kind=kind, id=block_id), "", *body, "", MARK_CLOSE]


def place_block(
    text: str,
    kind: str,
    block_id: str,
    body: Sequence[str],
    *,
    after: Sequence[str] = (),
    replace_lines: tuple[int, int] | None = None,
    file: str = "<recipe>",
) -> GuideEdit:
    """Put the managed block ``(kind, block_id)`` with Markdown ``body`` into the guide.

    An existing block with that id is replaced in place. Else ``replace_lines`` (a hand-written
    section being adopted, Markdown lines [a, b)) is replaced. Else it is inserted after the
    section whose heading path names all of ``after`` (case-insensitive; the deepest such
    section), else before ``## Troubleshooting``, else at the end of the guide.
    """
    guide = locate_guide(text, file)
    if guide is None:
        raise GuideError(Location(file), "the recipe has no guide to put the section in")
    md = list(guide.lines)
    new_block = block_lines(kind, block_id, body)
    existing = next((b for b in managed_blocks(md) if b.kind == kind and b.id == block_id), None)
    heads = headings(guide.markdown)
    if existing is not None:
        a, b = existing.start, existing.end
        action, where = "updated", "in place"
        if md[a:b] == new_block:
            return GuideEdit(text, "unchanged", where, a)
        replacement = new_block
    elif replace_lines is not None:
        a, b = replace_lines
        action, where = "adopted", f"in place of Markdown lines {a + 1}-{b}"
        replacement = [*new_block, ""] if b < len(md) and md[b - 1].strip() == "" else new_block
    else:
        a, where, _ = insertion_point(md, heads, after)
        b = a
        action = "inserted"
        replacement = list(new_block)
        if a > 0 and md[a - 1].strip() != "":
            replacement.insert(0, "")
        if a < len(md) and md[a].strip() != "":
            replacement.append("")
    out = splice_guide(text, guide, a, b, replacement, file)
    return GuideEdit(out, action, where, a)


def insertion_point(
    md: Sequence[str], heads: Sequence[Heading], after: Sequence[str]
) -> tuple[int, str, int | None]:
    """(Markdown line, where in words, level of the section it follows or None)."""
    wanted = [w.lower() for w in after if w]
    if wanted:
        best: Heading | None = None
        path: list[Heading] = []
        for heading in heads:
            while path and path[-1].level >= heading.level:
                path.pop()
            path.append(heading)
            joined = " / ".join(h.title.lower() for h in path)
            if all(w in joined for w in wanted) and (best is None or heading.level >= best.level):
                best = heading
        if best is not None:
            end = section_end(md, heads, best)
            while end > best.line + 1 and md[end - 1].strip() == "":
                end -= 1
            return end, f"after the section “{'#' * best.level} {best.title}”", best.level
    for heading in heads:
        if heading.level == 2 and heading.title.lower().startswith("troubleshoot"):
            line = heading.line
            while line > 0 and md[line - 1].strip() == "":
                line -= 1
            return line, f"before “## {heading.title}”", None
    end = len(md)
    while end > 0 and md[end - 1].strip() == "":
        end -= 1
    return end, "at the end of the guide", None


def splice_guide(
    text: str,
    guide: GuideBlock,
    a: int,
    b: int,
    replacement: Sequence[str],
    file: str = "<recipe>",
) -> str:
    """Replace Markdown lines [a, b) of ``guide`` with ``replacement``; verified by re-parse."""
    lines = _split_lines(text)
    newline = "\r\n" if lines[guide.header].endswith("\r\n") else "\n"
    raw = [(guide.indent + line if line.strip() else "") + newline for line in replacement]
    cut = guide.start + b
    if cut == len(lines) and lines and not lines[-1].endswith("\n") and raw:
        # the guide's last line ends the file without a newline: so does the new last line
        if a < b:
            raw[-1] = raw[-1].rstrip("\r\n")
        else:
            lines = [*lines[:-1], lines[-1] + newline]
            raw[-1] = raw[-1].rstrip("\r\n")
    out_lines = lines[: guide.start + a] + raw + lines[guide.start + b :]
    out = "".join(out_lines)
    expected_md = [*guide.lines[:a], *replacement, *guide.lines[b:]]
    _verify(text, out, expected_md, guide.chomp, file)
    return out


def _chomped(lines: Sequence[str], chomp: str, trailing: str) -> str:
    body = "".join(line + "\n" for line in lines)
    if chomp == "-":
        return body.rstrip("\n")
    if chomp == "+":
        return body + trailing
    return body.rstrip("\n") + "\n" if body else ""


def _verify(before: str, after: str, expected_md: Sequence[str], chomp: str, file: str) -> None:
    old = load_yaml(before, file)
    new = load_yaml(after, file)
    if not isinstance(old, dict) or not isinstance(new, dict):
        raise GuideError(Location(file), "the recipe is not a mapping")
    old_rest = {k: v for k, v in old.items() if k != GUIDE_KEY}
    new_rest = {k: v for k, v in new.items() if k != GUIDE_KEY}
    if old_rest != new_rest or list(old) != list(new):
        raise GuideError(Location(file), "editing the guide changed other keys; nothing written")
    old_guide = str(old.get(GUIDE_KEY) or "")
    trailing = old_guide[len(old_guide.rstrip("\n")) :][1:] if chomp == "+" else ""
    if str(new.get(GUIDE_KEY)) != _chomped(expected_md, chomp, trailing):
        raise GuideError(
            Location(file), "the edited guide does not parse back to the expected Markdown"
        )


def env_prefix(env: Mapping[str, str]) -> list[str]:
    """``export NAME=value`` lines, shell-quoted when needed."""
    return [f"export {name}={shlex.quote(value)}" for name, value in env.items()]

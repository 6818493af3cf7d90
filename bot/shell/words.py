"""Word expansion: quoting, parameter/arithmetic/command substitution.

Words are expanded from their source bytes (tree-sitter only tells where a word and each
nested ``${…}``/``$(…)``/``$((…))`` starts and ends). Expansion yields the segments of
:mod:`bot.shell.fields`, which then splits them into fields; brace expansion and bracket
matching over the bytes are in :mod:`bot.shell.wordscan`.
"""

from __future__ import annotations

from tree_sitter import Node

from bot.placeholders import placeholder
from bot.shell import patterns
from bot.shell.escapes import decode_ansi_c
from bot.shell.expansion_host import ExpansionError as ExpansionError
from bot.shell.expansion_host import ExpansionHost
from bot.shell.expansion_host import VarView as VarView
from bot.shell.fields import (
    BREAK,
    Field,
    Piece,
    Seg,
    _Break,
    join_pieces,
    pattern_of,
    split_fields,
    utf8_len,
)
from bot.shell.parse import ParsedFile
from bot.shell.result import SourceSpan, Unresolved
from bot.shell.text import EMPTY, EMPTY_TAINTS, Run, Text, opaque
from bot.shell.wordscan import (
    DIGITS,
    NAME_CHARS,
    NAME_START,
    SPECIAL_PARAMS,
    brace_variants,
    find_close,
    name_end,
    offset_end,
    pattern_end,
    plain_word,
)


class Expander:
    """Word expansion over source bytes; the :class:`ExpansionHost` supplies variables and
    substitutions (composition: the interpreter hands itself in, nothing is inherited)."""

    def __init__(self, host: ExpansionHost) -> None:
        self.host = host

    # --- public entry points ------------------------------------------------------------------

    def span_at(self, pf: ParsedFile, offset: int) -> SourceSpan:
        return SourceSpan(pf.display, pf.line_of(offset))

    def node_pieces(self, pf: ParsedFile, node: Node) -> list[Piece]:
        return self.scan(pf, node.start_byte, node.end_byte)

    def fields(self, pf: ParsedFile, node: Node) -> list[Field]:
        return self.fields_and_taints(pf, node)[0]

    def fields_and_taints(
        self, pf: ParsedFile, node: Node
    ) -> tuple[list[Field], frozenset[Unresolved]]:
        """The word's fields, and every uncertainty met while expanding it (even one that
        left no field behind, like an unknown array that expanded to nothing)."""
        # a plain word's field (wordscan.plain_word) is the same at every evaluation; False:
        # the word was looked at once and is not plain
        key = ("plain word", node.start_byte, node.end_byte)
        kept = pf.memo.get(key)
        if isinstance(kept, Field):
            self.host.tick(pf, node.start_byte)  # the step the scan would count
            return [Field(kept.text, kept.glob)], EMPTY_TAINTS
        variants = brace_variants(pf, node.start_byte, node.end_byte)
        if variants is None:
            pieces = self.node_pieces(pf, node)
        else:
            pieces = []
            for index, variant in enumerate(variants):
                if index:
                    pieces.append(BREAK)
                for part in variant:
                    if isinstance(part, str):
                        pieces.append(
                            self._lit(pf, node.start_byte, part, quoted=False, split=False)
                        )
                    else:
                        self._scan(pf, part[0], part[1], pieces, dq=False, heredoc=False,
                                   operand=False)  # fmt: skip
        taints: set[Unresolved] = set()
        for piece in pieces:
            if isinstance(piece, Seg):
                taints |= piece.text.taints
        fields = split_fields(pieces, self.host.ifs())
        if kept is None:  # the byte test once per word, not at every evaluation
            plain = len(fields) == 1 and not taints
            plain = plain and plain_word(pf.data, node.start_byte, node.end_byte)
            pf.memo[key] = Field(fields[0].text, fields[0].glob) if plain else False
        return fields, frozenset(taints)

    def string(self, pf: ParsedFile, node: Node) -> Text:
        """Expand without splitting (assignment values, redirection targets, case subjects)."""
        return join_pieces(self.node_pieces(pf, node))

    def pattern(self, pf: ParsedFile, node: Node) -> tuple[str, frozenset[Unresolved]]:
        return pattern_of(self.node_pieces(pf, node))

    def heredoc(self, pf: ParsedFile, start: int, end: int) -> Text:
        return join_pieces(self.heredoc_pieces(pf, start, end), "")

    def heredoc_pieces(self, pf: ParsedFile, start: int, end: int) -> list[Piece]:
        """Expanded like a here-document body (also ``((…))`` operands): quotes are literal."""
        out: list[Piece] = []
        self._scan(pf, start, end, out, dq=True, heredoc=True, operand=False)
        return out

    # --- scanner ------------------------------------------------------------------------------

    def scan(self, pf: ParsedFile, start: int, end: int, *, operand: bool = False) -> list[Piece]:
        out: list[Piece] = []
        self._scan(pf, start, end, out, dq=False, heredoc=False, operand=operand)
        return out

    def _lit(self, pf: ParsedFile, offset: int, s: str, *, quoted: bool, split: bool) -> Seg:
        return Seg(Text.lit(s, self.span_at(pf, offset)), quoted, split)

    def _scan(
        self,
        pf: ParsedFile,
        i: int,
        end: int,
        out: list[Piece],
        *,
        dq: bool,
        heredoc: bool,
        operand: bool,
    ) -> int:
        """Expand bytes [i, end) into ``out``; in a double-quoted string stop after the quote."""
        data = pf.data
        split_lit = operand and not dq  # literal text of an unquoted ${x:-word} result splits
        word_start = i
        self.host.tick(pf, i)
        while i < end:
            c = data[i]
            if c == 0x5C:  # backslash
                if i + 1 >= end:
                    out.append(self._lit(pf, i, "\\", quoted=dq, split=split_lit))
                    i += 1
                    continue
                nxt = data[i + 1]
                if nxt == 0x0A:
                    i += 2  # line continuation
                    continue
                width = utf8_len(nxt)
                char = data[i + 1 : i + 1 + width].decode("utf-8", "replace")
                if dq and char not in ("$", "`", "\\") and (heredoc or char != '"'):
                    out.append(self._lit(pf, i, "\\" + char, quoted=True, split=False))
                else:
                    out.append(self._lit(pf, i, char, quoted=True, split=False))
                i += 1 + width
            elif c == 0x27 and not dq:  # single quote
                close = data.find(b"'", i + 1, end)
                close = end if close == -1 else close
                out.append(self._lit(pf, i, pf.slice(i + 1, close), quoted=True, split=False))
                i = close + 1
            elif c == 0x22 and not heredoc:  # double quote
                if dq:
                    return i + 1
                inner: list[Piece] = []
                i = self._scan(pf, i + 1, end, inner, dq=True, heredoc=False, operand=operand)
                content = [p for p in inner if not (isinstance(p, Seg) and p.void)]
                out.extend(content)
                only_void = len(content) < len(inner) and not any(
                    isinstance(p, _Break) or p.text.s for p in content
                )
                if not only_void:
                    out.append(Seg(EMPTY, True, False))  # "" is a word even when empty
                else:  # "${A[@]}" of no elements: no word, but keep what made it uncertain
                    lost = frozenset().union(
                        *(p.text.taints for p in inner if isinstance(p, Seg) and p.void)
                    )
                    if lost:
                        out.append(Seg(Text.lit("", None, lost), False, False))
            elif c == 0x24:  # dollar
                i = self._dollar(pf, i, end, out, dq=dq, heredoc=heredoc, operand=operand)
            elif c == 0x60:  # backquote
                node = pf.substitutions.get(i)
                if node is not None:
                    stop = node.end_byte
                    text = self.host.substitute(pf, node, 0, 0)
                else:
                    close = i + 1
                    while close < end and data[close] != 0x60:
                        close += 2 if data[close] == 0x5C else 1
                    stop = min(close + 1, end)
                    text = self.host.substitute(pf, None, i + 1, min(close, end))
                out.append(Seg(text, dq, not dq))
                i = stop
            elif (
                c in (0x3C, 0x3E)
                and not dq
                and i + 1 < end
                and data[i + 1] == 0x28
                and i in pf.ends
            ):
                stop = pf.ends[i]
                span = self.span_at(pf, i)
                item = Unresolved(
                    f"`{pf.slice(i, stop)[:60]}`",
                    "process substitution is not evaluated (it names a pipe at run time)",
                    span.file,
                    span.line,
                )
                out.append(
                    Seg(opaque("process-substitution", "command-output", item), False, False)
                )
                i = stop
            elif c == 0x7E and not dq and i == word_start and not operand:  # tilde
                j = i + 1
                while j < end and data[j] not in b"/:":
                    j += 1
                if j == i + 1:
                    out.append(Seg(self.host.home(self.span_at(pf, i)), True, False))
                else:
                    out.append(self._lit(pf, i, pf.slice(i, j), quoted=False, split=False))
                i = j
            else:
                j = i + 1
                stops = b"\\$`" if heredoc else b'\\"$`' if dq else b"\\'\"$`"
                while j < end and data[j] not in stops:
                    j += 1
                out.append(self._lit(pf, i, pf.slice(i, j), quoted=dq, split=split_lit))
                i = j
        return i

    def _dollar(
        self,
        pf: ParsedFile,
        i: int,
        end: int,
        out: list[Piece],
        *,
        dq: bool,
        heredoc: bool,
        operand: bool,
    ) -> int:
        data = pf.data
        nxt = data[i + 1] if i + 1 < end else -1
        span = self.span_at(pf, i)
        if nxt == 0x28:  # $( or $((
            node = pf.substitutions.get(i)
            if node is not None:
                out.append(Seg(self.host.substitute(pf, node, 0, 0), dq, not dq))
                return node.end_byte
            if i + 2 < end and data[i + 2] == 0x28:
                stop = pf.ends.get(i) or find_close(pf, i + 1, end, 0x28, 0x29)
                inner_end = stop - 2 if data[stop - 2 : stop] == b"))" else stop - 1
                expr_pieces: list[Piece] = []
                self._scan(pf, i + 3, inner_end, expr_pieces, dq=True, heredoc=True, operand=False)
                expr = join_pieces(expr_pieces, " ")
                expr = Text(Run(r.s.replace('"', ""), r.origin, r.taints) for r in expr.runs)
                out.append(Seg(self.host.arithmetic(expr, span), dq, not dq))
                return stop
            stop = find_close(pf, i + 1, end, 0x28, 0x29)
            out.append(Seg(self.host.substitute(pf, None, i + 2, stop - 1), dq, not dq))
            return stop
        if nxt == 0x7B:  # ${
            stop = pf.ends.get(i) or find_close(pf, i + 1, end, 0x7B, 0x7D)
            out.extend(self._parameter(pf, i + 2, stop - 1, dq=dq, span=span))
            return stop
        if nxt == 0x27 and not dq:  # $'...'
            j = i + 2
            while j < end and data[j] != 0x27:
                j += 2 if data[j] == 0x5C else 1
            body = decode_ansi_c(pf.slice(i + 2, min(j, end)))
            out.append(Seg(Text.lit(body, span), True, False))
            return min(j + 1, end)
        if nxt == 0x22 and not dq:  # $"..." (locale translation: same as "...")
            return i + 1
        if nxt in NAME_START:
            j = i + 1
            while j < end and data[j] in NAME_CHARS:
                j += 1
            out.extend(self._value_pieces(pf.slice(i + 1, j), None, dq, span))
            return j
        if nxt in DIGITS or (nxt != -1 and chr(nxt) in SPECIAL_PARAMS):
            out.extend(self._value_pieces(chr(nxt), None, dq, span))
            return i + 2
        out.append(self._lit(pf, i, "$", quoted=dq, split=False))
        return i + 1

    # --- parameters ---------------------------------------------------------------------------

    def _value_pieces(
        self, name: str, index: str | None, dq: bool, span: SourceSpan
    ) -> list[Piece]:
        view = self.host.param(name, index, span)
        self.host.unbound(name, view, span)
        return self._view_pieces(view, dq)

    def _view_pieces(self, view: VarView, dq: bool) -> list[Piece]:
        if view.splat is None:
            if view.values:
                value = view.values[0]
            else:
                value = Text.lit("", None, view.taints) if view.taints else EMPTY
            return [Seg(value, dq, not dq)]
        if view.splat == "*" and dq:
            sep = self.host.ifs()[:1]
            return [Seg(Text.join(view.values, sep), True, False)]
        out: list[Piece] = []
        for index, value in enumerate(view.values):
            if index:
                out.append(BREAK)
            out.append(Seg(value, dq, not dq))
        if not view.values:
            empty = Text.lit("", None, view.taints) if view.taints else EMPTY
            if dq:
                out.append(Seg(empty, True, False, void=True))
            elif view.taints:
                out.append(Seg(empty, False, False))
        return out

    def _parameter(
        self, pf: ParsedFile, start: int, end: int, *, dq: bool, span: SourceSpan
    ) -> list[Piece]:
        """``${…}`` with the inner bytes [start, end)."""
        data = pf.data
        text = pf.slice(start, end)
        if not text:
            item = Unresolved("${}", "bad substitution", span.file, span.line)
            return [Seg(opaque("${}", "derived", item), dq, not dq)]
        p = start
        length = False
        indirect = False
        if text[0] == "#" and len(text) > 1 and (text[1].isalnum() or text[1] in "_@*"):
            length = True
            p += 1
        elif data[p] == 0x21 and p + 1 < end:
            indirect = True
            p += 1
        q = name_end(data, p, end)
        name = pf.slice(p, q)
        index: str | None = None
        if q < end and data[q] == 0x5B:  # [subscript]
            close = find_close(pf, q, end, 0x5B, 0x5D)
            index_pieces: list[Piece] = []
            self._scan(pf, q + 1, close - 1, index_pieces, dq=True, heredoc=True, operand=False)
            index_text = join_pieces(index_pieces)
            index = index_text.s
            q = close
        rest = pf.slice(q, end)
        if not name:
            item = Unresolved(f"${{{text}}}", "bad substitution", span.file, span.line)
            return [Seg(opaque(f"${{{text}}}", "derived", item), dq, not dq)]

        if length:
            view = self.host.param(name, index, span)
            self.host.unbound(name, view, span)
            if view.splat is not None:
                value = Text.lit(str(len(view.values)))
            else:
                current = view.values[0] if view.values else EMPTY
                value = (
                    Text.lit(str(len(current.s)))
                    if current.known
                    else Text.lit(placeholder(f"${{#{name}}}", "derived"), None, current.taints)
                )
            return [Seg(value, dq, not dq)]

        if indirect:
            if index in ("@", "*") and not rest:  # ${!A[@]}: the indices
                view = self.host.param(name, "!" + index, span)
                return self._view_pieces(view, dq)
            if rest in ("*", "@") and index is None:  # ${!prefix*}: variable names
                names = [n for n in self.host.var_names() if n.startswith(name)]
                view = VarView([Text.lit(n) for n in sorted(names)], True, rest)
                return self._view_pieces(view, dq)
            target = self.host.param(name, index, span)
            ref = target.values[0] if target.values else EMPTY
            if not ref.known:
                return [
                    Seg(
                        Text.lit(placeholder(f"${{!{name}}}", "derived"), None, ref.taints),
                        dq,
                        not dq,
                    )
                ]
            if not ref.s:
                return [Seg(EMPTY, dq, not dq)]
            inner_name, _, inner_index = ref.s.partition("[")
            view = self.host.param(inner_name, inner_index[:-1] if inner_index else None, span)
            return self._apply(pf, view, q, end, rest, name=ref.s, dq=dq, span=span)

        view = self.host.param(name, index, span)
        if not rest:
            self.host.unbound(name, view, span)
        return self._apply(pf, view, q, end, rest, name=name, dq=dq, span=span)

    def _apply(
        self,
        pf: ParsedFile,
        view: VarView,
        q: int,
        end: int,
        rest: str,
        *,
        name: str,
        dq: bool,
        span: SourceSpan,
    ) -> list[Piece]:
        if not rest:
            return self._view_pieces(view, dq)
        colon = rest.startswith(":")
        op_text = rest[1:] if colon else rest
        op = op_text[:1]
        if op in ("-", "=", "+", "?") and (colon or op):
            operand_start = q + (2 if colon else 1)
            values = view.values
            if colon:
                empty = not values or all(v.s == "" and v.known for v in values)
            else:
                empty = not view.is_set
            if op == "+":
                if empty:
                    return [Seg(EMPTY, dq, False)] if dq else []
                return self._operand(pf, operand_start, end, dq)
            if not empty:
                return self._view_pieces(view, dq)
            if op == "-":
                return self._operand(pf, operand_start, end, dq)
            if op == "=":
                value = join_pieces(self._operand(pf, operand_start, end, True))
                self.host.assign_scalar(name, value, span)
                return [Seg(value, dq, not dq)]
            message = join_pieces(self._operand(pf, operand_start, end, True)).s
            raise ExpansionError(f"{name}: {message or 'parameter null or not set'}", span)
        if colon:  # ${x:offset[:length]}
            return self._substring(pf, view, q + 1, end, dq=dq, span=span, name=name)
        if op in ("#", "%"):
            longest = op_text[1:2] == op
            pat_start = q + (2 if longest else 1)
            pattern, taints = pattern_of(self.scan(pf, pat_start, end))

            def strip(value: str) -> str:
                if op == "#":
                    return patterns.remove_prefix(value, pattern, longest)
                return patterns.remove_suffix(value, pattern, longest)

            return self._map(view, strip, taints, dq, f"{name}{op}")
        if op == "/":
            mode = "/"
            pat_start = q + 1
            if op_text[1:2] in ("/", "#", "%"):
                mode = "//" if op_text[1] == "/" else op_text[1]
                pat_start += 1
            sep = pattern_end(pf, pat_start, end)
            pattern, taints = pattern_of(self.scan(pf, pat_start, sep))
            replacement = join_pieces(self._operand(pf, sep + 1, end, True)) if sep < end else EMPTY

            def sub(value: str) -> str:
                return patterns.replace(value, pattern, replacement.s, mode)

            return self._map(view, sub, taints | replacement.taints, dq, f"{name}/")
        if op in ("^", ","):
            every = op_text[1:2] == op

            def case(value: str) -> str:
                if not value:
                    return value
                if op == "^":
                    return value.upper() if every else value[0].upper() + value[1:]
                return value.lower() if every else value[0].lower() + value[1:]

            return self._map(view, case, EMPTY_TAINTS, dq, f"{name}{op}")
        if op == "@" and len(op_text) == 2:
            transform = op_text[1]
            if transform in "ULuQE":

                def apply(value: str) -> str:
                    if transform == "U":
                        return value.upper()
                    if transform == "L":
                        return value.lower()
                    if transform == "u":
                        return value[:1].upper() + value[1:]
                    if transform == "Q":
                        return "'" + value.replace("'", "'\\''") + "'"
                    return decode_ansi_c(value)

                return self._map(view, apply, EMPTY_TAINTS, dq, f"{name}@{transform}")
        item = Unresolved(
            f"${{{name}{rest}}}", "unsupported parameter expansion", span.file, span.line
        )
        return [Seg(opaque(f"${{{name}{rest}}}", "derived", item), dq, not dq)]

    def _operand(self, pf: ParsedFile, start: int, end: int, dq: bool) -> list[Piece]:
        out: list[Piece] = []
        if dq:
            self._scan(pf, start, end, out, dq=True, heredoc=False, operand=True)
            return out
        self._scan(pf, start, end, out, dq=False, heredoc=False, operand=True)
        return out

    def _map(
        self,
        view: VarView,
        fn: object,
        taints: frozenset[Unresolved],
        dq: bool,
        label: str,
    ) -> list[Piece]:
        assert callable(fn)
        values: list[Text] = []
        for value in view.values:
            if value.known and not taints:
                values.append(Text.lit(fn(value.s)))
            else:
                values.append(Text.lit(placeholder(label, "derived"), None, value.taints | taints))
        if view.splat is None and not values:
            values = [Text.lit(fn("")) if not taints else Text.lit("", None, taints)]
        return self._view_pieces(VarView(values, view.is_set, view.splat), dq)

    def _substring(
        self,
        pf: ParsedFile,
        view: VarView,
        start: int,
        end: int,
        *,
        dq: bool,
        span: SourceSpan,
        name: str,
    ) -> list[Piece]:
        colon = offset_end(pf.data, start, end)
        offset_text = join_pieces(self.scan(pf, start, colon))
        offset = self.host.arithmetic(offset_text, span)
        length: Text | None = None
        if colon < end:
            length = self.host.arithmetic(join_pieces(self.scan(pf, colon + 1, end)), span)
        taints = offset.taints | (length.taints if length is not None else EMPTY_TAINTS)
        if taints:
            return self._map(view, lambda v: v, taints, dq, f"{name}:")
        off = int(offset.s)
        ln = int(length.s) if length is not None else None
        if view.splat is not None:
            items = view.values
            if name in ("@", "*"):  # positional: offset counts $0
                items = [*self.host.param("0", None, span).values, *items] if off == 0 else items
                off = off - 1 if off > 0 else off
            begin = off if off >= 0 else max(len(items) + off, 0)
            stop = len(items) if ln is None else (begin + ln if ln >= 0 else len(items) + ln)
            return self._view_pieces(VarView(items[begin:stop], view.is_set, view.splat), dq)

        def cut(value: str) -> str:
            begin = off if off >= 0 else max(len(value) + off, 0)
            if ln is None:
                return value[begin:]
            stop = begin + ln if ln >= 0 else len(value) + ln
            return value[begin:stop] if stop >= begin else ""

        return self._map(view, cut, EMPTY_TAINTS, dq, f"{name}:")

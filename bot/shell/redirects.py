"""Redirections: heredocs and here-strings as stdin, ``> file`` / ``>> file`` captured into
the in-memory file system, ``< file`` and ``< <(cmd)`` read back."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from bot.shell.host import Host
from bot.shell.parse import ParsedFile, named_children
from bot.shell.result import SourceSpan
from bot.shell.state import Capture
from bot.shell.text import (
    EMPTY,
    Text,
)


class Redirections:
    def __init__(self, ev: Host) -> None:
        self.ev = ev

    def with_redirects(
        self, redirects: list[Node], pf: ParsedFile, run: Callable[[], None]
    ) -> None:
        st = self.ev.st
        saved_out, saved_in = st.out, st.stdin
        writes: list[tuple[str, Capture, bool]] = []
        for redirect in redirects:
            span = SourceSpan(pf.display, pf.node_line(redirect))
            if redirect.type == "heredoc_redirect":
                st.stdin = self.heredoc_text(redirect, pf)
                continue
            if redirect.type == "herestring_redirect":
                word = next((c for c in named_children(redirect)), None)
                st.stdin = (
                    self.ev.expander.string(pf, word) if word is not None else EMPTY
                ) + Text.lit("\n")
                continue
            descriptor = None
            operator = ""
            destination: Node | None = None
            for child in redirect.children:
                if child.type == "file_descriptor":
                    descriptor = pf.text(child)
                elif not child.is_named:
                    operator = child.type
                elif destination is None:
                    destination = child
            if destination is None:
                continue
            if operator in ("<", "<&") and descriptor in (None, "0"):
                if destination.type == "process_substitution" and pf.text(destination)[:2] == "<(":
                    st.stdin = self.ev.process_output(destination, pf)  # `< <(cmd)`: its output
                    continue
                target = self.ev.expander.string(pf, destination)
                st.stdin = self.ev.files.read_file(target, span)
                continue
            to_stdout = descriptor in (None, "1") or operator.startswith("&")
            if not to_stdout:
                continue
            target_text = pf.text(destination)
            if operator in (">&", "<&") and target_text in ("1", "2", "-"):
                if target_text == "2":
                    st.out = Capture()  # stdout into stderr: not captured
                continue
            target_path = self.ev.expander.string(pf, destination)
            capture = Capture()
            st.out = capture
            if target_path.known and target_path.s != "/dev/null":
                writes.append((target_path.s, capture, operator in (">>", "&>>")))
        try:
            run()
        finally:
            st = self.ev.st
            st.out, st.stdin = saved_out, saved_in
            for path, capture, append in writes:
                self.ev.files.write_file(path, capture.text(), append=append)

    def heredoc_text(self, node: Node, pf: ParsedFile) -> Text:
        start_node = body = end_node = None
        strip = False
        for child in node.children:
            if child.type == "heredoc_start":
                start_node = child
            elif child.type == "heredoc_body":
                body = child
            elif child.type == "heredoc_end":
                end_node = child
            elif child.type == "<<-":
                strip = True
        if body is None:
            return EMPTY
        data = pf.data
        begin = data.rfind(b"\n", 0, body.start_byte) + 1
        stop = body.end_byte
        if end_node is not None:
            stop = data.rfind(b"\n", 0, end_node.start_byte) + 1
        stop = max(stop, begin)
        delimiter = pf.text(start_node) if start_node is not None else ""
        quoted = any(c in delimiter for c in "'\"\\")
        if quoted:
            text = pf.slice(begin, stop)
            if strip:
                text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
            return Text.lit(text, SourceSpan(pf.display, pf.line_of(begin)))
        if not strip:
            return self.ev.expander.heredoc(pf, begin, stop)
        parts: list[Text] = []
        pos = begin
        while pos < stop:
            line_end = data.find(b"\n", pos, stop)
            line_end = stop if line_end == -1 else line_end
            first = pos
            while first < line_end and data[first] == 0x09:
                first += 1
            parts.append(self.ev.expander.heredoc(pf, first, line_end))
            if line_end < stop:
                parts.append(Text.lit("\n"))
            pos = line_end + 1
        return Text.join(parts)

    def exec_redirected_statement(self, node: Node, pf: ParsedFile) -> None:
        body = node.child_by_field_name("body")
        redirects = [
            c
            for c in named_children(node)
            if c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect")
        ]
        if body is None:
            others = [c for c in named_children(node) if c not in redirects]
            body = others[0] if others else None
        if body is None:
            self.with_redirects(redirects, pf, lambda: None)
            return
        target = body
        self.with_redirects(redirects, pf, lambda: self.ev.exec_stmt(target, pf))

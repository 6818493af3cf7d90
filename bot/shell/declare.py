"""Variables: assignments (scalars, indexed and associative arrays, ``+=``), ``declare`` /
``typeset`` / ``local`` / ``export`` / ``readonly`` with their attributes, and ``unset``."""

from __future__ import annotations

import re

from tree_sitter import Node

from bot.placeholders import PLACEHOLDER_RE, placeholder
from bot.shell.fields import join_pieces
from bot.shell.host import Host
from bot.shell.parse import ParsedFile, first_token, named_children
from bot.shell.result import SourceSpan
from bot.shell.state import Var
from bot.shell.text import EMPTY, Text, opaque


class Declarations:
    def __init__(self, ev: Host) -> None:
        self.ev = ev

    def set_var(self, name: str, value: Text, span: SourceSpan, *, export: bool = False) -> None:
        self.ev.budget.check_string(len(value.s), span.file, span.line)
        old = self.ev.st.lookup(name)
        exported = export or (old is not None and old.exported)
        if old is not None and old.is_array:
            self.set_element(name, "0", value, span)
            return
        self.ev.st.store(name, Var(scalar=value, exported=exported))

    def set_element(self, name: str, key: str, value: Text, span: SourceSpan) -> None:
        old = self.ev.st.lookup(name)
        exported = old is not None and old.exported
        if old is not None and old.assoc is not None:
            items = dict(old.assoc)
            items[key] = value
            self.ev.st.store(name, Var(assoc=tuple(items.items()), exported=exported))
            return
        position = self.ev.index(key, span)
        if position is None:
            item = self.ev.unresolved(span, f"${name}", "array index is not known")
            self.ev.st.store(name, Var(scalar=opaque(name, "derived", item), exported=exported))
            return
        elements = dict(old.items or ()) if old is not None and old.items is not None else {}
        if old is not None and old.items is None and old.scalar is not None:
            elements[0] = old.scalar
        if position < 0:
            position = (max(elements) + 1 if elements else 0) + position
        elements[position] = value
        self.ev.budget.check_array(len(elements), span.file, span.line)
        self.ev.st.store(name, Var(items=tuple(sorted(elements.items())), exported=exported))

    def set_array(self, name: str, values: list[Text], span: SourceSpan, *, append: bool) -> None:
        old = self.ev.st.lookup(name)
        exported = old is not None and old.exported
        elements: dict[int, Text] = {}
        if append and old is not None:
            if old.items is not None:
                elements = dict(old.items)
            elif old.scalar is not None:
                elements = {0: old.scalar}
        start = max(elements) + 1 if elements else 0
        for offset, value in enumerate(values):
            elements[start + offset] = value
        self.ev.budget.check_array(len(elements), span.file, span.line)
        self.ev.st.store(name, Var(items=tuple(sorted(elements.items())), exported=exported))

    def exec_assignment(self, node: Node, pf: ParsedFile, *, local: bool = False) -> None:
        span = SourceSpan(pf.display, pf.node_line(node))
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return
        append = any(child.type == "+=" for child in node.children)
        key: str | None = None
        if name_node.type == "subscript":
            base = name_node.child_by_field_name("name")
            index = name_node.child_by_field_name("index")
            name = pf.text(base) if base is not None else pf.text(name_node)
            key = self.ev.expander.string(pf, index).s if index is not None else "0"
        else:
            name = pf.text(name_node)
        self.ev.last_subst_status = None
        if local:
            self.ev.st.declare_local(name, Var())
        if value_node is not None and value_node.type == "array":
            values = self._array_values(value_node, pf)
            old = self.ev.st.lookup(name)
            if (old is not None and old.assoc is not None) or self._assoc_literal(value_node, pf):
                self._assoc_assign(name, value_node, pf, span, append)
            else:
                self.set_array(name, values, span, append=append)
        else:
            value = self.ev.expander.string(pf, value_node) if value_node is not None else EMPTY
            value = _named_after(name, value)
            if key is not None:
                if append:
                    old = self.ev.st.lookup(name)
                    current = old.get(key) if old is not None else None
                    value = (current or EMPTY) + value
                self.set_element(name, key, value, span)
            else:
                if append:
                    old = self.ev.st.lookup(name)
                    if old is not None and old.is_array:
                        self.set_array(name, [value], span, append=True)
                        self.ev.st.status = 0
                        return
                    value = (old.first() if old is not None else EMPTY) + value
                self.set_var(name, value, span)
        status = self.ev.last_subst_status
        self.ev.st.status = status if status is not None else 0

    def _array_values(self, node: Node, pf: ParsedFile) -> list[Text]:
        values: list[Text] = []
        for element in named_children(node):
            if element.type == "comment":
                continue
            span = SourceSpan(pf.display, pf.node_line(element))
            for field in self.ev.expander.fields(pf, element):
                values.append(field.text.stamped(span))
            self.ev.budget.check_array(len(values), span.file, span.line)
        return values

    def _assoc_literal(self, node: Node, pf: ParsedFile) -> bool:
        elements = [e for e in named_children(node) if e.type != "comment"]
        return bool(elements) and all(
            pf.text(e).startswith("[") and "]=" in pf.text(e) for e in elements
        )

    def _assoc_assign(
        self, name: str, node: Node, pf: ParsedFile, span: SourceSpan, append: bool
    ) -> None:
        old = self.ev.st.lookup(name)
        items: dict[str, Text] = dict(old.assoc) if append and old and old.assoc else {}
        for element in named_children(node):
            if element.type == "comment":
                continue
            text = pf.data[element.start_byte : element.end_byte]
            close = text.find(b"]=")
            if not text.startswith(b"[") or close == -1:
                continue
            key = join_pieces(
                self.ev.expander.scan(pf, element.start_byte + 1, element.start_byte + close)
            ).s
            value = join_pieces(
                self.ev.expander.scan(pf, element.start_byte + close + 2, element.end_byte)
            )
            items[key] = value
        exported = old is not None and old.exported
        self.ev.st.store(name, Var(assoc=tuple(items.items()), exported=exported))

    def exec_variable_assignment(self, node: Node, pf: ParsedFile) -> None:
        self.exec_assignment(node, pf)

    def exec_variable_assignments(self, node: Node, pf: ParsedFile) -> None:
        for child in named_children(node):
            if child.type == "variable_assignment":
                self.exec_assignment(child, pf)

    def exec_declaration(self, node: Node, pf: ParsedFile) -> None:
        keyword = first_token(node)
        span = SourceSpan(pf.display, pf.node_line(node))
        options = [pf.text(c) for c in named_children(node) if pf.text(c).startswith("-")]
        if keyword in ("declare", "typeset", "local", "export") and any(
            "p" in option for option in options
        ):
            self._declare_print(node, pf, span)
            return
        flags = ""
        unexport = False
        in_function = len(self.ev.st.frames) > 1
        for child in named_children(node):
            if child.type in ("word", "string", "raw_string", "concatenation") and pf.text(
                child
            ).startswith(("-", "+")):
                text = self.ev.expander.string(pf, child).s
                if text.startswith("+"):
                    unexport = unexport or "x" in text
                else:
                    flags += text[1:]
                continue
            local = keyword == "local" or (
                keyword in ("declare", "typeset") and in_function and "g" not in flags
            )
            export = keyword == "export" or "x" in flags
            if child.type == "variable_assignment":
                self.exec_assignment(child, pf, local=local)
                name_node = child.child_by_field_name("name")
                name = pf.text(name_node) if name_node is not None else ""
                if name_node is not None and name_node.type == "subscript":
                    base = name_node.child_by_field_name("name")
                    name = pf.text(base) if base is not None else name
                self._mark(name, export, unexport, flags, local=False)
            elif child.type in ("variable_name", "word", "string", "raw_string", "concatenation"):
                word = (
                    self.ev.expander.string(pf, child)
                    if child.type != "variable_name"
                    else Text.lit(pf.text(child))
                )
                if "=" in word.s and child.type != "variable_name":
                    name, _, _ = word.s.partition("=")
                    value = word.slice(len(name) + 1)
                    if local:
                        self.ev.st.declare_local(name, Var())
                    self.set_var(name, value, span)
                    self._mark(name, export, unexport, flags, local=False)
                    continue
                name = word.s
                if keyword == "export" and "f" in flags:
                    continue
                if local and self.ev.st.frames[-1].get(name) is None:
                    self.ev.st.declare_local(
                        name,
                        Var(items=() if "a" in flags else None, assoc=() if "A" in flags else None),
                    )
                elif "a" in flags and self.ev.st.lookup(name) is None:
                    self.ev.st.store(name, Var(items=()))
                elif "A" in flags and self.ev.st.lookup(name) is None:
                    self.ev.st.store(name, Var(assoc=()))
                self._mark(name, export, unexport, flags, local=local)
        self.ev.st.status = 0

    def _declare_print(self, node: Node, pf: ParsedFile, span: SourceSpan) -> None:
        """``declare -p NAME…``: status says whether every name is set (a common test)."""
        names = [
            pf.text(c) if c.type == "variable_name" else self.ev.expander.string(pf, c).s
            for c in named_children(node)
            if not pf.text(c).startswith("-")
        ]
        status: int | None = 0
        lines: list[Text] = []
        for name in names:
            var = self.ev.st.lookup(name)
            if var is None or (var.scalar is None and not var.is_array):
                if var is not None and var.maybe is not None:
                    status = None
                    continue
                status = 1 if status is not None else None
                continue
            value = var.first()
            if not value.known or var.maybe is not None:
                status = None
            flag = "-x" if var.exported else "--"
            lines.append(Text.lit(f"declare {flag} {name}=") + value + Text.lit("\n"))
        if self.ev.st.out is not None:
            self.ev.st.out.chunks.extend(lines)
        self.ev.st.status = status

    def _mark(self, name: str, export: bool, unexport: bool, flags: str, *, local: bool) -> None:
        if not name:
            return
        var = self.ev.st.lookup(name)
        if "A" in flags and var is not None and var.assoc is None and not var.items:
            var = Var(assoc=(), exported=var.exported)
            self.ev.st.store(name, var)
        if not (export or unexport):
            return
        if var is None:
            var = Var()
        flag = export and not unexport
        updated = Var(var.scalar, var.items, var.assoc, flag, var.maybe)
        if local:
            self.ev.st.declare_local(name, updated)
        else:
            self.ev.st.store(name, updated)
        if flag:
            self.ev.st.export_order.setdefault(name, None)

    def exec_unset(self, node: Node, pf: ParsedFile) -> None:
        functions = False
        for child in named_children(node):
            text = (
                self.ev.expander.string(pf, child).s
                if child.type != "variable_name"
                else pf.text(child)
            )
            if text == "-f":
                functions = True
                continue
            if text.startswith("-"):
                continue
            if functions:
                self.ev.st.functions.pop(text, None)
                continue
            match = re.fullmatch(r"([A-Za-z_]\w*)\[(.*)\]", text)
            if match:
                var = self.ev.st.lookup(match.group(1))
                if var is not None and var.items is not None:
                    span = SourceSpan(pf.display, pf.node_line(node))
                    position = self.ev.index(match.group(2), span)
                    items = tuple((i, v) for i, v in var.items if i != position)
                    self.ev.st.store(match.group(1), Var(items=items, exported=var.exported))
                continue
            self.ev.st.unset(text)
        self.ev.st.status = 0


def _named_after(name: str, value: Text) -> Text:
    """``X=$(opaque command)``: call the placeholder after the variable it lands in."""
    match = PLACEHOLDER_RE.fullmatch(value.s)
    if match is None or match.group(2) != "command-output" or len(value.runs) != 1:
        return value
    return Text.lit(placeholder(name, "command-output"), value.runs[0].origin, value.taints)

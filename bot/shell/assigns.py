"""Syntactic analysis: which variables a piece of shell may assign, without evaluating it.

Used where evaluation cannot go (a loop whose iteration count is unknown, a library helper
that is not evaluated): what it could assign becomes unknown instead of silently stale.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from bot.shell.parse import ParsedFile, named_children

_ARITH_TARGET = re.compile(
    r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"
    r"|([A-Za-z_]\w*)\s*(?:\+\+|--)|(?:\+\+|--)\s*([A-Za-z_]\w*)"
)


def assigned_names(node: Node, pf: ParsedFile) -> set[str]:
    """Names a piece of shell may assign (assignments, read/printf -v targets, arithmetic)."""
    names, _, _ = scan(node, pf)
    return names


def scan(node: Node, pf: ParsedFile) -> tuple[set[str], set[str], set[str]]:
    """(names assigned globally, names declared local, commands called) in ``node``."""
    assigned: set[str] = set()
    local: set[str] = set()
    calls: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind == "variable_assignment":
            name_node = current.child_by_field_name("name")
            if name_node is not None:
                if name_node.type == "subscript":
                    base = name_node.child_by_field_name("name")
                    name_node = base if base is not None else name_node
                assigned.add(pf.text(name_node))
        elif kind == "declaration_command":
            keyword = current.children[0].type if current.children else ""
            flags = "".join(
                pf.text(c)[1:] for c in named_children(current) if pf.text(c).startswith("-")
            )
            for child in named_children(current):
                target = child
                if child.type == "variable_assignment":
                    inner = child.child_by_field_name("name")
                    target = inner if inner is not None else child
                if target.type == "variable_name":
                    name = pf.text(target)
                    if keyword == "local" or (
                        keyword in ("declare", "typeset") and "g" not in flags
                    ):
                        local.add(name)
                    else:
                        assigned.add(name)
        elif kind in ("for_statement", "select_statement"):
            variable = current.child_by_field_name("variable")
            if variable is not None:
                assigned.add(pf.text(variable))
        elif kind == "command":
            name_node = current.child_by_field_name("name")
            words = [pf.text(c) for c in named_children(current) if c.type != "variable_assignment"]
            if name_node is not None:
                command = pf.text(name_node)
                calls.add(command)
                args = words[1:]
                if command in ("read", "mapfile", "readarray"):
                    skip = False
                    for index, arg in enumerate(args):
                        if skip:
                            skip = False
                            continue
                        if arg in ("-d", "-p", "-t", "-n", "-N", "-u", "-i"):
                            skip = True
                            continue
                        if arg == "-a" and index + 1 < len(args):
                            assigned.add(args[index + 1])
                            skip = True
                            continue
                        if re.fullmatch(r"[A-Za-z_]\w*", arg):
                            assigned.add(arg)
                elif command == "printf" and len(args) > 1 and args[0] == "-v":
                    assigned.add(args[1])
                elif command in ("let",):
                    for arg in args:
                        assigned.update(_arith_targets(arg))
        elif (
            kind in ("arithmetic_expansion", "compound_statement")
            and current.children
            and (current.children[0].type in ("$((", "(("))
        ):
            assigned.update(_arith_targets(pf.text(current)))
        elif kind == "c_style_for_statement":
            assigned.update(_arith_targets(pf.text(current).split("do", 1)[0]))
        elif kind == "unset_command":
            for child in named_children(current):
                if child.type == "variable_name":
                    assigned.add(pf.text(child))
        stack.extend(current.children)
    return assigned, local, calls


def _arith_targets(text: str) -> set[str]:
    out: set[str] = set()
    for match in _ARITH_TARGET.finditer(text):
        out.update(name for name in match.groups() if name)
    return out


__all__ = ["assigned_names", "scan"]

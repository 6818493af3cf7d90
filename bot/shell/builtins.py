"""Shell builtins and whitelisted commands, evaluated natively against the evaluator's state.

Every handler takes ``(evaluator, argv, span, parsed_file)``; argv[0] is the command name. Output
goes to the current stdout sink (a command substitution or pipeline capture) and never to the
host. Commands whose input is not known produce tainted output, never a guessed one.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence

from bot.placeholders import placeholder
from bot.shell import purecmd, textutils
from bot.shell.conditions import posix_test
from bot.shell.parse import ParsedFile
from bot.shell.protocols import Interp
from bot.shell.result import SourceSpan, Unresolved
from bot.shell.signals import ExitSignal, LoopSignal, ReturnSignal
from bot.shell.text import EMPTY, Text, opaque
from bot.shell.usage import positions_read

Handler = Callable[[Interp, list[Text], SourceSpan, ParsedFile], None]
Pure = Callable[[Interp, list[Text], SourceSpan], bool]


def _taints(texts: list[Text]) -> frozenset[Unresolved]:
    out: set[Unresolved] = set()
    for text in texts:
        out |= text.taints
    return frozenset(out)


def _emit(ev: Interp, output: str, taints: frozenset[Unresolved], span: SourceSpan) -> None:
    ev.write_out(Text.lit(output, None, taints), span)


def b_true(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    ev.st.status = 0


def b_false(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    ev.st.status = 1


def b_echo(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    args = argv[1:]
    words = [a.s for a in args]
    flags = 0
    while flags < len(words) and re.fullmatch(r"-[neE]+", words[flags]):
        flags += 1
    if "e" not in "".join(words[:flags]) and all(a.known for a in args[flags:]):
        newline = "n" not in "".join(words[:flags])
        body = Text.join((Text.lit(a.s) for a in args[flags:]), " ")
        ev.write_out(body + (Text.lit("\n") if newline else EMPTY), span)
    elif all(a.known for a in args):
        ev.write_out(Text.lit(purecmd.echo(words)), span)
    else:  # keep each argument's uncertainty on its own characters
        newline = "n" not in "".join(words[:flags])
        body = Text.join((a.computed() for a in args[flags:]), " ")
        ev.write_out(body + (Text.lit("\n") if newline else EMPTY), span)
    ev.st.status = 0


def b_printf(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    args = argv[1:]
    target: str | None = None
    if len(args) >= 2 and args[0].s == "-v":
        target = args[1].s
        args = args[2:]
    if args and args[0].s == "--":
        args = args[1:]
    if not args:
        ev.st.status = 2
        return
    try:
        limit = ev.budget.limits.max_string
        output, status = purecmd.printf(args[0].s, [a.s for a in args[1:]], limit)
    except purecmd.OutputTooLarge as err:  # checked before allocating, not after
        ev.budget.check_string(err.size, span.file, span.line)
        raise AssertionError("unreachable: the size is over the limit") from err
    text = Text.lit(output, None, _taints(args))
    if target is not None:
        ev.set_var(target, text, span)
    else:
        ev.write_out(text, span)
    ev.st.status = status


def b_set(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    args = argv[1:]
    index = 0
    while index < len(args):
        word = args[index].s
        if word == "--":
            ev.st.positional[-1] = tuple(args[index + 1 :])
            break
        if word in ("-o", "+o") and index + 1 < len(args):
            if args[index + 1].s == "errexit":
                ev.st.errexit = word == "-o"
            if args[index + 1].s == "nounset":
                ev.st.nounset = word == "-o"
            index += 2
            continue
        if word.startswith(("-", "+")) and len(word) > 1:
            if "e" in word[1:]:
                ev.st.errexit = word.startswith("-")
            if "u" in word[1:]:
                ev.st.nounset = word.startswith("-")
            index += 1
            continue
        ev.st.positional[-1] = tuple(args[index:])
        break
    ev.st.status = 0


def b_shift(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    count = int(argv[1].s) if len(argv) > 1 and textutils.is_integer(argv[1].s) else 1
    current = ev.st.positional[-1]
    if count > len(current):
        ev.st.status = 1
        return
    ev.st.positional[-1] = current[count:]
    ev.st.status = 0


def b_source(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    ev.source_file(argv, span)


def b_eval(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    text = Text.join(argv[1:], " ")
    if not text.known:
        item = ev.unresolved(span, f"eval {text.s}", "evaluated text is not statically known")
        ev.control[item] = None
        ev.st.status = None
        return
    fragment = ev.parser.parse_fragment(text.s, span.file, span.line)
    ev.budget.enter(span.file, span.line)
    try:
        ev.exec_block(fragment.root, fragment)
    finally:
        ev.budget.leave()


def _exit_message(ev: Interp, span: SourceSpan) -> str | None:
    if ev.last_message is None or ev.last_message[1].file != span.file:
        return None
    message, where = ev.last_message
    positions_read()  # a distance between two lines: an edit between them changes it
    return message.splitlines()[0][:200] if 0 <= span.line - where.line <= 6 else None


def b_exit(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    code: int | None = ev.st.status
    if len(argv) > 1:
        code = int(argv[1].s) & 0xFF if re.fullmatch(r"-?\d+", argv[1].s) else None
    raise ExitSignal(code, span, _exit_message(ev, span))


def b_return(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    code: int | None = ev.st.status
    if len(argv) > 1:
        code = int(argv[1].s) & 0xFF if re.fullmatch(r"-?\d+", argv[1].s) else None
    raise ReturnSignal(code)


def b_break(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    levels = int(argv[1].s) if len(argv) > 1 and textutils.is_integer(argv[1].s) else 1
    raise LoopSignal(argv[0].s, max(levels, 1))


def b_cd(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    args = [a for a in argv[1:] if not a.s.startswith("-") or a.s == "-"]
    if not args or args[0].s == "-" or not args[0].known:
        ev.st.cwd = None
    else:
        path = ev.files.repo_path(args[0])
        ev.st.cwd = path
    ev.st.status = 0


def b_pwd(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    ev.write_out(ev.pwd(span) + Text.lit("\n"), span)
    ev.st.status = 0


def _stdin(ev: Interp, span: SourceSpan, what: str) -> Text:
    if ev.st.stdin is not None:
        return ev.st.stdin
    item = ev.unresolved(span, what, "reads standard input, which is not known statically")
    return opaque("stdin", "command-output", item)


def b_read(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    args = argv[1:]
    array: str | None = None
    delimiter = "\n"
    names: list[str] = []
    index = 0
    while index < len(args):
        word = args[index].s
        if word in ("-a", "-d", "-p", "-t", "-n", "-N", "-u", "-i") and index + 1 < len(args):
            if word == "-a":
                array = args[index + 1].s
            elif word == "-d":
                delimiter = args[index + 1].s[:1] or "\0"
            index += 2
            continue
        if word.startswith("-") and len(word) > 1:
            letters = word[1:]
            if "a" in letters and index + 1 < len(args):
                array = args[index + 1].s
                index += 2
                continue
            index += 1
            continue
        names.append(word)
        index += 1
    stdin = _stdin(ev, span, "read")
    if not stdin.known:
        item = next(iter(stdin.taints))
        for name in names or ([array] if array else ["REPLY"]):
            ev.set_var(name, opaque(name, "command-output", item), span)
        ev.st.status = None
        return
    data = stdin.s
    if not data:
        for name in names:
            ev.set_var(name, EMPTY, span)
        ev.st.status = 1
        return
    cut = data.find(delimiter)
    line, remainder = (data, "") if cut == -1 else (data[:cut], data[cut + 1 :])
    ev.st.stdin = Text.lit(remainder)
    ifs = ev.ifs()
    if array is not None:
        parts = [p for p in re.split("[" + re.escape(ifs) + "]+", line)] if ifs else [line]
        parts = [p for p in parts if p != ""] if all(c in " \t\n" for c in ifs) else parts
        ev.set_array(array, [Text.lit(p) for p in parts], span, append=False)
    else:
        targets = names or ["REPLY"]
        fields = _split_read(line, ifs, len(targets))
        for position, name in enumerate(targets):
            ev.set_var(name, Text.lit(fields[position] if position < len(fields) else ""), span)
    ev.st.status = 0 if cut != -1 else (0 if line else 1)


def _split_read(line: str, ifs: str, count: int) -> list[str]:
    if count == 1 or not ifs:
        return [line.strip(" \t\n") if all(c in " \t\n" for c in ifs) else line]
    white = "".join(c for c in ifs if c in " \t\n")
    text = line.strip(white) if white else line
    fields: list[str] = []
    pattern = re.compile("[" + re.escape(ifs) + "]")
    while len(fields) < count - 1 and text:
        match = pattern.search(text)
        if match is None:
            break
        fields.append(text[: match.start()])
        text = text[match.end() :].lstrip(white)
    fields.append(text)
    return fields


def b_mapfile(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    args = [a.s for a in argv[1:]]
    strip = "-t" in args
    names = [a for a in args if not a.startswith("-")]
    name = names[-1] if names else "MAPFILE"
    stdin = _stdin(ev, span, argv[0].s)
    if not stdin.known:
        ev.set_array(name, [stdin], span, append=False)
        ev.st.status = None
        return
    lines = stdin.s.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    values = [line if strip else line + "\n" for line in lines]
    ev.set_array(name, [Text.lit(v) for v in values], span, append=False)
    ev.st.status = 0


def b_let(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    result = EMPTY
    for arg in argv[1:]:
        result = ev.arithmetic(arg, span)
    ev.st.status = None if not result.known else (1 if result.s in ("", "0") else 0)


def b_test(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    args = argv[1:]
    if argv[0].s == "[":
        if not args or args[-1].s != "]":
            ev.st.status = 2
            return
        args = args[:-1]
    result = posix_test(ev, args, span)
    ev.st.status = None if result is None else (0 if result is True else (2 if result == 2 else 1))


def b_getopts(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    ev.st.status = 1  # scripts are started without options


def b_mkdir(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    for arg in argv[1:]:
        if arg.s.startswith("-") or not arg.known:
            continue
        key = ev.files.fs_key(arg.s)
        while key not in ("", "/", ".") and key not in ev.st.fs.dirs:
            ev.st.fs.dirs.add(key)
            key = posixpath.dirname(key)
    ev.st.status = 0


def b_touch(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    for arg in argv[1:]:
        if arg.known and not arg.s.startswith("-"):
            key = ev.files.fs_key(arg.s)
            ev.st.fs.files.setdefault(key, EMPTY)
    ev.st.status = 0


def b_rm(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    for arg in argv[1:]:
        if arg.known and not arg.s.startswith("-"):
            key = ev.files.fs_key(arg.s)
            ev.st.fs.files.pop(key, None)
            ev.st.fs.dirs.discard(key)
    ev.st.status = 0


def b_cp(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    paths = [a for a in argv[1:] if not a.s.startswith("-")]
    if len(paths) == 2 and all(p.known for p in paths):
        content = ev.files.read_file(paths[0], span)
        if content is not None:
            ev.files.write_file(paths[1].s, content, append=False)
        if argv[0].s == "mv":
            ev.st.fs.files.pop(ev.files.fs_key(paths[0].s), None)
    ev.st.status = 0


def b_cat(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    files = [a for a in argv[1:] if not (a.s.startswith("-") and a.s != "-")]
    if not files:
        ev.write_out(_stdin(ev, span, "cat"), span)
    else:
        for path in files:
            content = _stdin(ev, span, "cat") if path.s == "-" else ev.files.read_file(path, span)
            if content is not None:
                ev.write_out(content, span)
    ev.st.status = 0


def b_tee(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    append = any(a.s in ("-a", "--append") for a in argv[1:])
    content = _stdin(ev, span, "tee")
    for path in argv[1:]:
        if path.s.startswith("-") or not path.known:
            continue
        if path.s != "/dev/null":
            ev.files.write_file(path.s, content, append=append)
    ev.write_out(content, span)
    ev.st.status = 0


def b_noop(ev: Interp, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
    ev.st.status = 0


BUILTINS: dict[str, Handler] = {
    ":": b_true,
    "true": b_true,
    "false": b_false,
    "echo": b_echo,
    "printf": b_printf,
    "set": b_set,
    "shift": b_shift,
    "source": b_source,
    ".": b_source,
    "eval": b_eval,
    "exit": b_exit,
    "return": b_return,
    "break": b_break,
    "continue": b_break,
    "cd": b_cd,
    "pushd": b_cd,
    "popd": b_cd,
    "pwd": b_pwd,
    "read": b_read,
    "mapfile": b_mapfile,
    "readarray": b_mapfile,
    "let": b_let,
    "test": b_test,
    "[": b_test,
    "getopts": b_getopts,
    "mkdir": b_mkdir,
    "touch": b_touch,
    "rm": b_rm,
    "cp": b_cp,
    "mv": b_cp,
    "cat": b_cat,
    "tee": b_tee,
    "trap": b_noop,
    "wait": b_noop,
    "shopt": b_noop,
    "ulimit": b_noop,
    "umask": b_noop,
    "sleep": b_noop,
    "alias": b_noop,
    "hash": b_noop,
    "ln": b_noop,
    "chmod": b_noop,
    "chown": b_noop,
    "kill": b_noop,
    "disown": b_noop,
    "sync": b_noop,
}


# --- whitelisted external commands (pure functions of arguments and input) --------------------


def _filter_input(ev: Interp, files: list[Text], span: SourceSpan, name: str) -> Text:
    if not files:
        return _stdin(ev, span, name)
    parts: list[Text] = []
    for path in files:
        content = ev.files.read_file(path, span)
        parts.append(content if content is not None else EMPTY)
    return Text.join(parts)


def p_dirname(ev: Interp, argv: list[Text], span: SourceSpan) -> bool:
    args = [a for a in argv[1:] if not a.s.startswith("-")]
    out = "".join(purecmd.dirname(a.s) + "\n" for a in args)
    _emit(ev, out, _taints(args), span)
    ev.st.status = 0 if args else 1
    return True


def p_basename(ev: Interp, argv: list[Text], span: SourceSpan) -> bool:
    args = [a.s for a in argv[1:]]
    suffix = ""
    multiple = False
    names: list[str] = []
    index = 0
    while index < len(args):
        if args[index] == "-s" and index + 1 < len(args):
            suffix, multiple = args[index + 1], True
            index += 2
            continue
        if args[index] == "-a":
            multiple = True
            index += 1
            continue
        names.append(args[index])
        index += 1
    if not multiple and len(names) == 2:
        names, suffix = names[:1], names[1]
    out = "".join(purecmd.basename(n, suffix) + "\n" for n in names)
    _emit(ev, out, _taints(argv[1:]), span)
    ev.st.status = 0 if names else 1
    return True


def p_seq(ev: Interp, argv: list[Text], span: SourceSpan) -> bool:
    if not all(a.known for a in argv):
        ev.opaque_command(argv, span, "seq with arguments that are not known")
        return True
    out, status = purecmd.seq([a.s for a in argv[1:]])
    ev.budget.check_string(len(out), span.file, span.line)
    _emit(ev, out, frozenset(), span)
    ev.st.status = status
    return True


def _filter(name: str) -> Pure:
    def run(ev: Interp, argv: list[Text], span: SourceSpan) -> bool:
        args = [a.s for a in argv[1:]]
        if not all(a.known for a in argv[1:]):
            return False
        files: list[Text] = []
        if name == "grep":
            args, operands = _split_grep(args)
            files = [Text.lit(p) for p in operands]
        elif name in ("head", "tail", "wc", "sort", "uniq", "cut", "tr"):
            operands = [a for a in args if not a.startswith("-")]
            option_values = _option_values(name, args)
            files = (
                [] if name == "tr" else [Text.lit(p) for p in operands if p not in option_values]
            )
            args = [a for a in args if a not in [f.s for f in files]]
        source = _filter_input(ev, files, span, name)
        if not source.known:
            # filtering an unknown text gives an unknown text: never compute on a guess
            # (`$(nvidia-smi -L | wc -l)` is not 0)
            ev.write_out(Text.lit(placeholder(name, "derived"), None, source.taints), span)
            ev.st.status = None
            return True
        result: tuple[str, int] | None
        if name == "grep":
            result = purecmd.grep(args, source.s)
        elif name in ("head", "tail"):
            result = purecmd.head_tail(name, args, source.s)
        elif name == "tr":
            result = purecmd.tr(args, source.s)
        elif name == "cut":
            result = purecmd.cut(args, source.s)
        elif name == "wc":
            result = purecmd.wc(args, source.s)
        else:
            result = purecmd.sort_uniq(name, args, source.s)
        if result is None:
            return False
        out, status = result
        _emit(ev, out, source.taints, span)
        ev.st.status = None if source.taints else status
        return True

    return run


def _split_grep(args: list[str]) -> tuple[list[str], list[str]]:
    """grep arguments → (options and ``-e`` patterns, file operands)."""
    options: list[str] = []
    found: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "-e" and index + 1 < len(args):
            found.append(args[index + 1])
            index += 2
            continue
        if arg.startswith("-") and arg != "-" and not operands:
            options.append(arg)
        else:
            operands.append(arg)
        index += 1
    if not found and operands:
        found.append(operands.pop(0))
    return options + [x for p in found for x in ("-e", p)], operands


def _option_values(name: str, args: list[str]) -> set[str]:
    takes_value = {"head": {"-n", "-c"}, "tail": {"-n", "-c"}, "cut": {"-d", "-f", "-c"}}
    values: set[str] = set()
    for index, arg in enumerate(args[:-1]):
        if arg in takes_value.get(name, set()):
            values.add(args[index + 1])
    return values


def _text_tool(
    name: str, model: Callable[[Sequence[str], textutils.Read], tuple[str, int] | None]
) -> Pure:
    """``paste``/``sed``/``awk`` on known input; unknown input gives an unknown output."""

    def run(ev: Interp, argv: list[Text], span: SourceSpan) -> bool:
        if not all(a.known for a in argv[1:]):
            return False
        texts: list[Text] = []

        def read(operand: str | None) -> str | None:
            if operand is None:
                text = _stdin(ev, span, name)
            else:
                text = ev.files.read_file(Text.lit(operand), span) or EMPTY
            texts.append(text)
            return text.s if text.known else None

        result = model([a.s for a in argv[1:]], read)
        taints = _taints(texts)
        if taints:
            # filtering an unknown text gives an unknown text: never compute on a guess
            ev.write_out(Text.lit(placeholder(name, "derived"), None, taints), span)
            ev.st.status = None
            return True
        if result is None:
            return False
        out, status = result
        ev.budget.check_string(len(out), span.file, span.line)
        _emit(ev, out, frozenset(), span)
        ev.st.status = status
        return True

    return run


PURE: dict[str, Pure] = {
    "paste": _text_tool("paste", textutils.paste),
    "sed": _text_tool("sed", textutils.sed),
    "awk": _text_tool("awk", textutils.awk),
    "dirname": p_dirname,
    "basename": p_basename,
    "seq": p_seq,
    **{name: _filter(name) for name in ("grep", "head", "tail", "tr", "cut", "wc", "sort", "uniq")},
}

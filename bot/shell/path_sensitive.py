"""Path-sensitive evaluation: every way the run-time conditions can go, then a join.

A condition that depends on a value known only at run time (``[[ -d "$dir" ]]``, ``grep -q
ACTIVE /sys/…``) is a *decision* when its branches lead to different places (a different
value, an early ``return``, ``break`` or ``exit``, the launch on one side only). The script
is evaluated once per combination of decisions (depth first, each run replaying the choices
of the one before it), bounded by the step budget and :data:`MAX_PATHS`. Then:

* paths that exit are not launch lines (they are listed as assumptions, with their condition);
* every launching path starts the same argv/env → that line, and each decision is listed as
  "assumed irrelevant: decides only …";
* paths launch different lines → :class:`Alternative` lines, each with the conditions that
  select it; the common line keeps what they share and a named unknown where they differ.

Beyond the bounds the single merged evaluation is used (values that differ become unknown).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from bot.argv import option_name, option_of
from bot.placeholders import placeholder
from bot.shell.budget import Budget, Limits
from bot.shell.fork import Choice
from bot.shell.interp import Evaluator
from bot.shell.result import Alternative, ScriptResult, Unresolved, mentions

MAX_PATHS = 64  # evaluations of one script for one input environment (each a full run)

Make = Callable[[Sequence[int] | None, Budget], Evaluator]
Run = tuple[ScriptResult, tuple[Choice, ...]]


def evaluate_paths(make: Make, limits: Limits) -> ScriptResult:
    """Evaluate the script once with every undecidable condition joined; where a join made a
    value unknown that reaches the launch, evaluate every path through those conditions."""
    evaluator = make(None, Budget(limits))
    result = evaluator.run()
    split = _responsible(evaluator, result)
    if not split:
        return _irrelevant([(result, evaluator)], result)
    runs: list[tuple[ScriptResult, Evaluator]] = []
    for _ in range(4):
        found = _enumerate(make, limits, frozenset(split))
        if isinstance(found, str):
            return _merged(result, found)
        runs = found
        more = set().union(*(_responsible(ev, r) for r, ev in runs))
        if more <= split:
            break
        split |= more
    if len(runs) == 1:
        return _irrelevant(runs, runs[0][0])
    return _join([(r, tuple(ev.paths.trail)) for r, ev in runs], runs, result)


def _responsible(evaluator: Evaluator, result: ScriptResult) -> set[tuple[str, int]]:
    """Conditions whose join made something unknown that reaches the launch."""
    if result.status != "launched":
        return set()
    return {
        (item.file, item.line)
        for item in result.unresolved
        if item.line is not None and (item.file, item.line) in evaluator.paths.joins
    }


def _irrelevant(runs: list[tuple[ScriptResult, Evaluator]], result: ScriptResult) -> ScriptResult:
    """List the joined conditions that changed nothing the launch sees."""
    reached = {(u.file, u.line) for u in result.unresolved}
    notes: dict[Unresolved, None] = dict.fromkeys(result.assumptions)
    for _, evaluator in runs:
        for (file, line), (why, decides) in evaluator.paths.joins.items():
            if (file, line) in reached or result.status != "launched":
                continue
            notes[Unresolved(why, f"assumed irrelevant: decides only {decides}", file, line)] = None
    return replace(result, assumptions=tuple(notes))


def _enumerate(
    make: Make, limits: Limits, split: frozenset[tuple[str, int]]
) -> list[tuple[ScriptResult, Evaluator]] | str:
    """Every path through the decisions at ``split`` (depth first); a string when the
    bounds are exceeded."""
    pending: list[tuple[int, ...]] = [()]
    runs: list[tuple[ScriptResult, Evaluator]] = []
    steps = 0
    while pending:
        plan = pending.pop()
        if len(runs) >= MAX_PATHS:
            return f"more than {MAX_PATHS} paths"
        evaluator = make(plan, Budget(limits))
        evaluator.paths.split_at = split
        result = evaluator.run()
        steps += result.steps
        if steps > limits.max_steps:
            return f"their evaluation exceeds {limits.max_steps} steps"
        trail = tuple(evaluator.paths.trail)
        runs.append((result, evaluator))
        taken = tuple(choice.taken for choice in trail)
        for depth in range(len(trail) - 1, len(plan) - 1, -1):
            for other in range(len(trail[depth].labels) - 1, -1, -1):
                if other != trail[depth].taken:
                    pending.append((*taken[:depth], other))
    return runs


def _merged(result: ScriptResult, why: str) -> ScriptResult:
    note = Unresolved(
        "paths through run-time conditions",
        f"not evaluated one by one ({why}); the branches were merged, values that differ "
        "between them are unknown",
        result.script,
        None,
    )
    return replace(result, assumptions=(*result.assumptions, note))


def _key(result: ScriptResult) -> tuple[object, ...]:
    files = tuple(sorted(result.read_files().items()))
    return (result.argv, tuple(result.env.items()), result.env_unset, files)


def _decision(choice: Choice) -> tuple[str, int, str]:
    return (choice.span.file, choice.span.line, choice.why)


def _join(
    runs: list[Run], evaluated: list[tuple[ScriptResult, Evaluator]], merged: ScriptResult
) -> ScriptResult:
    launched = [run for run in runs if run[0].status == "launched"]
    if not launched:
        # every path exits (or ends): the merged evaluation says why, as before
        return replace(merged, paths=len(runs))
    groups: dict[tuple[object, ...], list[Run]] = {}
    for run in launched:
        groups.setdefault(_key(run[0]), []).append(run)
    lines = list(groups.values())
    # a decision matters when the launch lines differ in which way it went
    taken: dict[tuple[str, int, str], set[int]] = {}
    for index, group in enumerate(lines):
        for _, trail in group:
            for choice in trail:
                taken.setdefault(_decision(choice), set()).add(index)
    relevant = {
        key for key, seen in taken.items() if len(lines) > 1 and seen != set(range(len(lines)))
    }
    relevant |= _splitting(lines)
    assumptions: dict[Unresolved, None] = {}
    unresolved: dict[Unresolved, None] = {}
    reach: dict[Unresolved, tuple[str, ...]] = {}
    for result, _ in launched:
        assumptions.update(dict.fromkeys(result.assumptions))
        unresolved.update(dict.fromkeys(result.unresolved))
        for item, places in result.reach.items():
            reach[item] = tuple(dict.fromkeys((*reach.get(item, ()), *places)))
    seen_choices: dict[tuple[str, int, str], Choice] = {}
    for _, trail in runs:
        for choice in trail:
            seen_choices.setdefault(_decision(choice), choice)
    for key, choice in seen_choices.items():
        if key in relevant:
            continue
        why = f"assumed irrelevant: decides only {choice.decides}"
        why += (
            "; every path through it that starts the server launches the same line"
            if len(lines) == 1
            else "; it does not select between the launch lines"
        )
        item = Unresolved(choice.why, why, choice.span.file, choice.span.line)
        assumptions[item] = None
    for result, trail in runs:
        if result.status == "launched":
            continue
        where = result.launch
        what = f"exit at {where}" if where is not None else "a path that ends without a launch"
        conditions = "; ".join(choice.condition() for choice in trail) or "always"
        detail = result.invalid or result.reason or ""
        item = Unresolved(
            what,
            f"taken only when {conditions}: a path that exits is not a launch line ({detail})",
            where.file if where is not None else result.script,
            where.line if where is not None else None,
        )
        assumptions[item] = None
    first = launched[0][0]
    if len(lines) == 1:
        single = replace(
            first,
            reach=reach,
            unresolved=tuple(unresolved),
            assumptions=tuple(assumptions),
            paths=len(runs),
        )
        return _irrelevant(evaluated, single)
    alternatives = tuple(
        Alternative(
            group[0][0].argv,
            dict(group[0][0].env),
            group[0][0].env_unset,
            _conditions(group, relevant),
        )
        for group in lines
    )
    reads = "".join(
        f", which {choice.why.split(', which ', 1)[1]}"
        for key, choice in seen_choices.items()
        if key in relevant and ", which " in choice.why
    )
    argv, env, located = _common(alternatives, first)
    located += _files_differ([group[0][0] for group in lines], alternatives, first)
    for item, places in located:
        item = replace(item, why=item.why + reads)
        unresolved[item] = None
        reach[item] = places
    several = replace(
        first,
        reach=reach,
        argv=argv,
        env=env,
        unresolved=tuple(unresolved),
        assumptions=tuple(assumptions),
        alternatives=alternatives,
        paths=len(runs),
    )
    return _irrelevant(evaluated, several)


def _splitting(lines: list[list[Run]]) -> set[tuple[str, int, str]]:
    """Decisions whose branches, at the same point of the path, lead to different lines."""
    out: set[tuple[str, int, str]] = set()
    index_of: dict[tuple[int, ...], set[int]] = {}
    for number, group in enumerate(lines):
        for _, trail in group:
            for depth in range(len(trail)):
                prefix = tuple(c.taken for c in trail[: depth + 1])
                index_of.setdefault(prefix, set()).add(number)
    for group in lines:
        for _, trail in group:
            for depth, choice in enumerate(trail):
                prefix = tuple(c.taken for c in trail[:depth])
                reached = [
                    index_of.get((*prefix, other), set()) for other in range(len(choice.labels))
                ]
                if len({frozenset(r) for r in reached if r}) > 1:
                    out.add(_decision(choice))
    return out


def _conditions(group: list[Run], relevant: set[tuple[str, int, str]]) -> tuple[str, ...]:
    """The relevant decisions every path of ``group`` takes the same way."""
    ways: dict[tuple[str, int, str], set[int]] = {}
    choices: dict[tuple[str, int, str], Choice] = {}
    for _, trail in group:
        for choice in trail:
            key = _decision(choice)
            if key in relevant:
                ways.setdefault(key, set()).add(choice.taken)
                choices.setdefault(key, choice)
    return tuple(
        choices[key].condition()
        for key, taken in ways.items()
        if len(taken) == 1 and all(key in {_decision(c) for c in t} for _, t in group)
    )


def _files_differ(
    results: Sequence[ScriptResult], alternatives: Sequence[Alternative], first: ScriptResult
) -> Located:
    """A file the server reads whose contents differ between the alternatives."""
    out: Located = []
    where = first.launch
    file = where.file if where is not None else first.script
    line = where.line if where is not None else None
    contents = [r.read_files() for r in results]
    for path in dict.fromkeys(p for c in contents for p in c):
        values = [c.get(path, "") for c in contents]
        if len(set(values)) == 1:
            continue
        places = tuple(f"argv:{i}" for i, word in enumerate(first.argv) if mentions(word, path))
        item = Unresolved(
            f"contents of {path}",
            "differ between the alternative launch lines, selected by "
            + " | ".join("; ".join(a.conditions) or "the other paths" for a in alternatives),
            file,
            line,
        )
        out.append((item, places))
    return out


def _flag_name(argv: Sequence[str], index: int) -> str:
    return option_of(argv, index) or f"argv[{index}]"


def _describe(values: list[str], alternatives: Sequence[Alternative]) -> str:
    parts = []
    for value, alternative in zip(values, alternatives, strict=True):
        when = "; ".join(alternative.conditions) or "on the other paths"
        parts.append(f"{value!r} when {when}" if value else f"absent when {when}")
    return "differs between the alternative launch lines: " + " | ".join(parts)


def _groups(argv: Sequence[str]) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]] | None:
    """argv → (the words before the first option, option → its words); None when an option
    repeats (then the order of groups matters and no alignment is attempted)."""
    head: list[str] = []
    groups: dict[str, tuple[str, ...]] = {}
    current: list[str] | None = None
    for token in argv:
        if token.startswith("-"):
            if current is not None:
                name = option_name(current[0])
                if name in groups:
                    return None
                groups[name] = tuple(current)
            current = [token]
        elif current is None:
            head.append(token)
        else:
            current.append(token)
    if current is not None:
        name = option_name(current[0])
        if name in groups:
            return None
        groups[name] = tuple(current)
    return tuple(head), groups


Located = list[tuple[Unresolved, tuple[str, ...]]]


def _align_options(
    alternatives: Sequence[Alternative], items: Located, file: str, line: int | None
) -> list[str]:
    """Alternatives of different lengths, aligned option by option: an option present in only
    some of them, or with different words, becomes one named unknown."""
    split = [_groups(a.argv) for a in alternatives]
    heads = {s[0] for s in split if s is not None}
    if any(s is None for s in split) or len(heads) != 1:
        words = [" ".join(a.argv) for a in alternatives]
        described = _describe(words, alternatives).replace("differs", "differ", 1)
        items.append((Unresolved("the launch arguments", described, file, line), ()))
        return list(alternatives[0].argv)
    parts = [s for s in split if s is not None]
    argv = list(parts[0][0])
    order: dict[str, None] = {}
    for _, groups in parts:
        order.update(dict.fromkeys(groups))
    for name in order:
        found = [groups.get(name) for _, groups in parts]
        if all(w == found[0] for w in found) and found[0] is not None:
            argv.extend(found[0])
            continue
        argv.append(placeholder(name, "undecidable-branch"))
        values = [" ".join(w) if w is not None else "" for w in found]
        item = Unresolved(name, _describe(values, alternatives), file, line)
        items.append((item, (f"argv:{len(argv) - 1}",)))
    return argv


def _common(
    alternatives: Sequence[Alternative], first: ScriptResult
) -> tuple[tuple[str, ...], dict[str, str], Located]:
    """The line the alternatives share, a named unknown wherever they differ."""
    where = first.launch
    file = where.file if where is not None else first.script
    line = where.line if where is not None else None
    items: Located = []
    lengths = {len(a.argv) for a in alternatives}
    argv = list(alternatives[0].argv)
    if len(lengths) == 1:
        for index in range(len(argv)):
            values = [a.argv[index] for a in alternatives]
            if len(set(values)) == 1:
                continue
            flag = _flag_name(argv, index)
            if argv[index].startswith("-") and all("=" in v for v in values):
                argv[index] = f"{flag}={placeholder(flag, 'undecidable-branch')}"
                values = [v.split("=", 1)[1] for v in values]
            elif argv[index].startswith("-"):
                flag = f"argv[{index}]"
                argv[index] = placeholder(flag, "undecidable-branch")
            else:
                argv[index] = placeholder(flag, "undecidable-branch")
            item = Unresolved(flag, _describe(values, alternatives), file, line)
            items.append((item, (f"argv:{index}",)))
    else:
        argv = _align_options(alternatives, items, file, line)
    env: dict[str, str] = {}
    names: dict[str, None] = {}
    for alternative in alternatives:
        names.update(dict.fromkeys(alternative.env))
    for name in names:
        values = [a.env.get(name, "") for a in alternatives]
        present = [name in a.env for a in alternatives]
        if len(set(values)) == 1 and all(present):
            env[name] = values[0]
            continue
        env[name] = placeholder(name, "undecidable-branch")
        item = Unresolved(f"${name}", _describe(values, alternatives), file, line)
        items.append((item, (f"env:{name}",)))
    return tuple(argv), env, items


__all__ = ["MAX_PATHS", "evaluate_paths"]

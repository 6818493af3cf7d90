"""Which unresolved items of a launch line can change the served configuration.

The extractor lists everything it cannot know that reaches the argv or the environment, e.g.
``$PORT`` on fleets where the port depends on the runner node. An item whose placeholder
only appears in front-end or benchmark-only values (``--port <PORT:opaque:runner-node>``)
cannot change what the recipe would be compared on, so the row is still compared and the
item becomes a note; any other item (a placeholder in a serving flag or env var, or an
unknown whose value carries no placeholder at all) makes the row *unresolved*.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.argv import option_of
from bot.benchmarks import LaunchLine, Unresolved
from bot.placeholders import PLACEHOLDER_RE
from bot.rules import Rules
from bot.vllm.catalogue import V0_33, flag_table

INERT_CATEGORIES = frozenset({"front-end", "benchmark"})

# A value computed from unknowns is named after its expression (``$((PORT+1))``); the unknowns
# it was computed from sit wherever it sits.
_ARITH_LABEL = re.compile(r"\$\(\((.*)\)\)\Z")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _sources(placeholder_name: str) -> list[str]:
    """The variable names a placeholder stands for: itself, or those of its expression."""
    match = _ARITH_LABEL.match(placeholder_name)
    if match is None:
        return [placeholder_name]
    return [placeholder_name, *dict.fromkeys(_IDENTIFIER.findall(match.group(1)))]


@dataclass(frozen=True)
class Use:
    """Where a placeholder sits: under which flag or env var, and whether that matters."""

    where: str  # "--port", "env VLLM_X", "the model argument"
    inert: bool


def flag_is_inert(flag: str, rules: Rules) -> bool:
    """True for a front-end or benchmark-only flag (its value never changes serving)."""
    found = flag_table().lookup(flag, V0_33)
    spec = found[0].spec if found is not None else None
    long = spec.long if spec is not None else flag
    for rule in (*rules.flags.front_end, *rules.flags.benchmark_only):
        if rule.flag == long and rule.value is None:
            return True
    return spec is not None and spec.category in INERT_CATEGORIES


def placeholder_uses(launch: LaunchLine, rules: Rules) -> dict[str, list[Use]]:
    """Placeholder name → where it appears in the argv and the launch's env."""
    uses: dict[str, list[Use]] = {}
    for index, token in enumerate(launch.argv):
        names = [n for m in PLACEHOLDER_RE.finditer(token) for n in _sources(m.group(1))]
        if not names:
            continue
        flag = option_of(launch.argv, index)
        use = (
            Use(flag, flag_is_inert(flag, rules))
            if flag is not None
            else Use("a positional argument", False)
        )
        for name in names:
            uses.setdefault(name, []).append(use)
    for variable, value in launch.env.items():
        names = [n for m in PLACEHOLDER_RE.finditer(value) for n in _sources(m.group(1))]
        if not names:
            continue
        for name in names:
            uses.setdefault(name, []).append(Use(f"env {variable}", rules.env.inert(variable)))
    if launch.image and PLACEHOLDER_RE.search(launch.image):
        for match in PLACEHOLDER_RE.finditer(launch.image):
            uses.setdefault(match.group(1), []).append(Use("the image", False))
    return uses


def _use_at(launch: LaunchLine, place: str, rules: Rules) -> Use:
    """The flag or env var at ``argv:<index>`` / ``env:<NAME>``."""
    kind, _, key = place.partition(":")
    if kind == "env":
        return Use(f"env {key}", rules.env.inert(key))
    index = int(key)
    if index >= len(launch.argv):
        return Use("the launch arguments", False)
    token = launch.argv[index]
    named = PLACEHOLDER_RE.fullmatch(token)
    if named is not None and named.group(1).startswith("-"):
        flag: str | None = named.group(1)  # an option present in only some alternatives
    else:
        flag = option_of(launch.argv, index)
    if flag is None:
        where = "the model argument" if index == 2 else "a positional argument"
        return Use(where, False)
    return Use(flag, flag_is_inert(flag, rules))


@dataclass(frozen=True)
class UnresolvedImpact:
    serving: tuple[Unresolved, ...]  # may change the served configuration: row unresolved
    # where each serving item sits ("--max-model-len", "env VLLM_X", "the model argument")
    serving_where: tuple[tuple[str, ...], ...]
    inert: tuple[tuple[Unresolved, tuple[str, ...]], ...]  # (item, where it sits): a note


def unresolved_impact(launch: LaunchLine, rules: Rules) -> UnresolvedImpact:
    if not launch.unresolved:
        return UnresolvedImpact((), (), ())
    uses = placeholder_uses(launch, rules)
    serving: list[Unresolved] = []
    serving_where: list[tuple[str, ...]] = []
    inert: list[tuple[Unresolved, tuple[str, ...]]] = []
    for item in launch.unresolved:
        places = launch.reach.get(item)
        if places:
            found: list[Use] | None = [_use_at(launch, place, rules) for place in places]
        else:
            name = item.what[1:] if item.what.startswith("$") else item.what
            found = uses.get(name)
        if found and all(use.inert for use in found):
            inert.append((item, tuple(dict.fromkeys(use.where for use in found))))
        else:
            serving.append(item)
            serving_where.append(tuple(dict.fromkeys(use.where for use in found or ())))
    return UnresolvedImpact(tuple(serving), tuple(serving_where), tuple(inert))


def describe_unresolved(item: Unresolved, reaches: Sequence[str] = ()) -> str:
    """``output of `nvidia-smi -L` (benchmarks/…/x.sh:8): the output of a host probe …``,
    with ``, in --tensor-parallel-size`` when it is known where the item sits."""
    where = item.file if item.line is None else f"{item.file}:{item.line}"
    sits = f", in {', '.join(reaches)}" if reaches else ""
    return f"{item.what} ({where}{sits}): {item.why}"

"""One statement, one truth: checks run on each alignment PR's texts before they are written.

Each check is a small function over the analysis (:class:`~bot.align.result.RecipeOutcome`)
and the texts a reader sees (the PR body, the guide sections the patch writes, the CLI's
console lines). A finding is a recipe-sync bug, never the benchmark's: the texts say two
things that cannot both be true. The caller shows it (a visible note in the body, the
console, a nonzero exit status); nothing here changes a text to hide it.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot import markdown as md
from bot.align.reproduction.blocks import command_text
from bot.align.reproduction.model import ReproCommand, ReproSection
from bot.align.reproduction.sections import recipe_label, topology_label
from bot.align.result import AlignRun, RecipeOutcome
from bot.placeholders import PLACEHOLDER_RE
from bot.vllm.argv import flag_value, option_name


@dataclass(frozen=True)
class Finding:
    check: str  # the check's name
    message: str  # the two statements that disagree


@dataclass(frozen=True)
class Texts:
    """What one alignment PR says, as written."""

    body: str
    guide: tuple[tuple[ReproSection, ReproCommand, str], ...]  # each command's Markdown
    console: tuple[str, ...] = ()

    def all(self) -> Iterator[str]:
        yield self.body
        yield from (text for _, _, text in self.guide)
        yield from self.console


@dataclass(frozen=True)
class Command:
    """The generated command a body shows (its ``### Generated`` block), parsed back."""

    env: Mapping[str, str]
    argv: tuple[str, ...]


Check = Callable[[AlignRun, RecipeOutcome, Texts], list[str]]

_SPAN = re.compile(r"(`+)(.+?)\1")


def spans(text: str) -> list[str]:
    """The contents of the inline code spans in ``text``."""
    return [m.group(2).strip() if m.group(2).strip() else m.group(2) for m in _SPAN.finditer(text)]


def generated_command(body: str) -> Command | None:
    """The ``### Generated …`` block of a body (None in a guide-only body)."""
    _, found, rest = body.partition("\n### Generated ")
    if not found:
        return None
    block = re.search(r"^(`{3,})bash\n(.*?)\n\1$", rest, re.S | re.M)
    if block is None:
        return None
    text = block.group(2).replace("\\\n", " ")
    head, serve, tail = text.partition("vllm serve")
    try:
        env_words = shlex.split(head)
        argv = tuple(shlex.split(serve + tail))
    except ValueError:
        return None
    env = dict(w.split("=", 1) for w in env_words if "=" in w)
    return Command(env, argv)


def guide_texts(outcome: RecipeOutcome) -> tuple[tuple[ReproSection, ReproCommand, str], ...]:
    """Each reproduction command's Markdown, as the patch writes it into the guide."""
    return tuple(
        (placed.section, command, "\n".join(command_text(placed.section, command)))
        for placed in outcome.guide
        if placed.action != "skipped"
        for command in placed.section.commands
    )


# ------------------------------------------------------------------------------ claims

_NOT_DEFAULT = "NOT part of the default command"
_BASH_BLOCK = re.compile(r"^\s*(`{3,})bash\n(.*?)^\s*\1\s*$", re.S | re.M)


def _benchmark_only_claims(
    run: AlignRun, outcome: RecipeOutcome, texts: Texts
) -> Iterator[tuple[str, str]]:
    """(where, code span) of every setting a text calls benchmark-only or not part of the
    default command, as a flag with its value or ``NAME=value``: the body's lists, and the
    guide's deltas from the recipe command the body shows (another strategy's command has
    other deltas)."""
    profile = outcome.plan.targets[0].profile
    shown = recipe_label(profile, run.names.hw_label(profile.hardware))
    guide = [(c, text) for _, c, text in texts.guide if c.base == shown]
    exported = {n: v for c, _ in guide for _, n, v in c.env}
    for line in texts.body.splitlines():
        if line.startswith("**Benchmark-only**"):
            yield from (("body: benchmark-only list", s) for s in spans(line))
        if line.startswith("- The guide ") and "stay there, not in the recipe" in line:
            # env names: the value each is exported with beside the shown command
            found = re.findall(r"(?:; env|benchmark-only exports) ([^)]*?)(?:\)| stay)", line)
            for name in (s for clause in found for s in spans(clause)):
                if name in exported:
                    yield "body: guide bullet", f"{name}={exported[name]}"
    for _, text in guide:
        under = False
        for line in text.splitlines():
            if line.startswith("- "):
                under = _NOT_DEFAULT in line
            elif under and line.startswith(("  - Add ", "  - Use ")):
                said = spans(line)[:1]  # the setting; later spans name the recipe's side
                yield from (("guide: benchmark-only delta", s) for s in said)
            elif under and line.startswith("  - Export "):
                said = spans(line.split(" (", 1)[0])  # not the recipe's value beside them
                yield from (("guide: benchmark-only export", s) for s in said)
        for block in _BASH_BLOCK.finditer(text):
            under = False
            for line in block.group(2).splitlines():
                line = line.strip()
                if line.startswith("#"):
                    under = _NOT_DEFAULT in line
                elif under and line.startswith("export "):
                    name, _, value = line[len("export ") :].partition("=")
                    try:
                        words = shlex.split(value) or [""]
                    except ValueError:
                        continue
                    yield "guide: benchmark-only export", f"{name}={words[0]}"
                elif not line:
                    under = False


def _passes(command: Command, claim: str) -> bool:
    """Does the generated command set what ``claim`` (a flag [value] or an env setting)
    names? A value only known at run time (``$…``) is not comparable: never a match."""
    if claim.startswith("-"):
        try:
            words = shlex.split(claim)
        except ValueError:
            words = claim.split(" ", 1)
        flag, value = words[0], " ".join(words[1:])
        if "$" in claim or flag not in {option_name(t) for t in command.argv}:
            return False
        return not value or flag_value(command.argv, flag) == value
    name, equals, value = claim.partition("=")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name not in command.env:
        return False
    return not equals or command.env[name] == value


def benchmark_only_absent(run: AlignRun, outcome: RecipeOutcome, texts: Texts) -> list[str]:
    """A setting called benchmark-only / not part of the default command is not in the
    generated command the body shows."""
    command = generated_command(texts.body)
    if command is None or not outcome.plan.targets:
        return []
    return [
        f"{where} calls {claim!r} benchmark-only, but the generated command sets it"
        for where, claim in dict.fromkeys(_benchmark_only_claims(run, outcome, texts))
        if _passes(command, claim)
    ]


_MATRIX = re.compile(r"before and after: (\d+) moved, (.*?); (\d+) unchanged\.")
_GUIDE_MATRIX = re.compile(
    r"(\d+) renderings of this recipe compared before and after; (\d+) moved"
)
_CONSOLE = re.compile(r"(\d+) of (\d+) renderings moved(.*)$")


def counts_agree(run: AlignRun, outcome: RecipeOutcome, texts: Texts) -> list[str]:
    """Every count of the regression matrix a text states is the matrix's, and no text
    says "all expected" when a rendering moved unexpectedly or an expected one did not."""
    matrix = outcome.matrix
    if matrix is None:
        return []
    total, moved = len(matrix.rows), len(matrix.moved)
    out: list[str] = []
    for found in _MATRIX.finditer(texts.body):
        if (int(found.group(1)), int(found.group(3))) != (moved, total - moved):
            out.append(f"body says {found.group(0)!r}; the matrix has {moved} of {total} moved")
        if matrix.unexpected and "each only where an edited node applies" in found.group(2):
            out.append("body says each moved only where an edit applies; some moved unexpectedly")
    for found in _GUIDE_MATRIX.finditer(texts.body):
        if (int(found.group(1)), int(found.group(2))) != (total, moved):
            out.append(f"body says {found.group(0)!r}; the matrix has {moved} of {total} moved")
    if matrix.ineffective and "Expected to move but unchanged" not in texts.body:
        out.append(f"{len(matrix.ineffective)} expected to move but unchanged; the body omits it")
    for line in texts.console:
        said = _CONSOLE.search(line)
        if said and (int(said.group(1)), int(said.group(2))) != (moved, total):
            out.append(f"console says {line.strip()!r}; the matrix has {moved} of {total} moved")
    if matrix.ineffective or matrix.unexpected:
        for text in texts.all():
            if "all expected" in text:
                out.append(
                    f"a text says 'all expected', but {len(matrix.ineffective)} expected "
                    f"did not move and {len(matrix.unexpected)} moved unexpectedly"
                )
                break
    return out


# capture-size lists: a JSON field, a dotted flag or the flag vLLM spells for them
_CAPTURE_TEXT = re.compile(
    r"(?:cudagraph_capture_sizes[\"']?\s*[:=\s]\s*'?|--cudagraph-capture-sizes\s+'?)"
    r"(\[[0-9,\s]*\])"
)


def _capture_lists(argv: Sequence[str]) -> list[tuple[int, ...]]:
    out = []
    for found in _CAPTURE_TEXT.finditer(" ".join(argv)):
        out.append(tuple(json.loads(found.group(1))))
    for index, token in enumerate(argv):
        if option_name(token) != "--compilation-config" or index + 1 >= len(argv):
            continue
        try:
            value: Any = json.loads(argv[index + 1])
        except ValueError:
            continue
        sizes = value.get("cudagraph_capture_sizes") if isinstance(value, dict) else None
        if isinstance(sizes, list):
            out.append(tuple(sizes))
    return out


def _shown_lists(text: str, concs: Sequence[int]) -> Iterator[tuple[int | None, tuple[int, ...]]]:
    """(the concurrency a capture-size list is shown for, the list): a case arm's own, else
    the CONC the block sets (the only concurrency when it sets none; None when several)."""
    block_conc = re.search(r"^\s*CONC=(\d+)", text, re.M)
    shown: int | None = int(block_conc.group(1)) if block_conc else None
    if shown is None and len(set(concs)) == 1:
        shown = concs[0]
    for line in text.splitlines():
        arm = re.match(r"\s*(\d+)\) ", line)
        for found in _CAPTURE_TEXT.finditer(line):
            yield (int(arm.group(1)) if arm else shown), tuple(json.loads(found.group(1)))


def conc_lists_own(run: AlignRun, outcome: RecipeOutcome, texts: Texts) -> list[str]:
    """A capture-size list shown for a concurrency is the one the benchmark computed for
    that concurrency (not another concurrency's)."""
    out: list[str] = []
    for section, command, text in texts.guide:
        lists: dict[tuple[int, ...], set[int]] = {}
        evals: set[tuple[int, ...]] = set()  # the eval arm's (a command that says it is its)
        for key in run.keys:
            if key.key.key not in section.keys:
                continue
            for point in key.points:
                launch, profile = point.launch, point.profile
                if launch is None or profile is None or launch.point.conc not in command.concs:
                    continue
                if (profile.recipe_path, profile.variant, profile.hardware) != (
                    section.recipe_path,
                    section.variant,
                    section.hardware,
                ) or launch.point.scenario != section.scenario:
                    continue
                if topology_label(launch.point) != command.topology:
                    continue
                for sizes in _capture_lists(launch.argv):
                    lists.setdefault(sizes, set()).add(launch.point.conc)
                    if launch.arm == "eval":
                        evals.add(sizes)
        for conc, sizes in _shown_lists(text, command.concs):
            ran = lists.get(sizes)
            if ran is None:
                continue  # not a list of these launch lines (a rule's, another flag's)
            eval_own = command.arm.startswith("the eval arm") and sizes in evals
            if conc is None and len(lists) > 1 and not eval_own:
                out.append(
                    f"{section.heading} / {command.topology}: one capture-size list shown for "
                    f"concurrencies {sorted(command.concs)} that computed different lists"
                )
            elif conc is not None and conc not in ran:
                out.append(
                    f"{section.heading} / {command.topology}: CONC={conc} shows the "
                    f"capture-size list of concurrency {sorted(ran)}"
                )
    return list(dict.fromkeys(out))


def verified_wording(run: AlignRun, outcome: RecipeOutcome, texts: Texts) -> list[str]:
    """Words about verification agree with the verification marks of each GPU."""
    out: list[str] = []
    every = "\n".join(texts.all())
    for verification in outcome.plan.verifications:
        hw = verification.hardware
        label = run.names.hw_label(hw)
        if verification.marked:
            denials = (f"Not marked verified on {label}", f"`meta.hardware.{hw}` is not marked")
            out += [f"{label} is verified, but a text says {d!r}" for d in denials if d in every]
            continue
        claims = (
            f"Verified on {label}:",
            f"{label} is already verified",
            f"Record `{hw}: verified`",
            f"`meta.hardware.{hw}` is already verified",
            "than the one verified",
        )
        out += [f"{label} is not verified, but a text says {c!r}" for c in claims if c in every]
    return out


_REJECTS = re.compile(r"\b(?:vLLM (?:would )?rejects?|would reject|is rejected)\b")
_REJECTED_KEY = re.compile(r"key '([^']+)' is rejected")


def _json_keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _json_keys(item)


def no_rejected_value_passed(run: AlignRun, outcome: RecipeOutcome, texts: Texts) -> list[str]:
    """No text says vLLM rejects a flag, value or key that the generated command passes."""
    command = generated_command(texts.body)
    if command is None:
        return []
    keys: set[str] = set()
    for token in command.argv:
        try:
            keys.update(_json_keys(json.loads(token)))
        except ValueError:
            continue
    out: list[str] = []
    for text in texts.all():
        for line in text.splitlines():
            if not _REJECTS.search(line):
                continue
            for claim in spans(line):
                if claim.startswith("-") and _passes(command, claim):
                    out.append(
                        f"a text says vLLM rejects {claim!r}; the generated command passes it"
                    )
            for key in _REJECTED_KEY.findall(line):
                if key in keys:
                    out.append(
                        f"a text says vLLM rejects key {key!r}; the generated command passes it"
                    )
    return list(dict.fromkeys(out))


def shown_placeholders(text: str) -> list[str]:
    """What ``text`` prints of the evaluator's placeholders: a value known only at run time
    is named as the script names it (``$PORT``) or said to be unknown, never printed so."""
    return [
        f"the evaluator's placeholder {found!r} is shown as a value"
        for found in dict.fromkeys(m.group(0) for m in PLACEHOLDER_RE.finditer(text))
    ]


def no_placeholder_shown(run: AlignRun, outcome: RecipeOutcome, texts: Texts) -> list[str]:
    return [found for text in texts.all() for found in shown_placeholders(text)]


CHECKS: tuple[Check, ...] = (
    no_placeholder_shown,
    benchmark_only_absent,
    counts_agree,
    conc_lists_own,
    verified_wording,
    no_rejected_value_passed,
)


def check_texts(
    run: AlignRun, outcome: RecipeOutcome, body: str, console: Sequence[str] = ()
) -> tuple[Finding, ...]:
    """Every finding of :data:`CHECKS` on one alignment PR (empty: its texts agree); a
    body's own bug note (:func:`bug_note`) is not read as a statement of it."""
    if body.startswith(NOTE_HEAD):
        body = body.split("\n\n", 1)[1] if "\n\n" in body else ""
    texts = Texts(body, guide_texts(outcome), tuple(console))
    return tuple(
        Finding(check.__name__, message)
        for check in CHECKS
        for message in check(run, outcome, texts)
    )


NOTE_HEAD = "> [!WARNING]\n> **recipe-sync bug:**"


def bug_note(findings: Sequence[Finding]) -> str:
    """The visible note a body carries when its texts contradict themselves."""
    items = "".join(f"\n> - `{f.check}`: {md.text(f.message)}" for f in findings)
    return (
        f"{NOTE_HEAD} this text failed its consistency check "
        "(two statements below cannot both be true); please report it with this PR's link. "
        f"Findings:{items}\n\n"
    )

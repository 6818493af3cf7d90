"""What people read says "1 model", "2 edits": never "model(s)" or "1 models" (issue #35
item 5). The seed's texts carried "1 models", "1 offered setting and their history" and
"3 run(s) or job(s)"; the guide-only PR's CLI line said "0 edits"."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from bot.align.model import FlagNote
from bot.align.reproduction.blocks import MAX_LINES, _within, wrap
from bot.align.reproduction.model import ReproSection
from bot.align.result import AlignRun, RecipeOutcome
from bot.present.pr_text import pr_contents
from bot.present.sections.common import FULL
from bot.present.sections.lists import UNKNOWN_WHY, lists_section
from tests.align.reproduction_fixture import TP4_KEY, WIDGET, build, run

# "1 <noun>s": a plural after one (the words of the texts that end in s but are singular
# are listed: "1 represents" is a status count, "1 class" a knob class)
ONE_PLURAL = re.compile(r"(?<![\d.,])\b1 ((?!represents\b|class\b|process\b)[a-z-]+s)\b")


def _defects(text: str) -> list[str]:
    return re.findall(r"\w+\(s\)", text) + ONE_PLURAL.findall(text)


def test_the_rule_finds_the_old_defects() -> None:
    old = "1 models (1 with x); 1 offered setting; Not cited: 3 run(s) or job(s); 1 affected key(s)"
    assert _defects(old) == ["run(s)", "job(s)", "key(s)", "models"]


def test_the_seed_texts_have_real_plurals(seed_out: Path) -> None:
    for name in ("pr-body.md", "comment.md"):
        text = (seed_out / name).read_text(encoding="utf-8")
        assert _defects(text) == [], name
    body = (seed_out / "pr-body.md").read_text(encoding="utf-8")
    assert "1 model (1 with `recommended_command`" in body
    assert "2 offered settings and their history" in body
    assert "Not cited: 3 runs or jobs" in body


def _only(outcomes: tuple[RecipeOutcome, ...]) -> RecipeOutcome:
    assert [o.recipe_path for o in outcomes] == [WIDGET]
    return outcomes[0]


def test_a_guide_only_pr_says_so_instead_of_0_edits(tmp_path: Path) -> None:
    bench, recipes = build(tmp_path)
    outcome = _only(run(bench, recipes, (TP4_KEY,)).outcomes)
    assert outcome.guide_only
    assert pr_contents(outcome) == "no YAML edit, 1 guide section"


def _long_block() -> tuple[list[str], list[str], ReproSection]:
    """A block one line too long whose last setting wraps over four lines: exactly that one
    setting gives way."""
    section = ReproSection(
        block_id="mi355x",
        recipe_path=WIDGET,
        variant="default",
        hardware="mi355x",
        scenario="fixed-seq-len",
        keys=(TP4_KEY,),
        heading="Reproduction",
        image="vllm/vllm-openai-rocm:nightly",
        commands=(),
        evidence=(),
        after=(),
        bench_ref="acme/bench#7",
        bench_url=None,
        head_sha="",
        recipe_label="MI355X",
    )
    short = [f"- Add `--flag-{n}`" for n in range(MAX_LINES - 4)]
    long = "- Export " + " ".join(f"`VAR_{n}=1`" for n in range(30))
    return ["# Reproduction"], [*short, long], section


def test_one_setting_left_out_of_a_guide_block_is_singular() -> None:
    head, body, section = _long_block()
    assert len(wrap([*head, *body])) == MAX_LINES + 1
    lines = _within(head, body, [], section)
    note = next(line for line in lines if "not shown" in line)
    assert note.startswith("1 more setting of this lane is not shown"), note
    assert _defects(note) == []


def test_a_shortened_block_names_the_settings_it_leaves_out() -> None:
    """A reader who reproduces the lane needs to know which settings to look up in the
    launch, not only how many (each counted once: a bullet and the export repeating it are
    one setting; before, InferenceX #2590's MI355X block counted such pairs twice)."""
    head, _, section = _long_block()
    short = [f"- Add `--flag-{n}`" for n in range(MAX_LINES - 6)]
    dropped = [
        "- Run on `vllm/vllm-openai-rocm:nightly-abc` (the recipe's command: `nightly`), "
        + "which is a long line that wraps " * 4,
        "- In the `--speculative-config` JSON: set `num_speculative_tokens` to `3`, "
        + "which is a long line that wraps " * 4,
        "- Export `X_ONE=1` (below).",
    ]
    exports = ["", "```bash", "export X_ONE=1", "export X_TWO=2", "```"]
    lines = _within(head, [*short, *dropped, *exports], [], section)
    assert lines[: len(short) + 1] == [*head, *short]  # the short ones stay, the rest go
    assert not any(line.startswith(("- Run", "- In", "- Export", "export")) for line in lines)
    note = " ".join(lines[len(short) + 1 :]).strip()
    assert note == (
        "4 more settings of this lane are not shown (a block is at most 36 lines): image, "
        "`--speculative-config`, `X_ONE`, `X_TWO`; the launch in acme/bench#7 has them all."
    )


def test_a_group_title_never_ends_a_shortened_block() -> None:
    """When the items under a group's title all give way, the title goes with them, and the
    count of settings not shown counts settings, not titles (InferenceX #2590's MI355X block
    ended on "Benchmark-only — …:" with nothing under it)."""
    head, body, section = _long_block()
    title = "- Benchmark-only — accuracy-sensitive / tuning; NOT part of the default command:"
    body = [*body[:-1], title, "  - " + body[-1][2:]]
    lines = _within(head, body, [], section)
    assert title not in lines
    shown = [line for line in lines if line.startswith("- Add")]
    assert len(shown) == MAX_LINES - 4  # every short setting stays
    note = next(line for line in lines if "not shown" in line)
    assert note.startswith("1 more setting of this lane is not shown"), note


def test_a_shortened_block_points_at_no_export_block_it_dropped() -> None:
    """When the exports' block gives way, no bullet still says "(below)", and a variable a
    kept bullet names is not counted as not shown (InferenceX #2213's MI355X block counted
    "3 more settings", one of them on screen)."""
    head, _, section = _long_block()
    short = [f"- Add `--flag-{n}`" for n in range(MAX_LINES - 6)]
    exports = ["```bash", "# Tuning", "export OMP_NUM_THREADS=1", "export AITER_X=auto", "```"]
    body = [*short, "- Export `OMP_NUM_THREADS=1` (below).", "", *exports]
    assert len(wrap([*head, *body])) > MAX_LINES
    lines = _within(head, body, [], section)
    assert "- Export `OMP_NUM_THREADS=1`." in lines
    assert not any("(below)" in line or line.startswith("```") for line in lines)
    # an earlier command's exports stay, and so does its pointer at them
    first = ["- Export `A=1` (below).", "", "```bash", "export A=1", "```"]
    lines = _within(head, [*first, *body[len(first) :]], [], section)
    assert "- Export `A=1` (below)." in lines and "- Export `OMP_NUM_THREADS=1`." in lines
    note = next(line for line in lines if "not shown" in line)
    assert note.startswith("1 more setting of this lane is not shown"), note


def test_a_block_that_drops_only_repeated_exports_hides_nothing() -> None:
    """The exports' block repeats variables the bullets name: when only it gives way, the
    block says nothing of settings not shown (InferenceX #1929's B300 block said "0 more
    settings of this lane are not shown")."""
    head, _, section = _long_block()
    short = [f"- Add `--flag-{n}`" for n in range(MAX_LINES - 4)]
    exports = ["```bash", "# Tuning", "export OMP_NUM_THREADS=1", "```"]
    body = [*short, "- Export `OMP_NUM_THREADS=1` (below).", "", *exports]
    lines = _within(head, body, [], section)
    assert "- Export `OMP_NUM_THREADS=1`." in lines
    assert not any("not shown" in line for line in lines)


def test_an_undecided_comparison_is_not_called_unclassified(seed_run: AlignRun) -> None:
    """``--moe-backend aiter`` against the recipe's auto is a kernel setting whose equivalence
    recipe-sync cannot decide: the list says that, not "not classified" (InferenceX #2187)."""
    outcome = next(o for o in seed_run.outcomes if o.status == "patch")
    note = FlagNote(
        kind="flag", subject="--moe-backend", bench="--moe-backend aiter", recipe=None,
        verdict="unknown", reason="auto runs a per-quant-scheme oracle", target="t", node=None,
    )  # fmt: skip
    lines = lists_section(replace(outcome.plan, unknown=(note,)), FULL)
    assert f"**Unknown** ({UNKNOWN_WHY}):" in lines
    assert not any("not classified" in line for line in lines)

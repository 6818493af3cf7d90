"""PR text: sanitised, capped, stable; untrusted values never become Markdown or markers."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from bot.align.model import Setting
from bot.align.plan import PlannedEdit
from bot.align.result import AlignRun
from bot.markdown import visible_words
from bot.present.pr_text import body, cap, pull_request_text
from bot.present.sections.changes import merged_scope
from bot.present.sections.common import COMPACT, plain
from bot.present.sections.matrix import whitespace_check
from bot.present.sections.summary import summary_bullet
from bot.present.sections.title import title
from bot.recipes.edit import EnsurePath, SetScalar
from tests.planned import planned_edit
from tests.seed_cli import AlignCli, commit_edit

SCRIPT = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"
EVIL = "ERROR <!-- x --> @octocat fixes #1 [a](https://evil.example) <b>"


def _outside_code(text: str) -> str:
    text = re.sub(r"(`{3,})[^\n]*\n.*?\n\1", "", text, flags=re.S)
    return re.sub(r"(`+).+?\1", "", text)


def test_untrusted_values_from_the_benchmark_stay_inert(
    align_cli: AlignCli, bench_clone: Path
) -> None:
    commit_edit(
        bench_clone,
        SCRIPT,
        "export AITER_TRITON_LOG_LEVEL=ERROR",
        f"export AITER_TRITON_LOG_LEVEL='{EVIL}'",
    )
    status, out = align_cli(evidence=False, bench=bench_clone, bench_ref="pr")
    assert status == 1  # a PR to open (docs/cli.md "Exit codes")
    patch = (out / "recipe.patch").read_text()
    assert "AITER_TRITON_LOG_LEVEL:" in patch and "@octocat" in patch  # the data itself is kept
    body, comment = (out / "pr-body.md").read_text(), (out / "comment.md").read_text()
    assert body.count("<!--") == 1 and body.startswith("<!-- recipe-sync:meta")
    assert "<!--" not in comment
    for text in (body.split("\n", 1)[1], comment):
        prose = _outside_code(text)
        assert "@octocat" not in prose  # no mention outside code
        assert "fixes #1" not in prose  # no closing keyword
        assert "<b>" not in prose and "[a](https://evil" not in prose
    plan = json.loads((out / "plan.json").read_text())
    assert any(
        EVIL in e["after"] for e in plan["plans"][0]["edits"] if e["subject"].startswith("AITER")
    )


def test_summary_bullet_escapes_its_parts() -> None:
    edit = PlannedEdit(
        SetScalar("a.b", "x"),
        "flag",
        "--x",
        "old`value",
        "new ` @user",
        "hardware_overrides.amd.extra_args[3]",
        "every AMD rendering",
        "the benchmark sets --x *bold* <i>",
        "where the recipe defines the flag",
        ("t",),
    )
    line = summary_bullet(edit)
    # the values are code spans they cannot close; the placement rule is not in the text,
    # and the old value and the scope are the change table's
    assert line == "- Set ``--x new ` @user``."
    removal = replace(edit, kind="flag-remove", before="--x *y*")
    line = summary_bullet(removal)
    assert line.startswith("- Remove `--x *y*`: the benchmark sets `--x` \\*bold\\* &lt;i>.")


def test_a_narrowed_edit_says_where_it_was_kept() -> None:
    """Real history (InferenceX #2118): an edit narrowed to a variant that runs on the
    benchmarked GPU only said "kept to the benchmarked GPU" beside a table row naming the
    variant; the bullet names the block it landed in."""
    why = "`hardware_overrides.amd` also serves variant default, which no AMD lane runs"
    edit = replace(
        planned_edit(
            "env-new",
            "VLLM_ROCM_USE_AITER",
            "variants.mxfp4.extra_env.VLLM_ROCM_USE_AITER",
            None,
            "1",
            "t",
        ),
        wider=why,
    )
    assert summary_bullet(edit) == (
        f"- Add `VLLM_ROCM_USE_AITER=1`; kept to variant `mxfp4` because {why}."
    )
    on_gpu = replace(edit, node="variants.mxfp4.hardware_overrides.mi355x.extra_env.X")
    assert "; kept to the benchmarked GPU because" in summary_bullet(on_gpu)


def test_a_replaced_feature_args_list_shows_the_subjects_value() -> None:
    """Real history (InferenceX #2564): a mode's args replaced on Hopper printed the whole
    list as the new value of `--speculative-config`."""
    new = '{"method": "eagle3", "model": "Inferact/MiniMax-M3-EAGLE3-GQA"}'
    edit = PlannedEdit(
        EnsurePath(("features", "spec_decoding", "hardware_overrides", "hopper", "args"), []),
        "flag",
        "--speculative-config",
        None,
        json.dumps(["--speculative-config", new]),
        "features.spec_decoding.hardware_overrides.hopper.args",
        "renderings with spec_decoding on Hopper",
        "r",
        "p",
        ("t",),
    )
    assert summary_bullet(edit) == f"- Set `--speculative-config {new}`."


def test_plain_keeps_identifiers_and_escapes_the_rest() -> None:
    assert plain("MI355X: single_node_tp, pd_cluster — with a + b (x)") == (
        "MI355X: single_node_tp, pd_cluster — with a + b (x)"
    )
    assert plain("_emph_ *x*") == "\\_emph\\_ \\*x\\*"


def test_one_edit_made_in_several_strategies_names_them_in_one_scope() -> None:
    assert merged_scope(["B300 + single_node_tp only"]) == "B300 + single_node_tp only"
    assert (
        merged_scope(["B300 + single_node_tp only", "B300 + single_node_tep only"])
        == "B300 + single_node_tp, single_node_tep only"
    )
    # hardware with the same strategies share one clause (InferenceX#2337); others are listed
    tp_tep = [f"{hw} + single_node_{s} only" for hw in ("B200", "B300") for s in ("tp", "tep")]
    assert merged_scope(tp_tep) == "B200, B300 + single_node_tp, single_node_tep only"
    assert (
        merged_scope(["B300 + single_node_tp only", "B200 + single_node_tep only"])
        == "B300 + single_node_tp only; B200 + single_node_tep only"
    )
    assert (
        merged_scope(["MI355X only", "B300 + single_node_tp only"])
        == "MI355X only; B300 + single_node_tp only"
    )


def test_whitespace_check_counts_lines_and_problems() -> None:
    patch = "--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n-old\n+new \n+\tindented\n"
    assert whitespace_check(patch) == (
        "Whitespace check of the patch (`git diff --check` rules): 2 added lines with "
        "whitespace errors. One file changed, +2/−1."
    )


def test_cap_truncates_with_a_note() -> None:
    text = "x" * 70_000
    capped = cap(text, 60_000)
    assert len(capped) <= 60_000 and "truncated" in capped[-200:]
    assert cap("short", 60_000) == "short"


def test_title_has_no_run_specific_data(seed_out: Path) -> None:
    title = (seed_out / "pr-title.txt").read_text()
    # what changes, from the edits: no SHAs, run ids or counts; the image is MI355X's own
    # override, so the [MI355X] tag says whose (not "AMD": MI300X/MI325X/MI350X keep theirs)
    assert title == (
        "[DeepSeek-V4.1-Flash][MI355X] Align image and MoE backend with InferenceX #3058\n"
    )


def test_the_title_names_the_hardware_the_edits_are_for(seed_run: AlignRun) -> None:
    """InferenceX #1571: one MI355X edit in a PR whose lanes ran six GPUs; its title named
    all six (issue #35). A lane that brought no edit adds no GPU to the tags."""
    (outcome,) = seed_run.patches
    plan = outcome.plan
    edited = {label for edit in plan.edits for label in edit.targets}
    assert {t.profile.hardware for t in plan.targets if t.profile.label in edited} == {"mi355x"}
    lane = plan.targets[0]
    other = replace(lane, profile=replace(lane.profile, hardware="b200"))
    wider = replace(plan, targets=(other, *plan.targets))
    text = title(wider, seed_run.names, "SemiAnalysisAI/InferenceX", 3058, outcome)
    assert text.startswith("[DeepSeek-V4.1-Flash][MI355X] Align image"), text


def test_a_body_over_800_visible_words_folds_detail_and_keeps_every_fact(
    seed_run: AlignRun,
) -> None:
    """Issue #35: a body stays within 800 visible words (what a reader sees without opening a
    <details>); past that the least useful detail folds (the settings not carried, then the
    regression rows where nothing moved), nothing is dropped."""
    (outcome,) = seed_run.patches
    plan = outcome.plan
    lane = plan.targets[0].profile.label
    many = tuple(
        Setting("tuning", "flag", f"--knob-{n}", f"--knob-{n} {n}", None,
                f"a tuning value number {n} sized for the benchmark node", lane)
        for n in range(30)
    )  # fmt: skip
    long = replace(outcome, plan=replace(plan, settings=(*plan.settings, *many)))
    text = body(seed_run, long)
    assert visible_words(text) <= 800, visible_words(text)
    for setting in many:
        assert f"`{setting.bench}`" in text
    folded = text.split("<summary>Benchmark settings not carried", 1)[1].split("</details>")[0]
    assert "`--knob-29 29`" in folded and "`--knob-0 0`" in folded
    # the seed itself is under the bound: nothing of it folds
    assert "<summary>Benchmark settings" not in body(seed_run, outcome)


def test_a_long_body_collapses_before_it_is_cut(seed_run: AlignRun) -> None:
    run = seed_run
    (outcome,) = run.patches
    full, compact = body(run, outcome), body(run, outcome, COMPACT)
    assert len(compact) < len(full)
    assert "Job log excerpts" in full and "Job log excerpts" not in compact
    assert re.search(r"(1 group|\d+ groups) not shown \(see plan.json\)", compact)
    whole = pull_request_text(run, outcome)
    assert whole is not None and whole.body == full
    frame = len(whole.full_body) - len(full)  # the metadata line and the footer
    limit = (len(full) + len(compact)) // 2 + frame
    collapsed = pull_request_text(run, outcome, limit=limit)
    assert collapsed is not None
    assert collapsed.body == compact and len(collapsed.full_body) <= limit
    cut = pull_request_text(run, outcome, limit=len(compact) // 2)
    assert cut is not None
    assert len(cut.full_body) <= len(compact) // 2
    assert "… truncated:" in cut.body[-120:]


def test_the_image_bullet_cites_the_upstream_vllm_change(seed_run: AlignRun) -> None:
    """When the benchmark's changelog entry for the key names the vLLM PR the new image
    brings, the image bullet cites it (the seed's entry names none). The run carries the
    entries it quotes: the text reads no repository."""
    (outcome,) = seed_run.patches
    assert "vllm-project/vllm#" not in body(seed_run, outcome)
    cited = "AITER mHC pre block: vllm-project/vllm#56503"
    changelog = {
        key: tuple(replace(e, description=(*e.description, cited)) for e in entries)
        for key, entries in seed_run.changelog.items()
    }
    assert changelog, "the seed PR adds a perf-changelog entry for its key"
    text = body(replace(seed_run, changelog=changelog), outcome)
    (image,) = [line for line in text.splitlines() if line.startswith("- Pin the MI355X image")]
    assert image.count("; the benchmark's changelog cites upstream vllm-project/vllm#56503") == 1
    assert text.count("vllm-project/vllm#56503") == 1  # a live reference once; the quote escapes


def test_a_title_of_variables_alone_names_them_while_it_reads_short(seed_run: AlignRun) -> None:
    """InferenceX #2590's title said "Align env"; a reviewer scanning a PR list wants the
    variable. One or two variables are named while the title stays within 100 characters;
    more, or longer, say "env"."""
    (outcome,) = seed_run.patches
    plan = outcome.plan
    edit = plan.edits[0]

    def titled(*names: str) -> str:
        edits = tuple(replace(edit, kind="env-new", subject=name) for name in names)
        return title(replace(plan, edits=edits), seed_run.names, "acme/InferenceX", 2590)

    assert titled("VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS") == (
        "[DeepSeek-V4.1-Flash][MI355X] Align VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS with "
        "InferenceX #2590"
    )
    assert titled("AITER_A", "AITER_B") == (
        "[DeepSeek-V4.1-Flash][MI355X] Align AITER_A and AITER_B with InferenceX #2590"
    )
    assert "Align env with" in titled("AITER_A", "AITER_B", "AITER_C")
    long = ("VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS", "VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT")
    assert titled(*long) == "[DeepSeek-V4.1-Flash][MI355X] Align env with InferenceX #2590"

"""Reproduction sections in the recipe guide and guide-command drift, on the Widget fixture
(``fixtures/reproduction``): a TP4 lane against a TP8 recipe, an agentic DP-attention lane
behind a router with synthetic-acceptance arms, a hand-written section that drifted."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from bot.align.nodes import only_host_copies
from bot.align.reproduction import short_list
from bot.align.reproduction.defaults import default_note, json_fields_note, run_time_note
from bot.align.reproduction.sections import _deltas
from bot.align.result import RecipeOutcome
from bot.present import present
from bot.recipes.guide import (
    locate_guide,
    managed_blocks,
    parse_markdown,
    unbalanced_fences,
)
from bot.recipes.layers import ArgOrigin
from bot.rules import default_rules
from bot.vllm import FlagDiff, Verdict
from bot.yamlio.yaml12 import load_yaml
from tests.align.reproduction_fixture import (
    AGENTIC_KEY,
    TP4_KEY,
    WIDGET,
    build,
    guide_rules,
    guide_with_hand_written_section,
    run,
    write_recipe,
)


def _only(outcomes: tuple[RecipeOutcome, ...]) -> RecipeOutcome:
    assert [o.recipe_path for o in outcomes] == [WIDGET]
    return outcomes[0]


def _block(text: str) -> list[str]:
    """The lines of the (single) managed block in the recipe text, as file lines."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "<!-- recipe-sync:reproduction" in line)
    end = next(i for i, line in enumerate(lines) if "<!-- /recipe-sync -->" in line)
    return lines[start : end + 1]


def _assert_valid_guide(text: str) -> str:
    data = load_yaml(text, WIDGET)
    guide = data["guide"]
    assert not unbalanced_fences(guide)
    assert guide.count("```") % 2 == 0
    html = [t.content.strip() for t in parse_markdown(guide) if t.type == "html_block"]
    assert any(h.startswith("<!-- recipe-sync:reproduction ") for h in html)
    assert "<!-- /recipe-sync -->" in html
    located = locate_guide(text, WIDGET)
    assert located is not None and located.indent == "  "
    return str(guide)


def test_a_tp4_sweep_against_a_tp8_recipe_gets_a_new_section(tmp_path: Path) -> None:
    bench, recipes = build(tmp_path)
    original = (recipes / WIDGET).read_text()
    result = run(bench, recipes, (TP4_KEY,))
    outcome = _only(result.outcomes)
    assert outcome.status == "patch" and outcome.guide_only
    assert [(g.action, g.where) for g in outcome.guide] == [
        ("inserted", "after the section “### AMD MI355X (TP8)”")
    ]
    assert outcome.new_text is not None
    text = outcome.new_text.decode()
    # byte-identical outside the block: the file is the original with lines inserted
    before, after = original.splitlines(keepends=True), text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(after) if "recipe-sync:reproduction" in line)
    added = len(after) - len(before)
    assert after[:start] == before[:start] and after[start + added :] == before[start:]
    assert {k: v for k, v in load_yaml(text, WIDGET).items() if k != "guide"} == {
        k: v for k, v in load_yaml(original, WIDGET).items() if k != "guide"
    }
    guide = _assert_valid_guide(text)
    assert guide.index("### FP4 benchmark reproduction (InferenceX MI355X sweep)") > guide.index(
        "### AMD MI355X (TP8)"
    )
    assert guide.index("<!-- /recipe-sync -->") < guide.index("## Troubleshooting")
    block = "\n".join(_block(text))
    assert "Use `--tensor-parallel-size 4` (the recipe's command has `--tensor-parallel-size" in (
        block
    )
    # the concurrency rule, not one point's number
    assert '--max-num-seqs "$((2 * CONC))"' in block and "--max-num-seqs 128" not in block
    # accuracy-sensitive env under the benchmark-only comment; the recipe's own exports and
    # the harness's are left out: a block carries deltas, not a copy of the command
    accuracy = block.index(
        "# Benchmark-only — accuracy-sensitive; NOT part of the default command."
    )
    assert block.index("export VLLM_ROCM_QUICK_REDUCE_QUANTIZATION=INT4") > accuracy
    assert "VLLM_ROCM_USE_AITER=1" not in block and "vllm serve" not in block
    assert "--host" not in block
    # the start-up timeout is tuning (rules/knobs.yaml): a delta under the tuning comment
    tuning = block.index("# Benchmark-only — throughput tuning; NOT part of the default command.")
    assert block.index("export VLLM_ENGINE_READY_TIMEOUT_S=3600") > tuning
    assert len(_block(text)) <= 40
    texts = present(result)
    pr = texts.prs[WIDGET]
    assert pr.title == (
        "[Widget][MI355X] Add benchmark reproduction to the guide from InferenceX #4000"
    )
    # the TP4 points are the recipe's profile but for parallelism: nothing of theirs is carried
    assert "No difference of its points is carried into the recipe (why below)" in pr.body
    assert "`--tensor-parallel-size` 4 (recipe 8)" in pr.body
    assert "The guide adds the managed section" in pr.body


def test_an_existing_section_is_updated_in_place_and_nothing_else_moves(
    tmp_path: Path,
) -> None:
    bench, recipes = build(tmp_path)
    first = _only(run(bench, recipes, (TP4_KEY,)).outcomes)
    assert first.new_text is not None
    (recipes / WIDGET).write_bytes(first.new_text)
    again = _only(run(bench, recipes, (TP4_KEY,)).outcomes)
    # the accuracy setting (no eval) is still offered to tick; nothing is written
    assert again.status == "offered" and again.new_text is None
    assert [g.action for g in again.guide] == ["unchanged"]
    script = bench / "benchmarks/single_node/fixed_seq_len/widget_fp4_mi355x_vllm.sh"
    script.write_text(
        script.read_text().replace("--kv-cache-dtype fp8 ", "--kv-cache-dtype fp8_e4m3 ")
    )
    updated = _only(run(bench, recipes, (TP4_KEY,)).outcomes)
    assert updated.status == "patch" and [g.action for g in updated.guide] == ["updated"]
    assert updated.new_text is not None
    old, new = first.new_text.decode().splitlines(), updated.new_text.decode().splitlines()
    assert len(old) == len(new)
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    start = next(i for i, line in enumerate(old) if "recipe-sync:reproduction" in line)
    end = next(i for i, line in enumerate(old) if "/recipe-sync" in line)
    assert changed and all(start < i < end for i in changed)
    assert any("Add `--kv-cache-dtype fp8_e4m3`" in line for line in new)
    added = [x for x in updated.patch.splitlines() if x.startswith("+") and not x.startswith("+++")]
    assert all("fp8_e4m3" in x for x in added)
    _assert_valid_guide(updated.new_text.decode())


def test_an_agentic_dp_attention_arm_documents_its_router(tmp_path: Path) -> None:
    bench, recipes = build(tmp_path)
    outcome = _only(run(bench, recipes, (AGENTIC_KEY,)).outcomes)
    assert outcome.new_text is not None
    block = "\n".join(_block(outcome.new_text.decode()))
    # one block per hardware: the recipe's own profile (DP attention, the eval arm) is shown,
    # the lane's other topology named
    dp = block[block.index("**DP8 (DP attention) + EP8 + MTP**") :]
    assert '--max-num-seqs "$CONC"' in dp  # the script's rule for DP attention
    assert "- The benchmark puts a `vllm-router` in front of the DP ranks." in dp
    assert "the eval arm (real acceptance)" in dp
    assert "synthetic `synthetic_acceptance_length`, `rejection_sample_method`" in " ".join(
        dp.split()
    )
    assert "The PR's other lanes on this hardware: TP8 + MTP." in " ".join(dp.split())
    assert "**TP8 + MTP**" not in block and len(_block(outcome.new_text.decode())) <= 40


def test_a_hand_written_section_that_drifted_is_reported_not_rewritten(tmp_path: Path) -> None:
    bench, recipes = build(tmp_path, guide_with_hand_written_section())
    original = (recipes / WIDGET).read_text()
    result = run(bench, recipes, (TP4_KEY,))
    outcome = _only(result.outcomes)
    # its accuracy setting (no eval) is offered to tick; nothing is written
    assert outcome.status == "offered" and outcome.patch == ""
    assert [g.action for g in outcome.guide] == ["skipped"]
    assert "documents this benchmark" in outcome.guide[0].reason
    drifted = [d for d in outcome.guide_drift if d.drifted]
    assert len(drifted) == 1
    drift = drifted[0]
    assert drift.cites_benchmark and not drift.managed
    assert (
        drift.heading == "Launching the Server / Benchmark reproduction (InferenceX MI355X sweep)"
    )
    assert original.splitlines()[drift.line - 1].strip().startswith("vllm serve acme/Widget")
    flags = {d.flag: (d.bench_tokens, d.recipe_tokens) for d in drift.diffs}
    assert flags["--kv-cache-dtype"] == (("--kv-cache-dtype", "fp8"), ())
    assert flags["--max-num-seqs"][1] == ("--max-num-seqs", "256")
    assert set(drift.not_compared) == {"--port", "--max-model-len"}
    # the TP8 command under "AMD MI355X (TP8)" has no TP8 point of this lane to compare with
    assert all(d.heading.endswith("(InferenceX MI355X sweep)") for d in outcome.guide_drift)
    comment = present(result).comment
    assert "Guide command under `Launching the Server / Benchmark reproduction" in comment
    assert "not rewritten (hand-written; policy guide_sections: report)" in comment


def test_policy_adopt_replaces_the_hand_written_section_in_place(tmp_path: Path) -> None:
    bench, recipes = build(tmp_path, guide_with_hand_written_section())
    rules = guide_rules()
    adopt = replace(rules, policy=rules.policy.model_copy(update={"guide_sections": "adopt"}))
    outcome = _only(run(bench, recipes, (TP4_KEY,), adopt).outcomes)
    assert outcome.status == "patch" and [g.action for g in outcome.guide] == ["adopted"]
    assert outcome.new_text is not None
    guide = _assert_valid_guide(outcome.new_text.decode())
    assert "--max-num-seqs 256" not in guide and "The InferenceX MI355X lane runs TP4:" not in guide
    assert [(b.kind) for b in managed_blocks(guide.splitlines())] == ["reproduction"]
    assert guide.index("### AMD MI355X (TP8)") < guide.index("recipe-sync:reproduction")
    assert guide.index("<!-- /recipe-sync -->") < guide.index("## Troubleshooting")
    assert (
        "The guide adopts (replaces in place) the managed section"
        in present(run(bench, recipes, (TP4_KEY,), adopt)).prs[WIDGET].body
    )


def test_a_recipe_without_a_guide_is_reported_not_failed(tmp_path: Path) -> None:
    bench, recipes = build(tmp_path)
    write_recipe(recipes, "")
    outcome = _only(run(bench, recipes, (TP4_KEY,)).outcomes)
    assert outcome.status == "offered" and outcome.patch == ""  # the accuracy setting
    assert [(g.action, g.reason) for g in outcome.guide] == [("skipped", "the recipe has no guide")]


def test_a_long_default_list_is_shown_short() -> None:
    sizes = "[" + ",".join(str(n) for n in (1, 2, 4, *range(8, 520, 8))) + "]"
    assert short_list(sizes) == "[1, 2, 4, …, 512] (67 values)"
    assert short_list("[1,2,4]") == "[1,2,4]" and short_list("0.92") == "0.92"
    assert short_list("FULL_AND_PIECEWISE") == "FULL_AND_PIECEWISE"


def _omitted(reason: str) -> FlagDiff:
    return FlagDiff(
        kind="flag", key="scheduler.async_scheduling", flag="--async-scheduling",
        verdict=Verdict.DIFFERS, bench_value=True, recipe_value=None,
        bench_tokens=("--async-scheduling",), recipe_tokens=(), reason=reason, category="engine",
    )  # fmt: skip


def test_a_default_is_named_only_when_it_holds_unconditionally() -> None:
    """ "resolves to True only when compatible" is no "True here": the block says nothing of
    the default rather than a value vLLM may not take (InferenceX #2590's MI355X block)."""
    plain = "the recipe omits it, and omitted resolves to 1024 (the scheduler's default)"
    assert default_note(_omitted(plain)) == " (the recipe's command leaves it to vLLM: 1024 here)"
    for condition in ("only when compatible", "when not pooling", "unless PP>1", "if V1"):
        assert default_note(_omitted(f"omitted resolves to True {condition}")) == ""
    # a rule of the model is no value "here" (25 since-June blocks printed this one)
    rule = "None resolves to model.is_prefix_caching_supported (True for typical decoder LMs)"
    assert default_note(_omitted(rule)) == ""
    assert default_note(_omitted("resolves to 0.92 (CacheConfig)")).endswith(": 0.92 here)")


def test_by_default_no_block_without_a_recipe_edit(tmp_path: Path) -> None:
    # the TP4 lane's settings all stay out of the recipe (parallelism, tuning; accuracy only
    # offered): with the default policy that is no PR at all, not a guide-only one
    bench, recipes = build(tmp_path)
    outcome = _only(run(bench, recipes, (TP4_KEY,), guide_rules("with_edits")).outcomes)
    assert outcome.status == "offered" and outcome.patch == "" and outcome.guide == ()
    never = _only(run(bench, recipes, (TP4_KEY,), guide_rules("never")).outcomes)
    assert never.guide == () and never.patch == ""


def test_a_value_known_only_when_the_script_runs_is_said_so_never_printed() -> None:
    """A block does not print the evaluator's placeholder as a value to export (InferenceX
    #2213's MI355X block said "Export `HSA_NO_SCRATCH_RECLAIM=<HSA_NO_SCRATCH_RECLAIM:
    opaque:undecidable-branch>`")."""
    assert run_time_note("1") is None
    placeholder = "<HSA_NO_SCRATCH_RECLAIM:opaque:undecidable-branch>"
    why = "it differs between branches of a condition that cannot be decided"
    assert run_time_note(placeholder) == f"its value is known only when the script runs ({why})"
    diffs = [
        FlagDiff(
            kind="env",
            key=name,
            flag=name,
            verdict=verdict,
            bench_value=value,
            recipe_value=None,
            bench_tokens=(),
            recipe_tokens=(),
            reason="",
            category="env",
        )
        # the diff calls a value decided at run time unknown, not a difference
        for name, value, verdict in (
            ("HSA_NO_SCRATCH_RECLAIM", placeholder, Verdict.UNKNOWN),
            ("NCCL_MIN_NCHANNELS", "4", Verdict.DIFFERS),
        )
    ]
    comparison = SimpleNamespace(report=SimpleNamespace(diffs=diffs), floating_image=False)
    texts = [text for _, text in _deltas(comparison, default_rules())]  # type: ignore[arg-type]
    assert (
        f"Export `HSA_NO_SCRATCH_RECLAIM` as the script does: {run_time_note(placeholder)}."
        in texts
    )
    assert "Export `NCCL_MIN_NCHANNELS=4` (below)." in texts
    assert not any("opaque" in text for text in texts)


def test_a_staged_copy_of_the_recipes_checkpoint_is_no_delta() -> None:
    """A draft model the benchmark read from its host's disk under the recipe's name is the
    recipe's value (InferenceX #1929's block told readers to use /data/models/…)."""
    recipe = {
        "method": "eagle3",
        "model": "Inferact/MiniMax-M3-EAGLE3",
        "num_speculative_tokens": 3,
    }
    staged = {**recipe, "model": "/data/models/MiniMax-M3-EAGLE3"}
    assert only_host_copies(staged, recipe)
    assert only_host_copies(json.dumps(staged), json.dumps(recipe))
    assert not only_host_copies({**staged, "num_speculative_tokens": 2}, recipe)
    assert not only_host_copies({**staged, "model": "/data/models/Other-EAGLE3"}, recipe)
    assert not only_host_copies({**recipe, "model": "Other/MiniMax-M3-EAGLE3"}, recipe)
    assert not only_host_copies("/data/models/3", 3)


def test_two_json_objects_that_differ_in_a_few_fields_are_shown_by_field() -> None:
    """InferenceX #2006's block showed both speculative configs whole, one with a host path,
    where only `num_speculative_tokens` differed; #1756's where the recipe's adds one field."""
    recipe = {
        "method": "eagle3",
        "model": "Inferact/MiniMax-M3-EAGLE3",
        "num_speculative_tokens": 3,
    }
    staged = {**recipe, "model": "/data/models/MiniMax-M3-EAGLE3", "num_speculative_tokens": 2}
    assert json_fields_note("--speculative-config", staged, json.dumps(recipe)) == (
        "In the `--speculative-config` JSON: set `num_speculative_tokens` to `2` (the recipe's "
        "command: `3`)."
    )
    backend = {**recipe, "attention_backend": "FLASH_ATTN"}
    assert json_fields_note("--speculative-config", recipe, backend) == (
        "In the `--speculative-config` JSON: remove `attention_backend`."
    )
    added = json_fields_note("--speculative-config", backend, recipe)
    assert added == 'In the `--speculative-config` JSON: set `attention_backend` to `"FLASH_ATTN"`.'
    many = {k: f"{v}x" for k, v in backend.items()}
    assert json_fields_note("--speculative-config", many, backend) is None  # shown whole
    assert json_fields_note("--max-num-seqs", "64", "128") is None


def test_a_field_of_a_json_the_recipe_spells_whole_is_worded_like_any_json_field() -> None:
    """A dotted ``--compilation-config.cudagraph_mode`` against the recipe's whole
    ``--compilation-config '{…}'`` is changed inside the JSON, in the words a JSON flag's
    fields get elsewhere in the block ("In the `--x` JSON: set `k` to `v` (the recipe's
    command: `w`)."); it read "Set `k` to `v` in the `--x` JSON (…)" beside them."""
    whole = ArgOrigin(
        "--compilation-config", '{"cudagraph_mode":"PIECEWISE"}', "variants.v.extra_args[0]"
    )

    def diff(bench: object, recipe: object, verdict: Verdict = Verdict.DIFFERS) -> FlagDiff:
        flag = "--compilation-config.cudagraph_mode"
        return FlagDiff(
            kind="flag", key="compilation_config.cudagraph_mode", flag=flag, verdict=verdict,
            bench_value=bench, recipe_value=recipe,
            bench_tokens=(flag, str(bench)) if bench is not None else (),
            recipe_tokens=(flag, str(recipe)) if recipe is not None else (), reason="",
            category="engine",
        )  # fmt: skip

    def texts(*diffs: FlagDiff) -> list[str]:
        comparison = SimpleNamespace(
            report=SimpleNamespace(diffs=list(diffs)),
            floating_image=False,
            command=SimpleNamespace(args=(whole,)),
        )
        return [text for _, text in _deltas(comparison, default_rules())]  # type: ignore[arg-type]

    assert texts(diff("FULL_DECODE_ONLY", "PIECEWISE")) == [
        'In the `--compilation-config` JSON: set `cudagraph_mode` to `"FULL_DECODE_ONLY"` '
        '(the recipe\'s command: `"PIECEWISE"`).'
    ]
    assert texts(diff("FULL", None)) == [
        'In the `--compilation-config` JSON: set `cudagraph_mode` to `"FULL"`.'
    ]
    assert texts(diff(None, "PIECEWISE", Verdict.RECIPE_ONLY)) == [
        "In the `--compilation-config` JSON: remove `cudagraph_mode` (the benchmark does not "
        "set it)."
    ]

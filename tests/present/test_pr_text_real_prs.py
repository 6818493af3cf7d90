"""Alignment PRs for real InferenceX PRs (history bundles in ../shared), read as a maintainer
reads them: one bullet per edit however many strategies take it, one evidence section per
hardware, every JSON value one readable code span."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from bot.commands.main import main
from bot.markdown import visible_words
from tests.shared import align_merged_pr, clone_histories, shared_dir
from tests.ungated import ungated_rules_dir

pytestmark = pytest.mark.slow

RECIPES_BASE = "ba26d6ee77"  # recipes main on 2026-07-02, the last commit of its bundle


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return clone_histories(
        tmp_path_factory.mktemp("real-history"), "recipes-main-upto-2026-07-02.bundle"
    )


def _align(
    histories: tuple[Path, Path],
    number: int,
    out: Path,
    key: str | None = None,
    rules: Path | None = None,
    include: tuple[str, ...] = (),
) -> str:
    """The alignment PR body for InferenceX PR ``number``; with ``key``, that config key is
    checked whole (its older drift too, as ``--config-key`` does), so the text shows every
    kind of difference the PR's lanes have."""
    status = align_merged_pr(
        histories,
        number,
        out,
        *include,  # ticked (what waits for an eval)
        extra=[
            "--recipes-ref", RECIPES_BASE,
            "--bench-name", "SemiAnalysisAI/InferenceX",
            "--recipes-name", "vllm-project/recipes",
            *(["--config-key", key] if key else []),
            # the texts of every candidate (tests.ungated), blocks without an edit too
            "--rules", str(rules or ungated_rules_dir(out.parent, always=True)),
        ],
    )  # fmt: skip
    assert status in (0, 1), status  # 1: drift found (the check run's action_required)
    return (out / "pr-body.md").read_text()


def _compilation_carried(tmp: Path) -> Path:
    """The bundled rules with compilation configs classed kernel (carried), as they were
    before July's practice made them tuning: the JSON text of such an edit is still what a
    maintainer reads when a recipe's rules carry one."""
    rules = tmp / "rules"
    shutil.copytree(ungated_rules_dir(tmp / "base", always=True), rules)
    lines = (rules / "knobs.yaml").read_text().split("\n")
    moved = [
        line
        for line in lines
        if line.startswith("    - {flag: --compilation-config") and "capture" not in line
    ]
    assert moved
    kept = [line for line in lines if line not in moved]
    at = kept.index("flags:")
    assert kept[at + 1] == "  kernel:"
    kept[at + 2 : at + 2] = moved
    (rules / "knobs.yaml").write_text("\n".join(kept))
    return rules


def _code_spans(markdown: str) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    return [
        child.content
        for token in tokens
        if token.type == "inline"
        for child in token.children or []
        if child.type == "code_inline"
    ]


def _summary_bullets(body: str) -> list[str]:
    summary = body.split("### Summary", 1)[1].split("**Benchmark settings", 1)[0]
    summary = summary.split("**Offered, not proposed**", 1)[0]
    history = ("- Adopted by maintainers before",)  # one line about every edit
    return [
        line
        for line in summary.splitlines()
        if line.startswith("- ") and not line.startswith(history)
    ]


def _change_rows(body: str) -> list[str]:
    summary = body.split("### Summary\n\n", 1)[1]
    assert summary.startswith("| Setting | Where | Old | New |")
    return summary.split("\n\n", 1)[0].splitlines()[2:]


def _assert_json_spans_whole(body: str) -> None:
    """A code span holding JSON holds all of it: balanced brackets, paired quotes."""
    for span in _code_spans(body):
        if "{" in span or "}" in span:
            assert span.count("{") == span.count("}"), span
            assert span.replace('\\"', "").count('"') % 2 == 0, span


def test_a_sweep_on_two_strategies_is_one_bullet_per_edit(
    histories: tuple[Path, Path], tmp_path: Path
) -> None:
    # InferenceX#2513 ran Kimi-K2.5 FP4 on B300 with TP and TEP: each carried setting is one
    # bullet naming where it lands: the variant on B300 (where maintainers put one GPU's
    # settings), or both strategies' B300 overrides for a config a later layer spells;
    # tuning and compilation settings are listed, not carried
    body = _align(histories, 2513, tmp_path, "kimik2.5-fp4-b300-vllm")
    # the benchmark passes --attention-config as one JSON with a kernel field and an
    # accuracy field: without an eval both wait, offered to tick, as the launch ran them
    assert _summary_bullets(body) == [
        "- Add `--linear-backend flashinfer_cutlass` (kernel: GEMM kernel selection).",
        "- Not marked verified on B300: no workflow-run evidence was given.",
    ]
    assert "— an accuracy setting (quantized prefill queries): proposed once an eval" in body
    assert "— travels with `--attention-config.use_prefill_query_quantization`" in body
    # ticked, the two fields land together: each its own dotted flag in its own class
    body = _align(
        histories, 2513, tmp_path, "kimik2.5-fp4-b300-vllm", include=("--attention-config",)
    )
    bullets = _summary_bullets(body)
    assert len(bullets) == len(set(bullets)) == 4, bullets  # three edits, one verification
    wheres = [row.split(" | ")[1] for row in _change_rows(body)]
    assert sorted(wheres) == [
        "B300 + single_node_tp, single_node_tep only",
        "B300 + single_node_tp, single_node_tep only",
        "Variant nvfp4 on B300",
    ]
    assert "- Add `--attention-config.use_prefill_query_quantization true` (accuracy:" in body
    assert '`--compilation-config.pass_config {"fuse_allreduce_rms":true}`' in body
    assert body.count("### B300 runtime evidence") == 1
    _assert_json_spans_whole(body)
    patch = (tmp_path / "recipe.patch").read_text()
    # one block for B300: the recipe's own profile's lane, the other topologies named
    (block,) = patch.split("+  **")[1:]
    assert "Add `--attention-config\n" not in block and "Add `--attention-config '" not in block
    managed = patch.split("recipe-sync:reproduction", 1)[1].split("<!-- /recipe-sync -->")[0]
    # from the opening marker's line to the closing one's (its last line): MAX_LINES and
    # the four lines of the markers and the blank lines beside them
    assert len(managed.splitlines()) <= 40
    flat = " ".join(line.lstrip("+ ") for line in block.splitlines())
    assert "The PR's other lanes on this hardware:" in flat


def test_json_values_in_the_regression_table_are_whole_code_spans(
    histories: tuple[Path, Path], tmp_path: Path
) -> None:
    # InferenceX#2707: --compilation-config and --kv-transfer-config change JSON values
    # (compilation configs carried, as rules may still class them)
    rules = _compilation_carried(tmp_path)
    body = _align(histories, 2707, tmp_path / "out", "dsv4-fp4-b200-vllm-agentic-mtp", rules)
    _assert_json_spans_whole(body)
    spans = _code_spans(body)
    whole = '{"cudagraph_mode":"FULL_DECODE_ONLY","custom_ops":["all"],"mode":0}'
    assert f"--compilation-config {whole}" in spans
    assert '{"cudagraph_mode":"FULL_AND_PIECEWISE", "custom_ops":["all"]}' in spans
    # the recipe spells --compilation-config as one JSON: the benchmarked fields go into it
    # (a dotted --compilation-config.cudagraph_mode beside it makes vLLM drop custom_ops)
    command = body.split("### Generated", 1)[1].split("```", 2)[1]
    assert command.count("--compilation-config") == 1, command
    assert '--compilation-config \'{"cudagraph_mode":"FULL_DECODE_ONLY",' in command
    assert '"custom_ops":["all"]' in command
    # and the sticky comment's change table says the drifted fields are edited by that
    # whole JSON: its row, and none "not edited" for them; a field left is its own value
    comment = (tmp_path / "out" / "comment.md").read_text()
    rows = [line for line in comment.splitlines() if line.startswith("| `--compilation-config")]
    assert "| `--compilation-config` | B200 + single_node_dep only | " in rows[0], rows
    assert rows[0].endswith(f"| `{whole}` |"), rows
    fields = {row.split("`")[1] for row in rows[1:]}
    assert not fields & {"--compilation-config.cudagraph_mode", "--compilation-config.mode"}
    assert '| `--compilation-config.custom_ops` | not edited | `["all"]` | — |' in rows, rows


def test_a_bullet_names_the_old_value_of_its_own_strategy_only(
    histories: tuple[Path, Path], tmp_path: Path
) -> None:
    # InferenceX#2231: B200 single_node_dep holds a --compilation-config JSON, single_node_tp
    # none; the tp bullets said "instead of" the dep JSON
    body = _align(
        histories,
        2231,
        tmp_path / "out",
        "dsv4-fp4-b200-vllm-agentic",
        _compilation_carried(tmp_path),
    )
    assert any(b.startswith("- Add `--compilation-config.mode 0`") for b in _summary_bullets(body))
    tp = [row for row in _change_rows(body) if "| B200 + single_node_tp only |" in row]
    # the change table's old value of the tp rows: none, not the dep strategy's JSON
    olds = {row.split(" | ")[2] for row in tp if "--compilation-config" in row}
    assert olds == {"—"}, tp


@pytest.mark.parametrize(
    ("number", "key"), [(2707, "dsv4-fp4-b200-vllm-agentic-mtp"), (1571, None), (2513, None)]
)
def test_a_real_body_shows_at_most_800_words(
    histories: tuple[Path, Path], tmp_path: Path, number: int, key: str | None
) -> None:
    """Issue #35: what a reader sees of each alignment PR without opening a <details> stays
    within 800 words; the settings not carried and the unchanged regression rows fold first,
    and are still there (#1571 writes three PRs, each its own body under prs/)."""
    out = tmp_path / "out"
    _align(histories, number, out, key)
    bodies = sorted(out.glob("prs/*/pr-body.md")) or [out / "pr-body.md"]
    for path in bodies:
        body = path.read_text()
        assert visible_words(body) <= 800, (path, visible_words(body))
        if "### Summary" in body:  # a recipe edit: the settings it does not carry are listed
            assert "Benchmark settings not carried into the recipe" in body


def test_a_new_checkpoint_gets_its_variant_with_the_settings_its_lanes_ran(
    histories: tuple[Path, Path], tmp_path: Path
) -> None:
    """InferenceX #1933 benchmarks nvidia/MiniMax-M3-NVFP4, which the recipes of 07-02 do not
    serve; maintainers added it on 07-08 (recipes #605) as a variant with --trust-remote-code
    and VLLM_FLOAT32_MATMUL_PRECISION=high. Those settings fall below their kinds' estimates,
    and used to drop the variant with them; now they go with it, and the body says why."""
    body = _align(histories, 1933, tmp_path / "out")
    patch = (tmp_path / "out" / "recipe.patch").read_text()
    assert '+  nvfp4:\n+    model_id: "nvidia/MiniMax-M3-NVFP4"' in patch
    assert '+      - "--trust-remote-code"' in patch
    assert '+      VLLM_FLOAT32_MATMUL_PRECISION: "high"' in patch
    assert (
        "- `--trust-remote-code`, `VLLM_FLOAT32_MATMUL_PRECISION` go with the new variant "
        "`nvfp4` whatever the history of their kind: every benchmarked profile of it ran "
        "them, and nothing else renders them."
    ) in body
    # its tuning stays out, offered (listed last)
    assert "`--gpu-memory-utilization 0.90` at `variants.nvfp4.extra_args` — tuning (" in body


def test_a_lane_that_swept_several_tps_is_context_and_its_comment_says_so(
    histories: tuple[Path, Path], tmp_path: Path
) -> None:
    """#2328 ran MiniMax-M3 NVFP4 on B300 at TP 2 and TP 4 (synthetic-acceptance arms) and
    evaluated at TP 4; the recipe of its day renders TP 1. No TP of the sweep is the model's,
    so no point stands for the recipe: the comment says nothing was compared (it said
    "already aligned", and that a guide section documented the points, which none did), and
    the table row names both TPs."""
    recipes = tmp_path / "recipes"
    bundle = shared_dir() / "data" / "history" / "recipes-main-upto-2026-07-31.bundle"
    subprocess.run(["git", "clone", "-q", str(bundle), str(recipes)], check=True)
    out = tmp_path / "out"
    status = main(
        [
            "align", "--bench-repo", str(histories[0]),
            "--bench-ref", "64c618996e535c814e6accaffb5afa0d4bbb6b40",
            "--bench-base", "86d7a413d90f88d21ec0a427d6247eefe348dc92", "--bench-pr", "2328",
            "--recipes", str(recipes), "--recipes-ref", "47f5be70426c5bc626ffdefc39744c369e345bdf",
            "--out", str(out),
        ]
    )  # fmt: skip
    assert status == 0 and not (out / "recipe.patch").exists()
    comment = (out / "comment.md").read_text()
    assert "#### `models/MiniMaxAI/MiniMax-M3.yaml` — context only" in comment
    assert "nothing in the recipe is compared with them." in comment
    assert "already aligned" not in comment and "documented in the guide" not in comment
    (row,) = [r for r in comment.splitlines() if "| throughput |" in r]
    assert "tp=4,ep=1" in row and "; tp=2,ep=1" in row

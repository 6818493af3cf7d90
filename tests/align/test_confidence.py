"""The adoption estimate and the gate (bot/align/confidence.py): only candidates whose kind
maintainers have taken often enough go into the diff; a flag's settings go or stay
together; a maintainer's `/recipe-sync add` overrides the estimate."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from bot.align.confidence import gate, kind_of
from bot.align.model import ChangeKind, Estimate, PlannedEdit
from bot.rules import Rules, default_rules_dir, load_rules
from bot.rules.practice import KindPractice, PracticeRules
from tests.planned import planned_edit
from tests.seed_cli import AlignCli


def _edit(kind: str, subject: str, node: str, before: str | None, after: str) -> PlannedEdit:
    return planned_edit(kind, subject, node, before, after, "Widget mi355x single_node_tp")


def _rules(kinds: dict[str, tuple[int, int]]) -> Rules:
    rules = load_rules()
    practice = PracticeRules(
        kinds={k: KindPractice(proposed=p, adopted=a, authors=a) for k, (p, a) in kinds.items()}
    )
    return replace(rules, practice=practice)


VENDOR = {"Widget mi355x single_node_tp": "amd"}
BACKEND = _edit("flag-new", "--moe-backend", "variants.default.extra_args", None, "aiter")
LOG = _edit("env-new", "AITER_TRITON_LOG_LEVEL", "variants.default.extra_env", None, "ERROR")


def test_the_kind_names_class_change_and_vendor() -> None:
    rules = load_rules()
    assert kind_of(BACKEND, rules, "amd") == ChangeKind("kernel", "new setting", "amd")
    image = _edit("image", "image", "model.docker_image.amd", "a:1", "a:2")
    assert kind_of(image, rules, "amd").key == "image/image/amd"
    # an image is its own change: "(image, AMD)", not "(image, image, AMD)" (#1978's PR)
    assert kind_of(image, rules, "amd").words() == "image, AMD"
    assert ChangeKind("kernel", "new setting", "").words() == "kernel, new setting"
    feature = _edit("flag-new", "--max-num-seqs", "features.agentic.args", None, "8")
    assert kind_of(feature, rules, "").change == "opt-in feature"


def test_the_estimate_is_shrunk_towards_one_in_three() -> None:
    kind = ChangeKind("kernel", "new setting", "amd")
    assert Estimate(kind, "", 0, 0, 0).probability == 1 / 3  # never seen: offered
    assert Estimate(kind, "k", 2, 2, 2).probability == 0.6  # twice taken: proposed
    assert Estimate(kind, "k", 10, 3, 3).probability == 4 / 13  # rarely taken: offered
    assert "of 9 scored proposals of this kind (kernel, new setting, AMD), maintainers " in (
        Estimate(kind, "k", 9, 6, 4).sentence()
    )


def test_candidates_below_the_threshold_are_offered_not_proposed() -> None:
    rules = _rules({"kernel/new setting/amd": (4, 3)})
    split = gate([BACKEND, LOG], rules, VENDOR)
    assert split.proposed == (BACKEND,)
    assert split.offered == (LOG,)  # its class has no history: never proposed on a hunch
    # the vendor-neutral counts serve when the vendor's own are missing
    split = gate([BACKEND], _rules({"kernel/new setting/any": (4, 3)}), VENDOR)
    assert split.proposed == (BACKEND,)


def test_one_flags_settings_go_or_stay_together() -> None:
    backend = _edit("flag-new", "--attention-config.backend", "a.extra_args", None, "FLASHINFER")
    option = _edit(
        "flag", "--attention-config.use_trtllm_attention", "a.extra_args", "false", "true"
    )
    rules = _rules({"kernel/new setting/amd": (4, 3)})  # the option's kind has no history
    split = gate([backend, option], rules, VENDOR)
    assert split.proposed == () and split.offered == (backend, option)


def test_a_maintainer_can_ask_for_an_offered_candidate() -> None:
    split = gate([BACKEND, LOG], _rules({}), VENDOR, frozenset({"AITER_TRITON_LOG_LEVEL"}))
    assert split.proposed == (LOG,) and split.offered == (BACKEND,)
    everything = replace(
        _rules({}), policy=_rules({}).policy.model_copy(update={"propose_above": 0})
    )
    assert gate([BACKEND, LOG], everything, VENDOR).offered == ()


def _rules_dir(tmp: Path, kinds: str) -> Path:
    rules = tmp / "rules"
    shutil.copytree(default_rules_dir(), rules)
    (rules / "practice.yaml").write_text(f"source: test\nkinds:\n{kinds}" if kinds else "{}\n")
    return rules


def test_with_no_history_the_seed_is_offered_not_proposed(
    align_cli: AlignCli, tmp_path: Path
) -> None:
    status, out = align_cli(extra=["--rules", str(_rules_dir(tmp_path, ""))])
    assert status == 1 and not (out / "recipe.patch").exists()  # nothing proposed, drift left
    comment = (out / "comment.md").read_text()
    assert "— candidates offered, none proposed" in comment
    assert "**Offered, not proposed**" in comment and "`/recipe-sync add FLAG`" in comment
    assert "`--moe-backend aiter`" in comment
    assert "no scored proposal of this kind (kernel, new setting, AMD) in the history" in comment
    check = json.loads((out / "plan.json").read_text())["check"]
    assert check["conclusion"] == "neutral"
    # the kernel, image and log level below the threshold, and the sweep's tuning
    assert check["title"].startswith("4 candidate edits offered, none proposed")


def test_include_proposes_an_offered_candidate(align_cli: AlignCli, tmp_path: Path) -> None:
    rules = _rules_dir(tmp_path, "")
    status, out = align_cli(extra=["--rules", str(rules), "--include", "moe-backend"])
    nodes = (out / "recipe.patch").read_text().split("recipe-sync:reproduction")[0]
    assert status == 1 and '- "--moe-backend"' in nodes and "AITER_TRITON_LOG_LEVEL" not in nodes
    body = (out / "pr-body.md").read_text()
    assert "**Offered, not proposed**" in body and "`AITER_TRITON_LOG_LEVEL=ERROR`" in body


def test_history_that_clears_the_threshold_proposes(align_cli: AlignCli, tmp_path: Path) -> None:
    kinds = '  "kernel/new setting/amd": {proposed: 4, adopted: 3, authors: 2}\n'
    status, out = align_cli(extra=["--rules", str(_rules_dir(tmp_path, kinds))])
    patch = (out / "recipe.patch").read_text()
    assert status == 1 and '- "--moe-backend"' in patch
    body = (out / "pr-body.md").read_text()
    assert "Adopted by maintainers before, by kind: kernel new setting (AMD): 3 of 4." in body


def test_one_maintainers_adoptions_are_not_yet_a_practice() -> None:
    rules = load_rules()
    practice = PracticeRules(
        kinds={"kernel/new setting/amd": KindPractice(proposed=3, adopted=3, authors=1)}
    )
    split = gate([BACKEND], replace(rules, practice=practice), VENDOR)
    assert split.proposed == () and split.offered == (BACKEND,)  # 0.67, but one author
    # the offer says why a kind taken 3 times in 3 waits (a reader saw only "adopted 3")
    assert (
        split.estimates[(BACKEND.node, BACKEND.subject)]
        .sentence()
        .endswith(
            "maintainers adopted 3, all by one maintainer (a kind is proposed once 2 maintainers "
            "have taken it)"
        )
    )
    # a kind whose rate is under the threshold as well is not told it waits only for authors
    rare = PracticeRules(
        kinds={"kernel/new setting/amd": KindPractice(proposed=10, adopted=1, authors=1)}
    )
    split = gate([BACKEND], replace(rules, practice=rare), VENDOR)
    said = split.estimates[(BACKEND.node, BACKEND.subject)].sentence()
    assert said.endswith("maintainers adopted 1"), said
    two = PracticeRules(
        kinds={"kernel/new setting/amd": KindPractice(proposed=3, adopted=3, authors=2)}
    )
    assert gate([BACKEND], replace(rules, practice=two), VENDOR).proposed == (BACKEND,)


def test_include_writes_an_offered_verification_mark(align_cli: AlignCli) -> None:
    """Without evidence the seed's MI355X mark is offered; ``--include meta.hardware.mi355x``
    (the CLI's spelling of ``/recipe-sync add``) writes it."""
    status, out = align_cli(gated=True, evidence=False)
    assert status == 1 and "mi355x: verified" not in (out / "recipe.patch").read_text()
    assert "`/recipe-sync add meta.hardware.mi355x` writes it" in (out / "pr-body.md").read_text()
    status, out = align_cli(gated=True, evidence=False, extra=["--include", "meta.hardware.mi355x"])
    assert status == 1 and "+    mi355x: verified" in (out / "recipe.patch").read_text()


def test_drop_declines_a_verification_mark_an_eval_backs(align_cli: AlignCli) -> None:
    """With the seed's passing eval the MI355X mark is written; ``--drop
    meta.hardware.mi355x`` leaves it out and every text says it is not marked."""
    status, out = align_cli(gated=True)
    assert status == 1 and "+    mi355x: verified" in (out / "recipe.patch").read_text()
    status, out = align_cli(gated=True, extra=["--drop", "meta.hardware.mi355x"])
    assert status == 1 and "mi355x: verified" not in (out / "recipe.patch").read_text()
    body = (out / "pr-body.md").read_text()
    assert "Not marked verified on MI355X: a maintainer declined it" in body


def test_settings_one_launch_runs_together_go_or_stay_together() -> None:
    """InferenceX #2616 (Kimi-K3 B300) launched DCP 8 with TOKENSPEED_MLA. DCP needs an
    attention backend that returns the softmax LSE, so DCP without the backend the lane
    ran is a command no benchmark ran, which may not start (rules/knobs.yaml `together`)."""
    dcp = _edit("flag-new", "--decode-context-parallel-size", "a.extra_args", None, "8")
    backend = _edit("flag-new", "--attention-backend", "b.extra_args", None, "TOKENSPEED_MLA")
    rules = _rules({"serving/new setting/amd": (4, 3)})  # DCP's own kind is well taken
    unknown = {"--attention-backend": ("unknown", "attention kernel selection")}
    split = gate([dcp, backend], rules, VENDOR, offer_only=unknown)  # type: ignore[arg-type]
    assert split.proposed == () and split.offered == (dcp, backend)
    wait = split.waiting[(dcp.node, dcp.subject)]
    assert (wait.reason, wait.setting) == ("together", "--attention-backend")
    assert "softmax LSE" in wait.what
    # ticking one takes the other
    ticked = gate(
        [dcp, backend],
        rules,
        VENDOR,
        frozenset({"--decode-context-parallel-size"}),
        offer_only=unknown,  # type: ignore[arg-type]
    )
    assert ticked.proposed == (dcp, backend) and ticked.offered == ()
    # the PR says which setting came with the ticked one, and why
    came_with, group = ticked.companions[(backend.node, backend.subject)]
    assert came_with == "--decode-context-parallel-size"
    assert group.name == "decode context parallelism"
    assert (dcp.node, dcp.subject) not in ticked.companions  # asked for itself
    # a backend another lane needs does not hold this lane's DCP back
    lane = "Widget mi300x single_node_tp"
    other = replace(backend, targets=(lane,))
    alone = gate([dcp, other], rules, {**VENDOR, lane: "amd"}, offer_only=unknown)  # type: ignore[arg-type]
    assert alone.proposed == (dcp,) and alone.offered == (other,)

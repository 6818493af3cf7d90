"""A maintainer who removed a deprecated spelling withdrew the setting it means
(rules/vllm-defaults.yaml `superseded`): removing
``--attention-config.use_trtllm_ragged_deepseek_prefill=True`` ("Let Kimi recipes auto-select
MLA prefill backend") took the MLA prefill backend out, so a benchmark's
``mla_prefill_backend`` is not proposed again within 30 days (issue #31 item 4)."""

from __future__ import annotations

from pathlib import Path

from bot.align.model import PlannedEdit
from bot.align.reverts import withhold_reverts
from bot.recipes.leaves import Leaf
from bot.recipes.withdrawals import History, Withdrawal
from bot.vllm.defaults import load_vllm_defaults
from tests.planned import planned_edit

RULES = Path(__file__).resolve().parents[2] / "rules"
NODE = "variants.nvfp4.hardware_overrides.b200.extra_args"
RECIPE = "models/moonshotai/Kimi-K2.5.yaml"


def _edit(subject: str, after: str) -> PlannedEdit:
    return planned_edit("flag-new", subject, NODE, None, after, "Kimi-K2.5 b200 single_node_tp")


def _removed(subject: str, value: str) -> History:
    leaf = Leaf(RECIPE, "hardware_overrides.blackwell.extra_args", "arg", subject, value)
    withdrawal = Withdrawal(leaf, True, None, "5636cbc08e2d", "2026-07-29", "Simon Mo",
                            "Let Kimi recipes auto-select MLA prefill backend (#701)")  # fmt: skip
    return History(True, "", (withdrawal,))


EDITS = (
    _edit(
        "--attention-config.mla_prefill_backend",
        "--attention-config.mla_prefill_backend FLASHINFER",
    ),
    _edit(
        "--attention-config.use_prefill_query_quantization",
        "--attention-config.use_prefill_query_quantization true",
    ),
    _edit("--linear-backend", "--linear-backend flashinfer_cutlass"),
)
SUPERSEDED = load_vllm_defaults(RULES).superseded


def test_removing_the_deprecated_spelling_withdrew_the_backend() -> None:
    history = _removed("--attention-config.use_trtllm_ragged_deepseek_prefill", "true")
    reverts = withhold_reverts(EDITS, history, frozenset(), SUPERSEDED)
    assert [e.subject for e in reverts.kept] == ["--linear-backend"]
    [(root, line)] = reverts.withheld
    assert root == "--attention-config"
    assert line.startswith(
        "--attention-config.mla_prefill_backend (with "
        "--attention-config.use_prefill_query_quantization, of the same flag): not proposed"
    )
    assert (
        "removed use_trtllm_ragged_deepseek_prefill=true, this setting's deprecated spelling"
        in line
    )
    assert "5636cbc" in line
    # without the rules' reading, the removal names another field and withholds nothing
    assert len(withhold_reverts(EDITS, history, frozenset()).kept) == 3


def test_a_deprecated_field_that_selected_nothing_withdrew_nothing() -> None:
    history = _removed("--attention-config.use_trtllm_ragged_deepseek_prefill", "false")
    assert len(withhold_reverts(EDITS, history, frozenset(), SUPERSEDED).kept) == 3


def test_a_maintainer_can_still_ask_for_it() -> None:
    history = _removed("--attention-config.use_trtllm_ragged_deepseek_prefill", "true")
    asked = frozenset({"--attention-config.mla_prefill_backend"})
    assert len(withhold_reverts(EDITS, history, asked, SUPERSEDED).kept) == 3


def test_turning_the_deprecated_field_off_withdrew_only_the_backend_it_chose() -> None:
    leaf = Leaf(RECIPE, "hardware_overrides.blackwell.extra_args", "arg",
                "--attention-config.use_trtllm_ragged_deepseek_prefill", "true")  # fmt: skip
    changed = Withdrawal(leaf, False, "false", "5636cbc08e2d", "2026-07-29", "Simon Mo", "off")
    history = History(True, "", (changed,))
    ragged = _edit(
        "--attention-config.mla_prefill_backend",
        "--attention-config.mla_prefill_backend TRTLLM_RAGGED",
    )
    [(_, line)] = withhold_reverts((ragged,), history, frozenset(), SUPERSEDED).withheld
    assert (
        "changed use_trtllm_ragged_deepseek_prefill=true, this setting's deprecated spelling, "
        "to 'false' at "
    ) in line
    # another backend than the one it chose undoes nothing
    assert len(withhold_reverts(EDITS, history, frozenset(), SUPERSEDED).kept) == 3

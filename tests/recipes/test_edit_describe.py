# ruff: noqa: E501  (one edit and its description per line reads best)
"""Edits as one readable line each, and as JSON that loads back to the same edit."""

from __future__ import annotations

import json

import pytest

from bot.recipes.edit import (
    AppendItems,
    Edit,
    EnsurePath,
    InsertItems,
    InsertKey,
    RemoveItems,
    SetComment,
    SetScalar,
    describe,
    edit_as_dict,
    edit_from_dict,
)

CASES: list[tuple[Edit, str]] = [
    (
        SetScalar("hardware_overrides.amd.extra_args[3]", "aiter"),
        'set hardware_overrides.amd.extra_args[3] = "aiter"',
    ),
    (
        InsertKey(
            "hardware_overrides.amd.extra_env",
            "AITER_TRITON_LOG_LEVEL",
            "ERROR",
            after="VLLM_ROCM_USE_AITER_MOE",
        ),
        'add hardware_overrides.amd.extra_env.AITER_TRITON_LOG_LEVEL = "ERROR" after VLLM_ROCM_USE_AITER_MOE',
    ),
    (InsertKey("meta", "k", 1, before="title"), "add meta.k = 1 before title"),
    (
        EnsurePath(
            "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args",
            ["--max-num-seqs", "128"],
        ),
        'ensure strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args = ["--max-num-seqs", "128"]',
    ),
    (
        InsertItems("model.base_args", 0, ["--x"], comment="why"),
        'insert ["--x"] into model.base_args at 0',
    ),
    (AppendItems('meta["a.b"]', [1, None]), 'append [1, null] to meta["a.b"]'),
    (RemoveItems("args", 2, 2), "remove args[2..3]"),
    (RemoveItems("args", 0), "remove args[0]"),
    (SetComment("args[2]", ["one", "two"]), 'comment args[2]: ["one", "two"]'),
]


@pytest.mark.parametrize(("edit", "line"), CASES)
def test_describe_and_json_round_trip(edit: Edit, line: str) -> None:
    assert describe(edit) == line
    assert edit_from_dict(json.loads(json.dumps(edit_as_dict(edit)))) == edit


def test_unknown_op_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown edit op 'Rename'"):
        edit_from_dict({"op": "Rename", "path": "a"})

"""Recipe documents and edits reduced to comparable leaves."""

from __future__ import annotations

import json

from bot.agreement.proposals import edit_leaves
from bot.backtest.model import EditRow
from bot.recipes.leaves import Leaf, diff_leaves, recipe_leaves
from bot.vllm.pairs import flag_pairs, launch_pairs

RECIPE = "models/x/M.yaml"


def test_json_and_dotted_spellings_of_one_setting_are_the_same_pairs() -> None:
    whole = flag_pairs(["--attention-config", '{"use_trtllm_attention": true, "b": "X"}'])
    dotted = flag_pairs(
        ["--attention_config.use_trtllm_attention", "true", "--attention-config.b=X"]
    )
    assert (
        sorted(whole)
        == sorted(dotted)
        == [
            ("--attention-config.b", "X"),
            ("--attention-config.use_trtllm_attention", "true"),
        ]
    )


def test_switches_values_and_unknown_flags() -> None:
    tokens = ["--async-scheduling", "--no-enable-prefix-caching", "--max-num-seqs", "8"]
    pairs = dict(flag_pairs([*tokens, "--made-up-flag", "7"]))
    assert pairs == {
        "--async-scheduling": "",
        "--enable-prefix-caching": "false",
        "--max-num-seqs": "8",
        "--made-up-flag": "7",
    }
    assert dict(launch_pairs(["vllm", "serve", "org/model", "-tp", "4"])) == {
        "--tensor-parallel-size": "4"
    }


def test_recipe_leaves_by_container() -> None:
    data = {
        "meta": {"hardware": {"mi355x": "verified"}, "description": "prose is not a launch"},
        "model": {"docker_image": {"amd": "docker pull vllm/vllm-openai-rocm:nightly"}},
        "variants": {
            "mxfp8": {
                "tp": 8,
                "hardware_overrides": {
                    "mi300x": {
                        "extra_args": ["--max-num-batched-tokens", "16384", "--async-scheduling"],
                        "extra_env": {"VLLM_ROCM_USE_AITER": 1},
                    }
                },
            }
        },
        "guide": "## not a leaf",
    }
    leaves = recipe_leaves(RECIPE, data)
    scope = "variants.mxfp8.hardware_overrides.mi300x"
    env = leaves[(RECIPE, f"{scope}.extra_env", "VLLM_ROCM_USE_AITER")]
    assert (env.slot, env.value, env.scope, env.launch) == ("env", "1", scope, True)
    assert leaves[(RECIPE, f"{scope}.extra_args", "--async-scheduling")].value == ""
    image = leaves[(RECIPE, "model.docker_image.amd", "image")]
    assert image.value == "vllm/vllm-openai-rocm:nightly"  # a copied `docker pull` dropped
    assert leaves[(RECIPE, "meta.hardware.mi355x", "meta.hardware.mi355x")].launch
    assert leaves[(RECIPE, "variants.mxfp8.tp", "tp")].launch
    assert not leaves[(RECIPE, "meta.description", "description")].launch
    assert not any(k[1] == "guide" for k in leaves)


def test_diff_leaves_adds_changes_and_removals() -> None:
    before = recipe_leaves(
        RECIPE, {"model": {"base_args": ["--max-num-seqs", "1", "--block-size", "2"]}}
    )
    after = recipe_leaves(
        RECIPE, {"model": {"base_args": ["--max-num-seqs", "3", "--async-scheduling"]}}
    )
    changes = {
        (c.leaf.subject, c.leaf.value, c.before, c.removed) for c in diff_leaves(before, after)
    }
    assert changes == {
        ("--max-num-seqs", "3", "1", False),
        ("--block-size", "2", "2", True),
        ("--async-scheduling", "", None, False),
    }


def test_edit_rows_become_the_leaves_a_maintainer_would_write() -> None:
    scope = "strategy_overrides.single_node_tp.hardware_overrides.mi355x"
    env = EditRow(RECIPE, "env-new", "X", f"{scope}.extra_env.X", None, "1")
    assert edit_leaves(env) == ((Leaf(RECIPE, f"{scope}.extra_env", "env", "X", "1"),), False)
    flag = EditRow(
        RECIPE, "flag-new", "--compilation-config", f"{scope}.extra_args", None,
        '--compilation-config {"mode":3,"cudagraph_mode":"FULL_AND_PIECEWISE"}',
    )  # fmt: skip
    leaves, removes = edit_leaves(flag)
    assert not removes
    assert {(leaf.subject, leaf.value) for leaf in leaves} == {
        ("--compilation-config.mode", "3"),
        ("--compilation-config.cudagraph_mode", "FULL_AND_PIECEWISE"),
    }
    spec = '{"method": "eagle3", "num_speculative_tokens": 3}'
    node = "features.spec_decoding.hardware_overrides.amd.args"
    after = json.dumps(["--speculative-config", spec])
    whole = EditRow(RECIPE, "flag", "--speculative-config", node, None, after)
    assert {leaf.subject for leaf in edit_leaves(whole)[0]} == {
        "--speculative-config.method",
        "--speculative-config.num_speculative_tokens",
    }
    image = EditRow(RECIPE, "image", "image", "variants.default.docker_image", "a:1", "a:2")
    assert edit_leaves(image)[0][0].value == "a:2"

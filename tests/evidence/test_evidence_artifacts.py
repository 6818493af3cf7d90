from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.evidence.artifacts import (
    AggEvalRow,
    parse_agg_eval,
    parse_command_file,
    parse_lm_eval_results,
)
from bot.evidence.lmeval import EvalRow

# lm-eval 0.4 results file shape (synthetic numbers, the seed's figures)
RESULTS = {
    "results": {
        "gsm8k": {
            "alias": "gsm8k",
            "exact_match,strict-match": 0.9689,
            "exact_match_stderr,strict-match": 0.0048,
            "exact_match,flexible-extract": 0.9682,
            "exact_match_stderr,flexible-extract": "N/A",
        }
    },
    "group_subtasks": {"gsm8k": []},
    "versions": {"gsm8k": 3},
    "n-shot": {"gsm8k": 5},
    "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}},
    "config": {
        "model": "local-chat-completions",
        "model_args": "model=deepseek-ai/DeepSeek-V4.1-Flash,base_url=http://0.0.0.0:8891/v1/"
        "chat/completions,num_concurrent=32,max_length=9472",
    },
    "lm_eval_version": "0.4.9",
    "model_name": "deepseek-ai/DeepSeek-V4.1-Flash",
}


def test_lm_eval_results_json() -> None:
    assert parse_lm_eval_results(json.dumps(RESULTS)) == (
        EvalRow("gsm8k", "3", "strict-match", 5, "exact_match", 0.9689, 0.0048, 32, 0),
        EvalRow("gsm8k", "3", "flexible-extract", 5, "exact_match", 0.9682, None, 32, 0),
    )
    not_lm_eval = {key: value for key, value in RESULTS.items() if key != "lm_eval_version"}
    assert parse_lm_eval_results(json.dumps(not_lm_eval)) == ()
    assert parse_lm_eval_results("{") == ()


def test_command_file_round_trips_the_seed_line(seed_dir: Path) -> None:
    log = (seed_dir / "logs" / "97311840107.txt").read_text()
    line = next(line for line in log.split("\n") if " vllm serve " in line and "\\{" in line)
    command_file = line.split("Z ", 1)[1] + "\n"
    expected = json.loads((seed_dir / "expected-argv.json").read_text())
    assert parse_command_file(command_file) == (tuple(expected["agentic eval / * | eval-only"]),)
    shards = "lmcache server 0 --port 65432 \nlmcache server 1 --port 65433 \n\n"
    assert parse_command_file(shards) == (
        ("lmcache", "server", "0", "--port", "65432"),
        ("lmcache", "server", "1", "--port", "65433"),
    )


def test_agg_eval_all_rows() -> None:
    rows = [
        {
            "is_multinode": False,
            "model_prefix": "dsv41flash",
            "model": "deepseek-ai/DeepSeek-V4.1-Flash",
            "hw": "cluster:mi355x-amds",
            "framework": "vllm",
            "precision": "fp4",
            "spec_decoding": "mtp",
            "isl": 0,
            "osl": 0,
            "tp": 4,
            "ep": 1,
            "conc": 32,
            "dp_attention": False,
            "task": "gsm8k",
            "em_strict": 0.9689,
            "em_strict_se": 0.0048,
            "em_flexible": 0.9682,
            "em_flexible_se": 0.0048,
            "n_eff": 1319,
            "source": "results_2026-09-12T10-48-54.json",
            "score": 0.9689,
            "score_name": "em_strict",
            "score_se": 0.0048,
        },
        {"model_prefix": "broken"},
    ]
    assert parse_agg_eval(json.dumps(rows)) == (
        AggEvalRow(
            model_prefix="dsv41flash",
            hw="cluster:mi355x-amds",
            framework="vllm",
            precision="fp4",
            spec_decoding="mtp",
            tp=4,
            ep=1,
            conc=32,
            dp_attention=False,
            is_multinode=False,
            task="gsm8k",
            em_strict=0.9689,
            em_strict_se=0.0048,
            em_flexible=0.9682,
            em_flexible_se=0.0048,
            n_eff=1319,
        ),
    )
    assert parse_agg_eval('{"rows": []}') == ()


_json = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_json, st.text())
def test_artifact_parsers_never_raise(data: object, text: str) -> None:
    encoded = json.dumps(data)
    for payload in (encoded, text, json.dumps({"lm_eval_version": "x", "results": data})):
        parse_lm_eval_results(payload)
        parse_agg_eval(payload)
        parse_command_file(payload)


def test_hostile_nesting_is_no_rows() -> None:
    assert parse_lm_eval_results("[" * 100_000) == ()
    assert parse_agg_eval("[" * 100_000) == ()

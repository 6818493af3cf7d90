from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.evidence import launch as launch_module
from bot.evidence.launch import (
    ArgvDifference,
    find_launch_lines,
    first_difference,
    launch_context,
    preferred_launch,
    server_ready,
    speculative_config,
    uses_synthetic_acceptance,
)
from bot.evidence.logtext import log_lines, strip_line
from tests.evidence.conftest import FIXTURE_LOGS, SCRIPT

EVAL_LOG = "97311840107.txt"
THROUGHPUT_LOG = "97311840106.txt"


def test_strip_line_removes_timestamp_ansi_and_cr() -> None:
    raw = "2026-09-12T10:31:07.1234567Z \x1b[1;36m(APIServer pid=1)\x1b[0;0m INFO ok\r"
    assert strip_line(raw) == "(APIServer pid=1) INFO ok"
    assert strip_line("no timestamp") == "no timestamp"
    lines = log_lines("\ufeff2026-09-12T10:31:07Z a\n2026-09-12T10:31:07.5Z b")
    assert [(line.number, line.text) for line in lines] == [(1, "a"), (2, "b")]


def test_seed_eval_log_printf_q_line(seed_dir: Path) -> None:
    expected = json.loads((seed_dir / "expected-argv.json").read_text())
    log = (seed_dir / "logs" / EVAL_LOG).read_text()
    launches = find_launch_lines(log)
    assert len(launches) == 1
    launch = preferred_launch(launches)
    assert launch is not None
    assert launch.kind == "printf-q"
    assert launch.argv == tuple(expected["agentic eval / * | eval-only"])
    assert launch.argv[-4:] == (
        "--language-model-only",
        "--speculative-config",
        '{"method":"dspark","num_speculative_tokens":5,"draft_sample_method":"probabilistic",'
        '"rejection_sample_method":"block","enable_adaptive_verification":false}',
        "--disable-uvicorn-access-log",
    )
    assert len(launch.argv) == 28 and launch.argv[13:15] == ("--max-num-seqs", "128")
    assert launch.text.startswith("vllm serve deepseek-ai/DeepSeek-V4.1-Flash ")
    assert not uses_synthetic_acceptance(launch.argv)
    assert speculative_config(launch.argv) == {
        "method": "dspark",
        "num_speculative_tokens": 5,
        "draft_sample_method": "probabilistic",
        "rejection_sample_method": "block",
        "enable_adaptive_verification": False,
    }
    assert server_ready(log)


def test_seed_throughput_log_uses_synthetic_acceptance(seed_dir: Path) -> None:
    expected = json.loads((seed_dir / "expected-argv.json").read_text())
    launch = preferred_launch(find_launch_lines((seed_dir / "logs" / THROUGHPUT_LOG).read_text()))
    assert launch is not None
    assert launch.argv == tuple(expected["agentic / *"])
    assert uses_synthetic_acceptance(launch.argv)
    assert (speculative_config(launch.argv) or {})["synthetic_acceptance_length"] == 3.8


def test_launcher_line_names_script_and_image(seed_dir: Path) -> None:
    context = launch_context((seed_dir / "logs" / EVAL_LOG).read_text())
    assert context.script_path == SCRIPT
    assert context.image == (
        "/it-share/squash/vllm+vllm-openai-rocm+nightly-eed1f3d0c6043bd494424a22443ee198dd56f657.sqsh"
    )
    docker = launch_context((FIXTURE_LOGS / "xtrace-fixed-seq-len.txt").read_text())
    assert docker.script_path == "benchmarks/single_node/fixed_seq_len/foo_fp8_h200.sh"
    assert docker.image is None  # docker run's positional image is not guessed


def test_xtrace_log_multi_line_word_and_nesting() -> None:
    log = (FIXTURE_LOGS / "xtrace-fixed-seq-len.txt").read_text()
    expected = tuple(json.loads((FIXTURE_LOGS / "xtrace-fixed-seq-len.expected.json").read_text()))
    launches = find_launch_lines(log)
    assert [launch.kind for launch in launches] == ["xtrace", "xtrace"]
    first, nested = launches
    assert first.argv == expected
    assert first.argv[14] == "{% for m in messages %}\n{{ m.content }}\n{% endfor %}"
    assert first.argv[16] == "it's foo" and first.argv[18] == ""
    assert first.line_number == 15 and first.text.count("\n") == 2
    assert nested.argv == ("vllm", "serve", "acme/Foo-7B", "--port", "8888", "--max-num-seqs", "64")
    assert preferred_launch(launches) == first
    assert server_ready(log)


def test_printf_q_line_that_differs_from_the_extraction() -> None:
    log = (FIXTURE_LOGS / "printf-q-differs.txt").read_text()
    data = json.loads((FIXTURE_LOGS / "printf-q-differs.expected.json").read_text())
    launch = preferred_launch(find_launch_lines(log))
    assert launch is not None and launch.kind == "printf-q"
    assert launch.argv == tuple(data["found"])
    assert launch.argv[8] == '{"mode":3,\n "cudagraph_mode":"FULL_DECODE_ONLY"}'  # $'…\n…'
    assert first_difference(launch.argv, tuple(data["extracted"])) == ArgvDifference(
        10, "256", "128"
    )


def test_first_difference_when_one_argv_is_longer() -> None:
    assert first_difference(("a", "b"), ("a", "b")) is None
    assert first_difference(("a",), ("a", "b")) == ArgvDifference(1, None, "b")
    assert first_difference(("a", "b"), ("a",)) == ArgvDifference(1, "b", None)


def test_env_prefixes_and_program_path() -> None:
    log = "\n".join(
        [
            "+ VLLM_X=1 vllm serve m --port 1",
            "++ env VLLM_Y=2 /usr/local/bin/vllm serve m --port 2",
            "+ vllm --version",  # not a server launch
            "vllm serve is starting (pid 7)",  # prose, not a printf %q line
            "+ echo vllm serve m",
        ]
    )
    launches = find_launch_lines(log)
    assert [(launch.argv, launch.env_prefix) for launch in launches] == [
        (("vllm", "serve", "m", "--port", "1"), ("VLLM_X=1",)),
        (("/usr/local/bin/vllm", "serve", "m", "--port", "2"), ("VLLM_Y=2",)),
    ]


def test_printf_q_is_preferred_over_xtrace() -> None:
    log = "+ vllm serve m --port 1\nvllm serve m --port 2 \n"
    launch = preferred_launch(find_launch_lines(log))
    assert launch is not None and (launch.kind, launch.argv[-1]) == ("printf-q", "2")
    assert preferred_launch(()) is None


def test_speculative_config_forms() -> None:
    dotted = ("vllm", "serve", "m", "--speculative-config.rejection-sample-method", "synthetic")
    assert uses_synthetic_acceptance(dotted)
    equals = ("vllm", "serve", '--speculative-config={"rejection_sample_method": "synthetic"}')
    assert uses_synthetic_acceptance(equals)
    broken = ("vllm", "serve", "--speculative-config", '{"rejection_sample_method":"synthetic",')
    assert uses_synthetic_acceptance(broken)
    assert speculative_config(("vllm", "serve")) is None
    assert not uses_synthetic_acceptance(("vllm", "serve", "--speculative-config", "[]"))


def test_continuation_work_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    log = "+ vllm serve m --chat-template 'a\nb\nc' --port 1"
    assert find_launch_lines(log)[0].argv[-3:] == ("a\nb\nc", "--port", "1")
    monkeypatch.setattr(launch_module, "CONTINUATION_BUDGET", 10)
    hostile = "\n".join(["+ vllm serve 'x", "a'b'c"] * 3) + "\n" + log
    assert find_launch_lines(hostile) == ()  # budget spent: no more multi-line joins

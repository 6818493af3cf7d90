"""``recipe-sync diff``: JSON in, aligned table or JSON out, one-line errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.commands.main import main
from tests.shared import corpus_dir

CORPUS = corpus_dir()
SPEC = '{"method":"dspark","num_speculative_tokens":5,"rejection_sample_method":"%s"}'


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.fixture()
def sides(tmp_path: Path) -> tuple[Path, Path]:
    bench = write(
        tmp_path,
        "bench.json",
        {
            "argv": ["vllm", "serve", "m/M", "--max-num-seqs", "128", "--port", "8888",
                     "--speculative-config", SPEC % "synthetic"],
            "env": {"VLLM_ROCM_USE_AITER": "1"},
            "image": "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657",
        },
    )  # fmt: skip
    recipe = write(
        tmp_path,
        "recipe.json",
        {
            "command": "VLLM_ROCM_USE_AITER=1 vllm serve m/M --speculative-config '%s'"
            % (SPEC % "block"),
            "image": "vllm/vllm-openai-rocm:deepseekv41-flash-0909",
            "min_vllm_version": "0.25.0",
        },
    )
    return bench, recipe


def test_text_table(sides: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    bench, recipe = sides
    status = main(
        ["diff", "--bench-json", str(bench), "--recipe-json", str(recipe), "--hardware", "mi355x"]
    )
    out = capsys.readouterr().out
    assert status == 1  # the served configurations differ
    assert out.startswith("vLLM 0.33.0 (nightly): nightly image: assumed 0.33 rules")
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("VERDICT"))
    seqs = next(line for line in lines if "--max-num-seqs" in line)
    # aligned columns: each row's FLAG cell starts where the header's does
    assert seqs.index("--max-num-seqs") == header.index("FLAG")
    assert seqs.startswith("differs") and "(omitted)" in seqs and "1024" in seqs
    assert any(line.startswith("front-end-only") and "--port" in line for line in lines)
    assert any(
        line.startswith("benchmark-only") and "--speculative-config" in line for line in lines
    )
    assert "identical: no" in lines[-1]


def test_json_output(sides: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    bench, recipe = sides
    main(
        [
            "diff",
            "--bench-json",
            str(bench),
            "--recipe-json",
            str(recipe),
            "--hardware",
            "mi355x",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    by_key = {d["key"]: d for d in data["diffs"]}
    assert by_key["scheduler.max_num_seqs"]["verdict"] == "differs"
    assert by_key["speculative_config"]["benchmark_only_keys"] == ["rejection_sample_method"]
    assert by_key["VLLM_ROCM_USE_AITER"]["verdict"] == "same"  # from the command's env prefix
    assert data["device"] == {
        "hardware": "mi355x",
        "memory_gib": 287.98,
        "device_name": "AMD Instinct MI355X",
        "platform": "rocm",
        "tier": "≥160 GiB",
    }


def test_identical_sides_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    side = write(tmp_path, "s.json", {"argv": ["vllm", "serve", "m/M", "-tp", "2"]})
    other = write(
        tmp_path,
        "o.json",
        {"argv": ["vllm", "serve", "--model", "m/M", "--tensor_parallel_size=2"]},
    )
    assert (
        main(
            [
                "diff",
                "--bench-json",
                str(side),
                "--recipe-json",
                str(other),
                "--vllm-version",
                "0.27.1",
            ]
        )
        == 0
    )
    assert "identical: yes" in capsys.readouterr().out


@pytest.mark.skipif(not CORPUS.is_dir(), reason="recipes corpus not present")
def test_recipes_taxonomy_gives_per_gpu_memory(
    sides: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    bench, recipe = sides
    main(
        [
            "diff",
            "--bench-json",
            str(bench),
            "--recipe-json",
            str(recipe),
            "--hardware",
            "h200",
            "--recipes",
            str(CORPUS),
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert data["device"]["memory_gib"] == 141.0 and data["device"]["tier"].startswith("70–160 GiB")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"argv": ["vllm", "serve"],\n  "env": [1]}', "key 'env': expected an object"),
        ('{"argv": "vllm serve m"}', "key 'argv': expected a list of strings"),
        ('{"argv": [], "extra": 1}', "key 'extra': unknown key"),
        ('{"argv": [\n  "vllm",\n  oops]}', ":3: malformed JSON"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    bad = write(tmp_path, "bad.json", content)
    good = write(tmp_path, "good.json", {"argv": ["vllm", "serve", "m"]})
    assert main(["diff", "--bench-json", str(bad), "--recipe-json", str(good)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("recipe-sync: error: ") and expected in err and err.count("\n") == 1


def test_unknown_hardware_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.json", {"argv": ["vllm", "serve", "m"]})
    assert (
        main(
            ["diff", "--bench-json", str(good), "--recipe-json", str(good), "--hardware", "tpu9000"]
        )
        == 2
    )
    assert "unknown hardware id 'tpu9000'" in capsys.readouterr().err

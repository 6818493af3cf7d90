"""``recipe-sync render``: whole API, one rendering with provenance, and batches."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.commands.main import main
from bot.recipes import RecipesRepo, build_api

MakeRepo = Callable[..., RecipesRepo]
V4F = "deepseek-ai/DeepSeek-V4-Flash"
SMALL = """
meta: {title: Small, tasks: [text]}
model: {model_id: test/Small, base_args: ["--a", "1"]}
variants:
  default: {vram_minimum_gb: 10}
  q: {vram_minimum_gb: 5, model_id: other/Small-Q}
compatible_strategies: [single_node_tp, multi_node_tp]
"""


def test_api_out_writes_the_api(
    make_repo: MakeRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"models/test/Small.yaml": SMALL})
    out = tmp_path / "public"
    assert main(["render", "--recipes", repo.label, "--api-out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("1 models (1 with recommended_command,")
    expected = build_api(repo)
    assert expected  # both the parent and the promoted variant render
    for path, rendering in expected.items():
        assert json.loads((out / path).read_text(encoding="utf-8")) == rendering
    assert (out / "test/Small.json").is_file() and (out / "other/Small-Q.json").is_file()
    recipe = json.loads((out / "test/Small.json").read_text(encoding="utf-8"))
    assert recipe["by_hardware"]["h200"] == "/test/Small/hw/h200.json"
    assert "compatible_strategies" not in recipe


def test_single_rendering_as_json_with_provenance(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "render",
            "--recipes",
            str(corpus),
            "--model",
            V4F,
            "--hardware",
            "h200",
            "--strategy",
            "single_node_tep",
            "--variant",
            "fp8",
            "--features",
            "tool_calling,spec_decoding",
            "--mode",
            "spec_decoding=mtp",
            "--json",
        ]
    )
    assert status == 0
    found = json.loads(capsys.readouterr().out)
    assert found["recipe_path"] == "models/deepseek-ai/DeepSeek-V4-Flash.yaml"
    assert found["request"]["features"] == ["tool_calling", "spec_decoding"]
    assert found["request"]["nodes"] == 1
    (command,) = found["commands"]
    assert command["argv"][2] == V4F  # fp8 has no model_id: the recipe's
    last = command["args"][-1]
    assert last == {
        "flag": "--speculative-config",
        "value": '{"method":"mtp","num_speculative_tokens":1}',
        "path": "features.spec_decoding.modes.mtp.hardware_overrides.hopper.args[0]",
        "shadowed": [],
    }
    assert found["rendering"]["argv"] == command["argv"]
    assert found["image_origin"] == "default-image:nvidia"


def test_single_rendering_as_text(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["render", "--recipes", str(corpus), "--model", V4F, "--hardware", "mi355x"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "single_node_tep, variant default, 1 node," in text
    assert "# image vllm/vllm-openai-rocm:nightly  <- model.docker_image.amd" in text
    assert "--distributed-executor-backend mp  <- hardware_overrides.amd.extra_args[0]" in text


def test_batch_renders_each_line_and_reports_bad_lines(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "in.jsonl"
    lines = [
        {
            "model": V4F,
            "hardware": "b200",
            "strategy": None,
            "variant": None,
            "features": None,
            "modes": {},
            "nodes": None,
        },
        "{not json",
        {"model": V4F, "hardware": "h900"},
        {"hardware": "h200"},
        "",
        {
            "model": V4F,
            "hardware": "h200",
            "strategy": "multi_node_dep",
            "nodes": 3,
            "features": ["reasoning"],
        },
    ]
    batch.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
        encoding="utf-8",
    )
    status = main(["render", "--recipes", str(corpus), "--batch", str(batch)])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 1  # some lines failed
    assert len(out) == 6
    assert out[0]["request"]["strategy"] == "single_node_tep"
    assert out[0]["rendering"]["hardware"] == "b200"
    assert out[1]["error"].startswith("batch line 2: not JSON")
    assert out[2] == {
        "error": "batch line 3: render request: key 'hardware': unknown hardware id 'h900'"
    }
    assert out[3]["error"] == "batch line 4: key 'model': expected a non-empty string"
    assert out[4]["error"] == "batch line 5: empty line"
    assert [c["role"] for c in out[5]["commands"]] == ["head", "worker", "worker"]
    assert out[5]["rendering"]["node_count"] == 3


def test_one_malformed_recipe_is_named_and_the_others_written(
    make_repo: MakeRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"models/test/Small.yaml": SMALL})
    bad = Path(repo.label) / "models/test/Bad.yaml"
    bad.write_text("model:\n  base_args:\n    - '--a'\n  base_env: {A: 1\nvariants: {}\n")
    out = tmp_path / "o"
    status = main(["render", "--recipes", repo.label, "--api-out", str(out)])
    captured = capsys.readouterr()
    assert status == 1  # was 2, with nothing written
    assert (out / "test/Small.json").is_file() and not (out / "test/Bad.json").exists()
    err = captured.err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("recipe-sync: error: models/test/Bad.yaml does not load, not written: ")
    assert "models/test/Bad.yaml:4: key 'model.base_env': malformed YAML" in err
    assert "1 recipe did not load" in captured.out


def test_unknown_strategy_is_one_error_line(
    make_repo: MakeRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"models/test/Small.yaml": SMALL})
    path = Path(repo.label) / "models/test/Small.yaml"
    path.write_text(SMALL.lstrip().replace("multi_node_tp]", "multi_node_xp]"), encoding="utf-8")
    status = main(["render", "--recipes", repo.label, "--api-out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 1
    assert "models/test/Small.yaml:6: key 'compatible_strategies.1': unknown strategy" in err
    assert err.count("\n") == 1


def test_model_needs_hardware(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "--recipes", str(corpus), "--model", V4F]) == 2
    assert "--hardware" in capsys.readouterr().err


def test_module_entry_point_runs(corpus: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "render",
            "--recipes",
            str(corpus),
            "--model",
            "RedHatAI/Meta-Llama-3.1-8B-quantized.w8a8",
            "--hardware",
            "xeon6",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    found = json.loads(done.stdout)
    assert found["commands"][0]["argv"][3:] == ["--tensor-parallel-size", "2"]
    assert found["commands"][0]["args"][0]["path"] == "generated:parallelism"

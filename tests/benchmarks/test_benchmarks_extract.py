"""Launch lines extracted from the synthetic benchmark repository, end to end (config key →
point → script → job env → argv/env), and the ``recipe-sync extract`` command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.benchmarks import LaunchLine, Point, extract, load_bench_repo, points
from bot.commands.main import main
from bot.sources import DirectorySource

DATA = Path(__file__).resolve().parent.parent / "data" / "bench"
FIXED = "benchmarks/single_node/fixed_seq_len/"
AGENTIC = "benchmarks/single_node/agentic/"


@pytest.fixture(scope="module")
def repo():  # type: ignore[no-untyped-def]
    return load_bench_repo(DirectorySource(DATA))


def fixed(tp: int, conc: int, isl: int = 1024, osl: int = 1024, **kw: object) -> Point:
    args: dict[str, object] = dict(
        tp=tp, ep=1, dp_attn=False, conc=conc, spec_decoding="none", scenario="fixed-seq-len",
        isl=isl, osl=osl, kv_offloading=None, kv_offload_backend=None,
    )  # fmt: skip
    args.update(kw)
    return Point(**args)  # type: ignore[arg-type]


def agentic(tp: int, conc: int, kv: str = "none", backend: str | None = None) -> Point:
    return Point(tp=tp, ep=1, dp_attn=False, conc=conc, spec_decoding="mtp",
                 scenario="agentic-coding", isl=None, osl=None, kv_offloading=kv,
                 kv_offload_backend=backend)  # fmt: skip


def test_fixed_seq_len_with_runner_node(repo) -> None:  # type: ignore[no-untyped-def]
    line: LaunchLine = extract(repo, "acme7b-fp8-mi355x-vllm", fixed(4, 16), "throughput",
                               runner_node="mi355x-amds_03")  # fmt: skip
    assert line.status == "launched" and line.resolved
    assert line.script == FIXED + "acme7b_fp8_mi355x_vllm.sh"
    assert line.argv == (
        "vllm", "serve", "acme/Acme-7B", "--host", "0.0.0.0", "--port", "8891",
        "--tensor-parallel-size", "4", "--max-num-seqs", "32", "--max-model-len", "2304",
        "--max-num-batched-tokens", "4096", "--kv-cache-dtype", "fp8",
        "--compilation-config", '{"cudagraph_mode":"FULL_AND_PIECEWISE"}',
        "--no-enable-prefix-caching",
    )  # fmt: skip
    assert list(line.env.items()) == [
        ("GPU_METRICS_CSV", "gpu_metrics.csv"),
        ("VLLM_ROCM_USE_AITER", "1"),
        ("VLLM_ENGINE_READY_TIMEOUT_S", "1800"),
    ]
    assert line.job_env["PORT"] == "8891" and line.job_env["RUNNER_NAME"] == "mi355x-amds_03"
    assert (line.image, line.model, line.model_prefix, line.framework, line.fleet) == (
        "vllm/vllm-openai-rocm:v0.0.1-test", "acme/Acme-7B", "acme7b", "vllm", "mi355x-amds",
    )  # fmt: skip
    lines = {arg: span.line for arg, span in zip(line.argv, line.argv_sources, strict=True)}
    assert lines["--tensor-parallel-size"] == 34  # PARALLEL_ARGS="--tensor-parallel-size $TP"
    assert lines["--max-num-seqs"] == 55
    assert line.argv_sources[6] == line.argv_sources[0]  # the job's PORT: used on the launch line
    assert line.launch is not None and line.launch.line == 53


def test_unknown_runner_node_leaves_port_unresolved(repo) -> None:  # type: ignore[no-untyped-def]
    line = extract(repo, "acme7b-fp8-mi355x-vllm", fixed(4, 16), "throughput")
    assert line.argv[6] == "<PORT:opaque:runner-node>"
    (item,) = line.unresolved
    assert item.what == "$PORT" and "runner node" in item.why


def test_invalid_point_and_eval_context(repo) -> None:  # type: ignore[no-untyped-def]
    dep = fixed(8, 8, 8192, ep=8, dp_attn=True)
    line = extract(repo, "acme7b-fp8-mi355x-vllm", dep, "throughput", runner_node="mi355x-amds_01")
    assert line.status == "invalid" and line.argv == ()
    assert line.invalid == (
        "point not valid for this script: DP attention needs two sequences per rank "
        f"(CONC=8, TP=8) (exit 1) ({FIXED}acme7b_fp8_mi355x_vllm.sh:30)"
    )
    ev = extract(repo, "acme7b-fp8-mi355x-vllm", fixed(4, 48, 8192), "eval",
                 runner_node="mi355x-amds_01")  # fmt: skip
    assert ev.argv[ev.argv.index("--max-model-len") + 1] == "9472"
    assert ev.env["EVAL_MAX_MODEL_LEN"] == "9472"
    assert ev.job_env["EVAL_ONLY"] == "true"


def test_untagged_mtp_script_with_config_file(repo) -> None:  # type: ignore[no-untyped-def]
    line = extract(repo, "acme7b-fp8-mi355x-vllm-mtp", fixed(8, 16, 8192, spec_decoding="mtp"),
                   "throughput", runner_node="mi355x-amds_01")  # fmt: skip
    assert line.script == FIXED + "acme7b_fp8_mi355x_mtp.sh"
    assert line.argv == (
        "vllm", "serve", "acme/Acme-7B", "--config", "/tmp/acme-7b-server.yaml",
        "--tensor-parallel-size=8", "--gpu-memory-utilization", "0.90",
        "--speculative-config", '{"method":"mtp","num_speculative_tokens":3}',
    )  # fmt: skip
    assert line.files == {
        "/tmp/acme-7b-server.yaml": "max-num-seqs: 16\nserved-model-name: Acme-7B\n"
    }
    assert dict(line.env) == {
        "GPU_METRICS_CSV": "gpu_metrics.csv",
        "VLLM_USE_TRITON_FLASH_ATTN": "0",
    }


def test_sglang_key_has_no_vllm_launch(repo) -> None:  # type: ignore[no-untyped-def]
    line = extract(repo, "acme7b-fp8-mi355x-sglang", fixed(8, 4), "throughput")
    assert line.status == "no-launch" and line.argv == ()
    assert (
        line.reason == f"no vllm launch found: {FIXED}acme7b_fp8_mi355x_sglang.sh ends "
        "without starting a vLLM server"
    )


def test_mi300x_launcher_port(repo) -> None:  # type: ignore[no-untyped-def]
    # the current mi300x-amds launcher exports PORT=8888 (older ones derived it from the Slurm
    # job id; the opaque-port rule is covered by test_launcher_edits)
    line = extract(repo, "acme7b-fp8-mi300x-vllm", fixed(8, 4), "throughput",
                   runner_node="mi300x-amds_01")  # fmt: skip
    assert line.argv == (
        "vllm", "serve", "acme/Acme-7B", "--port", "8888",
        "--tensor-parallel-size", "8", "--cuda-graph-sizes", "1,2,4,8", "--max-num-seqs", "64",
    )  # fmt: skip
    assert line.unresolved == ()


def test_agentic_throughput_eval_and_dram(repo) -> None:  # type: ignore[no-untyped-def]
    key = "zeta-fp4-mi355x-vllm-agentic-mtp"
    common = (
        "vllm", "serve", "zeta-ai/Zeta-Flash", "--served-model-name", "zeta-ai/Zeta-Flash",
        "--port", "8892", "--tensor-parallel-size",
    )  # fmt: skip
    ev = extract(repo, key, agentic(4, 32), "eval", runner_node="mi355x-amds_04")
    assert ev.argv == (
        *common,
        "4", "--max-num-seqs", "64", "--speculative-config",
        '{"method":"mtp","num_speculative_tokens":3,"rejection_sample_method":"block"}',
        "--compilation-config", '{"cudagraph_capture_sizes":[1,2,4,8,16,32,64,128,256]}',
    )  # fmt: skip
    assert ev.env_unset == ("MAX_MODEL_LEN",)
    assert dict(ev.env) == {
        "GPU_METRICS_CSV": "gpu_metrics.csv",
        "MODEL_PATH": "zeta-ai/Zeta-Flash",
        "VLLM_ROCM_USE_AITER": "1",
        "VLLM_USE_BREAKABLE_CUDAGRAPH": "1",
    }
    assert ev.files["/workspace/results/vllm_command.txt"].startswith(
        "vllm serve zeta-ai/Zeta-Flash --served-model-name zeta-ai/Zeta-Flash --port 8892 "
    )
    tput = extract(repo, key, agentic(4, 1), "throughput", runner_node="mi355x-amds_04")
    assert tput.argv[tput.argv.index("--speculative-config") + 1] == (
        '{"method":"mtp","num_speculative_tokens":3,"rejection_sample_method":"synthetic",'
        '"synthetic_acceptance_length":2.8}'
    )
    assert tput.argv[-1] == '{"cudagraph_capture_sizes":[1,2,4,8]}'
    dram = extract(repo, key, agentic(2, 8, "dram", "lmcache"), "throughput",
                   runner_node="mi355x-amds_04")  # fmt: skip
    assert dram.argv[-2:] == (
        "--kv-transfer-config", '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}',
    )  # fmt: skip
    assert dram.env["LMCACHE_MAX_LOCAL_CPU_SIZE"] == "262"
    assert dram.resolved


def test_seed_shaped_eval_arm(repo) -> None:  # type: ignore[no-untyped-def]
    """The eval-only arm carries the launch line of the seed alignment PR."""
    key = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"
    (eval_point,) = [p for p, arm in points(repo, key) if arm == "eval"]
    assert (eval_point.tp, eval_point.conc) == (4, 32)
    line = extract(repo, key, eval_point, "eval", runner_node="mi355x-amds_03")
    assert line.resolved
    argv = line.argv

    def value(flag: str) -> str:
        assert argv.count(flag) == 1
        return argv[argv.index(flag) + 1]

    assert value("--tensor-parallel-size") == "4"
    assert value("--moe-backend") == "aiter"
    assert value("--max-num-seqs") == "128"
    assert json.loads(value("--speculative-config")) == {
        "method": "dspark",
        "num_speculative_tokens": 5,
        "draft_sample_method": "probabilistic",
        "rejection_sample_method": "block",
        "enable_adaptive_verification": False,
    }
    assert "--language-model-only" in argv
    seed_env = {
        "VLLM_ENGINE_READY_TIMEOUT_S": "3600", "VLLM_ROCM_USE_AITER": "1",
        "VLLM_ROCM_USE_AITER_MOE": "1", "AITER_TRITON_LOG_LEVEL": "ERROR",
        "VLLM_USE_BREAKABLE_CUDAGRAPH": "1", "VLLM_USE_RUST_FRONTEND": "1",
    }  # fmt: skip
    assert {k: line.env[k] for k in seed_env} == seed_env
    assert line.image == "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"


def test_staged_model_path_and_python_entrypoint(repo) -> None:  # type: ignore[no-untyped-def]
    b200 = extract(repo, "gptoss-fp4-b200-vllm", fixed(1, 4), "throughput")
    assert b200.argv == (
        "vllm", "serve", "/lustre/fsw/models/gpt-oss-120b", "--host", "0.0.0.0",
        "--port=8888", "--config", "config.yaml", "--gpu-memory-utilization=0.9",
        "--tensor-parallel-size=1", "--max-num-seqs=4", "--served-model-name",
        "/lustre/fsw/models/gpt-oss-120b", "--max-cudagraph-capture-size", "2048",
    )  # fmt: skip
    assert b200.files["config.yaml"].startswith("compilation-config:")
    b300 = extract(repo, "acme7b-bf16-b300-vllm", fixed(2, 4), "throughput")
    assert b300.script == FIXED + "acme7b_bf16_b300_vllm.sh"
    assert b300.argv == (
        "python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "acme/Acme-7B",
        "--tensor-parallel-size", "2", "--port", "8888", "--dtype", "bfloat16",
    )  # fmt: skip
    h200 = extract(repo, "acme7b-fp8-h200-vllm", fixed(8, 32, 8192), "throughput")
    assert h200.argv == (
        "vllm", "serve", "acme/Acme-7B", "--port", "8888", "--tensor-parallel-size", "8",
        "--max-num-batched-tokens", "8448", "--block-size", "64", "--max-model-len", "9472",
    )  # fmt: skip


def test_dangling_script_is_no_script(repo) -> None:  # type: ignore[no-untyped-def]
    line = extract(repo, "acme7b-fp8-h100-vllm", fixed(8, 4), "throughput")
    assert (line.status, line.script, line.argv) == ("no-script", None, ())
    assert line.reason == f"no script: {FIXED}acme7b_fp8_h100.sh does not exist"


def test_every_point_parses_each_file_once() -> None:
    repo = load_bench_repo(DirectorySource(DATA))
    count = 0
    for key in repo.keys:
        for point, arm in points(repo, key):
            extract(repo, key, point, arm)
            count += 1
    assert count == 45
    scripts = {p.as_posix() for p in (DATA / "benchmarks").rglob("*.sh")}
    assert repo.parser.misses == len(scripts) - 1  # every file but the B300 decoy
    assert repo.parser.hits > count


def test_blob_sha_is_the_git_blob(repo) -> None:  # type: ignore[no-untyped-def]
    line = extract(repo, "acme7b-fp8-h200-vllm", fixed(8, 16, 8192), "throughput")
    expected = subprocess.run(
        ["git", "hash-object", str(DATA / line.script)],  # type: ignore[operator]
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    assert line.script_blob_sha == expected


# --- the command ----------------------------------------------------------------------------------


def test_cli_config_key_json(capsys: pytest.CaptureFixture[str]) -> None:
    status = main([
        "extract", "--bench-repo", str(DATA), "--config-key", "acme7b-fp8-mi355x-vllm",
        "--point", "tp=4,ep=1,dp-attn=false,conc=16", "--arm", "throughput",
        "--runner-node", "mi355x-amds_03", "--json",
    ])  # fmt: skip
    assert status == 0
    lines = json.loads(capsys.readouterr().out)
    assert [(line["point"]["isl"], line["argv"][6]) for line in lines] == [
        (1024, "8891"),
        (8192, "8891"),
    ]
    assert lines[0]["argv_sources"][0] == {"file": FIXED + "acme7b_fp8_mi355x_vllm.sh", "line": 53}
    assert lines[0]["unresolved"] == []


def test_cli_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    status = main([
        "extract", "--bench-repo", str(DATA), "--config-key", "acme7b-fp8-mi355x-vllm",
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    assert "VLLM_ENGINE_READY_TIMEOUT_S=1800 \\\nvllm serve acme/Acme-7B \\\n    --host " in out
    assert "    --port '<PORT:opaque:runner-node>' \\\n" in out
    assert "unresolved: <job env of acme7b-fp8-mi355x-vllm>: $PORT" in out


def test_cli_point_filter_errors(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["extract", "--bench-repo", str(DATA), "--config-key", "acme7b-fp8-mi355x-vllm"]
    assert main([*argv, "--point", "tensor=4"]) == 2
    assert "--point: key 'tensor': expected key=value" in capsys.readouterr().err
    assert main([*argv, "--point", "tp=3"]) == 2
    assert "no point matches --point tp=3" in capsys.readouterr().err
    assert main(["extract", "--bench-repo", str(DATA), "--config-key", "nope"]) == 2
    assert "--config-key: unknown master-config key 'nope'" in capsys.readouterr().err
    assert (
        main(["extract", "--bench-repo", str(DATA), "--config-key", "acme7b-fp8-mi355x-vlm"]) == 2
    )
    assert "(did you mean 'acme7b-fp8-mi355x-vllm'" in capsys.readouterr().err


def test_cli_script_mode(capsys: pytest.CaptureFixture[str]) -> None:
    status = main([
        "extract", "--bench-repo", str(DATA), "--script", FIXED + "acme7b_fp8_mi355x_mtp.sh",
        "--env", "MODEL=acme/Acme-7B", "--env", "TP=2", "--env", "CONC=4", "--env", "EP_SIZE=2",
        "--json",
    ])  # fmt: skip
    assert status == 0
    result = json.loads(capsys.readouterr().out)
    assert result["argv"][:3] == ["vllm", "serve", "acme/Acme-7B"]
    assert result["env"]["VLLM_ALL2ALL_BACKEND"] == "allgather_reducescatter"
    assert list(result["env"])[-2:] == ["VLLM_USE_TRITON_FLASH_ATTN", "VLLM_ALL2ALL_BACKEND"]


def test_cli_batch_reports_errors_per_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "in.jsonl"
    good = {"script": FIXED + "acme7b_fp8_h200.sh",
            "env": {"MODEL": "m", "TP": "2", "CONC": "32", "ISL": "8192", "OSL": "1024",
                    "MAX_MODEL_LEN": "9472"}}  # fmt: skip
    batch.write_text(
        "\n".join([
            json.dumps(good),
            "{not json",
            json.dumps({"script": "benchmarks/missing.sh", "env": {}}),
            json.dumps({"script": FIXED + "acme7b_fp8_h200.sh", "env": {"TP": 2}}),
            "",
            json.dumps({**good, "env": {**good["env"], "TP": "4"}}),  # type: ignore[dict-item]
        ]) + "\n"
    )  # fmt: skip
    status = main(["extract", "--bench-repo", str(DATA), "--batch", str(batch)])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 1
    assert len(out) == 5
    assert out[0]["argv"][:7] == [
        "vllm",
        "serve",
        "m",
        "--port",
        "8888",
        "--tensor-parallel-size",
        "2",
    ]
    assert out[0]["unresolved"] == [] and "env" in out[0]
    assert out[1]["error"].startswith(f"{batch}:2: not JSON")
    assert "missing.sh: file does not exist" in out[2]["error"]
    assert "env must map names to strings" in out[3]["error"]
    assert out[4]["argv"][6] == "4"


def test_cli_reads_a_git_ref(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    work = tmp_path / "repo"
    shutil.copytree(DATA, work)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
    (work / "configs" / "amd-master.yaml").write_text("broken: [\n")
    status = main([
        "extract", "--bench-repo", str(work), "--ref", "HEAD",
        "--config-key", "acme7b-fp8-mi300x-vllm", "--json",
    ])  # fmt: skip
    assert status == 0
    assert json.loads(capsys.readouterr().out)[0]["argv"][2] == "acme/Acme-7B"

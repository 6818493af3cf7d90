"""The benchmark model: master configs, points, script choice, job environment, changelog."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.benchmarks import Point, configs, load_bench_repo, points
from bot.benchmarks.changelog import dangling_patterns, matches
from bot.benchmarks.jobenv import apply_launcher, template_env
from bot.benchmarks.runners import choose_script
from bot.errors import InputError
from bot.rules import default_rules
from bot.rules.models import Launcher, StagedModels
from bot.sources import DirectorySource, GitTreeSource
from bot.yamlio.positions import line_of, to_plain

DATA = Path(__file__).resolve().parent.parent / "data" / "bench"


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


def test_both_master_configs_are_loaded(repo) -> None:  # type: ignore[no-untyped-def]
    assert repo.keys == [
        "acme7b-fp8-mi355x-vllm", "acme7b-fp8-mi355x-vllm-mtp", "acme7b-fp8-mi355x-sglang",
        "acme7b-fp8-mi300x-vllm", "zeta-fp4-mi355x-vllm-agentic-mtp",
        "acme7b-fp8-mi355x-sglang-disagg", "dsv41flash-fp4-mi355x-vllm-agentic-mtp",
        "gptoss-fp4-b200-vllm", "acme7b-fp8-h200-vllm", "acme7b-fp8-h100-vllm",
        "acme7b-bf16-b300-vllm",
    ]  # fmt: skip
    assert repo.configs["gptoss-fp4-b200-vllm"].file == "configs/nvidia-master.yaml"


def test_geometric_concurrency_and_eval_selection(repo) -> None:  # type: ignore[no-untyped-def]
    pairs = points(repo, "acme7b-fp8-mi355x-vllm")
    throughput = [p for p, arm in pairs if arm == "throughput"]
    assert [p.conc for p in throughput if p.isl == 1024] == [4, 8, 16, 32, 64]
    assert [p.conc for p in throughput if p.isl == 8192 and p.tp == 4] == [4, 8, 16, 32, 48]
    assert [(p.tp, p.ep, p.dp_attn, p.conc) for p in throughput if p.tp == 8] == [
        (8, 8, True, 8), (8, 8, True, 16), (8, 8, True, 64),
    ]  # fmt: skip
    evals = [p for p, arm in pairs if arm == "eval"]
    # 8k1k, conc >= 16, the highest and the median distinct conc of each dp-attn group
    assert [(p.tp, p.conc, p.isl) for p in evals] == [(4, 32, 8192), (4, 48, 8192), (8, 64, 8192)]


def test_agentic_points_and_eval(repo) -> None:  # type: ignore[no-untyped-def]
    pairs = points(repo, "zeta-fp4-mi355x-vllm-agentic-mtp")
    assert [p for p, arm in pairs if arm == "throughput"] == [
        agentic(4, 1), agentic(4, 4), agentic(4, 16), agentic(4, 32),
        agentic(2, 8, "dram", "lmcache"),
    ]  # fmt: skip
    assert [p for p, arm in pairs if arm == "eval"] == [agentic(4, 32)]


def test_multinode_keys_have_no_single_node_points(repo) -> None:  # type: ignore[no-untyped-def]
    assert points(repo, "acme7b-fp8-mi355x-sglang-disagg") == ()


def _repo_with(tmp_path: Path, master: str) -> DirectorySource:
    (tmp_path / "configs").mkdir(parents=True, exist_ok=True)
    (tmp_path / "configs" / "amd-master.yaml").write_text(master)
    return DirectorySource(tmp_path)


GOOD = """k:
  image: i
  model: org/m
  model-prefix: m
  runner: mi355x
  precision: fp8
  framework: vllm
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 4, conc-start: 4, conc-end: 8 }
"""


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "{ tp: 4, conc-start: 4, conc-end: 8 }",
            "{ conc-start: 4, conc-end: 8 }",
            "amd-master.yaml:13: key 'k.scenarios.fixed-seq-len.0.search-space.0.tp': "
            "single-node search-space entries need tp",
        ),
        (
            "conc-start: 4, conc-end: 8",
            "conc-start: 8, conc-end: 4",
            "amd-master.yaml:13: key 'k.scenarios.fixed-seq-len.0.search-space.0.conc-end': "
            "conc-end is smaller than conc-start",
        ),
        ("  model: org/m\n", "", "amd-master.yaml:1: key 'k.model': required key is missing"),
        (
            "    - isl: 1024",
            "    - isl: many",
            "amd-master.yaml:10: key 'k.scenarios.fixed-seq-len.0.isl': "
            "Input should be a valid integer",
        ),
        (
            "  model-prefix: m\n",
            "  model-prefix: m_x\n",
            "amd-master.yaml:4: key 'k.model-prefix': String should match pattern",
        ),
    ],
    ids=["missing-tp", "conc-range", "missing-model", "bad-isl", "underscore-prefix"],
)
def test_invalid_entries_name_file_line_and_key(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in GOOD
    repo = load_bench_repo(_repo_with(tmp_path, GOOD.replace(old, new)))
    with pytest.raises(InputError) as caught:
        points(repo, "k")
    assert str(caught.value).startswith("configs/" + message)


def test_malformed_yaml_and_duplicate_keys(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"configs/amd-master.yaml:4: malformed YAML"):
        load_bench_repo(_repo_with(tmp_path, "k:\n  a: [1,\n  b: 2\n"))
    source = _repo_with(tmp_path, GOOD)
    (tmp_path / "configs" / "nvidia-master.yaml").write_text(GOOD)
    with pytest.raises(InputError, match=r"also defined in configs/amd-master\.yaml"):
        load_bench_repo(source)


def test_older_github_configs_layout(tmp_path: Path) -> None:
    (tmp_path / ".github" / "configs").mkdir(parents=True)
    old = GOOD.replace("  scenarios:\n    fixed-seq-len:\n", "  seq-len-configs:\n")
    old = old.replace("\n    ", "\n  ")
    (tmp_path / ".github" / "configs" / "amd-master.yaml").write_text(old)
    repo = load_bench_repo(DirectorySource(tmp_path))
    assert [p.conc for p, _ in points(repo, "k")] == [4, 8]


def test_script_choice(repo) -> None:  # type: ignore[no-untyped-def]
    rules = default_rules().hardware

    def choose(key: str, point: Point, node: str | None = None):  # type: ignore[no-untyped-def]
        entry = repo.entry(key)
        return choose_script(repo.source, rules, repo.runners, label=entry.runner,
                             prefix=entry.model_prefix, precision=entry.precision,
                             framework=entry.framework, point=point, runner_node=node)  # fmt: skip

    tagged = choose("acme7b-bf16-b300-vllm", fixed(2, 4))
    assert tagged.path == "benchmarks/single_node/fixed_seq_len/acme7b_bf16_b300_vllm.sh"
    assert tagged.fleet == "b300-nv"
    mtp = choose("acme7b-fp8-mi355x-vllm-mtp", fixed(8, 16, 8192, spec_decoding="mtp"))
    assert mtp.tried == (
        "benchmarks/single_node/fixed_seq_len/acme7b_fp8_mi355x_vllm_mtp.sh",
        "benchmarks/single_node/fixed_seq_len/acme7b_fp8_mi355x_mtp.sh",
    )
    assert mtp.path == mtp.tried[1]
    dangling = choose("acme7b-fp8-h100-vllm", fixed(8, 4))
    assert dangling.path is None
    assert dangling.problem == (
        "no script: benchmarks/single_node/fixed_seq_len/acme7b_fp8_h100.sh does not exist"
    )
    spanning = choose("acme7b-fp8-h200-vllm", fixed(8, 16, 8192))
    assert (spanning.fleet, spanning.ambiguity) == ("h200-cw", None)
    prefix_match = choose("gptoss-fp4-b200-vllm", fixed(1, 4))  # label absent from runners.yaml
    assert prefix_match.fleet == "b200-dgxc"
    assert choose("acme7b-fp8-mi355x-vllm", fixed(4, 4), "mi355x-amds_02").fleet == "mi355x-amds"


def test_fleets_picking_different_scripts_is_reported(tmp_path: Path) -> None:
    shutil.copytree(DATA, tmp_path / "repo")
    scripts = tmp_path / "repo" / "benchmarks" / "single_node" / "fixed_seq_len"
    (scripts / "acme7b_fp8_h200_vllm.sh").write_text("vllm serve tagged\n")
    repo = load_bench_repo(DirectorySource(tmp_path / "repo"))
    from bot.benchmarks import extract

    line = extract(repo, "acme7b-fp8-h200-vllm", fixed(8, 16, 8192), "throughput")
    assert line.script == "benchmarks/single_node/fixed_seq_len/acme7b_fp8_h200.sh"
    assert any("h200-dgxc-slurm → " in u.why for u in line.unresolved)
    chosen = extract(repo, "acme7b-fp8-h200-vllm", fixed(8, 16, 8192), "throughput",
                     runner_node="h200-dgxc-slurm_1")  # fmt: skip
    assert chosen.argv == ("vllm", "serve", "tagged") and chosen.unresolved == ()


def test_job_env_fixed_seq_len(repo) -> None:  # type: ignore[no-untyped-def]
    entry = repo.entry("acme7b-fp8-mi355x-vllm")
    row = next(r for r in repo.rows("acme7b-fp8-mi355x-vllm") if r.point == fixed(4, 16))
    env = template_env(entry, row, "throughput", runners=repo.runners, runner_node="mi355x-amds_03")
    assert {k: env[k] for k in ("EXP_NAME", "ISL", "OSL", "MAX_MODEL_LEN", "TP", "EP_SIZE",
                                "DP_ATTENTION", "EVAL_ONLY", "RUN_EVAL", "SCENARIO_SUBDIR",
                                "IS_AGENTIC", "KV_OFFLOADING", "GPU_COUNT", "RUNNER_NAME")} == {
        "EXP_NAME": "acme7b_1k1k", "ISL": "1024", "OSL": "1024", "MAX_MODEL_LEN": "2304",
        "TP": "4", "EP_SIZE": "1", "DP_ATTENTION": "false", "EVAL_ONLY": "false",
        "RUN_EVAL": "false", "SCENARIO_SUBDIR": "fixed_seq_len/", "IS_AGENTIC": "0",
        "KV_OFFLOADING": "", "GPU_COUNT": "4", "RUNNER_NAME": "mi355x-amds_03",
    }  # fmt: skip
    assert env["RESULT_FILENAME"] == (
        "acme7b_1k1k_fp8_vllm_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_"
        "mi355x-amds_03_recipe-<RECIPE_FINGERPRINT:opaque:recipe-fingerprint>"
    )
    launcher = default_rules().hardware.launchers["mi355x-amds"]
    edited = apply_launcher(env, launcher, fleet="mi355x-amds", runner_node="mi355x-amds_03")
    assert edited["PORT"] == "8891"
    assert apply_launcher(env, launcher, fleet="mi355x-amds", runner_node=None)["PORT"] == (
        "<PORT:opaque:runner-node>"
    )


def test_job_env_agentic_and_eval(repo) -> None:  # type: ignore[no-untyped-def]
    key = "zeta-fp4-mi355x-vllm-agentic-mtp"
    entry = repo.entry(key)
    dram = next(r for r in repo.rows(key) if r.point.kv_offloading == "dram")
    env = template_env(entry, dram, "throughput", runners=repo.runners, runner_node=None)
    assert (env["ISL"], env["OSL"], env["MAX_MODEL_LEN"]) == ("0", "0", "0")
    assert env["EXP_NAME"] == "zeta_tp2_conc8_kvdram-lmcache_spec-mtp"
    assert env["KV_OFFLOADING"] == "dram" and env["KV_OFFLOAD_BACKEND"] == "lmcache"
    assert env["KV_OFFLOAD_BACKEND_METADATA"] == '{"name":"lmcache","version":"0.3"}'
    # floor(min(2500000, 2861022) MiB * 2^20 * 0.8 * 2/8 / 1e9)
    assert env["TOTAL_CPU_DRAM_GB"] == "524"
    top = next(r for r in repo.rows(key) if r.eval)
    evaluation = template_env(entry, top, "eval", runners=repo.runners, runner_node=None)
    assert evaluation["EXP_NAME"] == "zeta_tp4_conc32_kvnone_spec-mtp"
    assert (evaluation["EVAL_ONLY"], evaluation["RUN_EVAL"]) == ("true", "true")
    assert evaluation["KV_OFFLOAD_BACKEND_METADATA"] == ""
    assert evaluation["TOTAL_CPU_DRAM_GB"] == "0"


def test_launcher_edits() -> None:
    staged = Launcher(gpu_token="b200", framework_tagged_first=True, port="8888",
                      model_paths={"gptoss/fp4": "/lustre/m/gpt-oss", "dsv4/fp4": "opaque"},
                      env={"MODEL": "${MODEL_PATH}", "X": "a-${TP}-b"})  # fmt: skip
    base = {"MODEL": "openai/gpt-oss-120b", "MODEL_PREFIX": "gptoss", "PRECISION": "fp4", "TP": "8"}
    edited = apply_launcher(base, staged, fleet="b200-dgxc", runner_node=None)
    assert edited == {**base, "PORT": "8888", "MODEL_PATH": "/lustre/m/gpt-oss",
                      "MODEL": "/lustre/m/gpt-oss", "X": "a-8-b"}  # fmt: skip
    probing = apply_launcher({**base, "MODEL_PREFIX": "dsv4"}, staged, fleet="b200-dgxc",
                             runner_node=None)  # fmt: skip
    assert probing["MODEL"] == "<MODEL_PATH:opaque:launcher-staged-model>"
    docker = Launcher(gpu_token="h100", framework_tagged_first=False, whitelist=["MODEL", "TP"])
    assert apply_launcher(base, docker, fleet="h100-cr", runner_node=None) == {
        "MODEL": "openai/gpt-oss-120b",
        "TP": "8",
    }
    opaque = Launcher(gpu_token="mi300x", framework_tagged_first=False, port="opaque")
    assert apply_launcher({}, opaque, fleet="mi300x-amds", runner_node="mi300x-amds_01") == {
        "PORT": "<PORT:opaque:slurm-job-id>"
    }


def test_launcher_without_a_staged_path_for_the_model_is_not_run_time_probing() -> None:
    # b200-dgxc-shaped: the launcher stages a fixed list and exits for anything else; a
    # prefix the rules do not list is a gap in the rules or a failing job, never a probe.
    staged = Launcher(
        gpu_token="b200",
        framework_tagged_first=True,
        model_paths={"acme/fp8": "/lustre/m/acme"},
        env={"MODEL": "${MODEL_PATH}"},
    )
    edited = apply_launcher({"MODEL": "zeta/Zeta-9B", "MODEL_PREFIX": "zeta", "PRECISION": "fp4"},
                            staged, fleet="b200-dgxc", runner_node=None)  # fmt: skip
    assert edited["MODEL"] == "<MODEL_PATH:opaque:launcher-unlisted-model>"


def test_launcher_staged_models_pick_the_directory_by_checkpoint_name() -> None:
    # b300-nv-shaped: MODEL stays the HF id, MODEL_PATH is the staged copy when the
    # checkpoint's basename is listed, else the writable download directory.
    rule = StagedModels(staged_dir="/scratch/models/", writable_dir="/data/models",
                        names=["Acme-7B", "Zeta-9B-NVFP4"])  # fmt: skip
    launcher = Launcher(gpu_token="b300", framework_tagged_first=True, port="8888",
                        staged_models=rule)  # fmt: skip
    staged = apply_launcher({"MODEL": "acme/Acme-7B"}, launcher, fleet="b300-nv", runner_node=None)
    assert staged == {"MODEL": "acme/Acme-7B", "PORT": "8888",
                      "MODEL_PATH": "/scratch/models/Acme-7B"}  # fmt: skip
    other = apply_launcher({"MODEL": "acme/Acme-7B-FP8"}, launcher, fleet="b300-nv",
                           runner_node=None)  # fmt: skip
    assert other["MODEL_PATH"] == "/data/models/Acme-7B-FP8"
    bare = apply_launcher({"MODEL": "Zeta-9B-NVFP4"}, launcher, fleet="b300-nv", runner_node=None)
    assert bare["MODEL_PATH"] == "/scratch/models/Zeta-9B-NVFP4"


def test_changelog_entries_per_key(repo) -> None:  # type: ignore[no-untyped-def]
    entries = repo.changelog_entries("acme7b-fp8-mi355x-vllm")
    assert [e.pr_link.rsplit("/", 1)[1] for e in entries] == [
        "101", "102",
    ]  # fmt: skip
    assert [e.index for e in repo.changelog_entries("acme7b-fp8-h100-vllm")] == [1]
    assert repo.changelog_entries("acme7b-fp8-mi355x-vllm-mtp") == ()
    zeta = repo.changelog_entries("zeta-fp4-mi355x-vllm-agentic-mtp")
    assert zeta[0].evals_only and zeta[0].scenario_types == ("agentic-coding",)
    assert zeta[0].line == 13
    dangling = dangling_patterns(repo.changelog(), repo.keys)
    assert [(entry.index, pattern) for entry, pattern in dangling] == [
        (3, "acme7b-fp8-mi355x-vllm.mtp"),
    ]


@pytest.mark.parametrize(
    ("pattern", "key", "hit"),
    [
        ("a-*-vllm", "a-x-y-vllm", True),
        ("a-*-vllm", "a-x-vllm-mtp", False),
        ("a?b", "axb", False),  # only * is a wildcard
        ("a?b", "a?b", True),
        ("[ab]", "a", False),
        ("*", "anything", True),
    ],
)
def test_changelog_glob_is_star_only_full_match(pattern: str, key: str, hit: bool) -> None:
    assert matches(pattern, key) is hit


def test_git_commit_source(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    shutil.copytree(DATA, work)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "bench")
    script = work / "benchmarks" / "single_node" / "fixed_seq_len" / "acme7b_fp8_h200.sh"
    script.write_text("vllm serve changed-in-the-working-tree\n")
    from bot.benchmarks import extract

    repo = load_bench_repo(GitTreeSource(work, "HEAD"))
    line = extract(repo, "acme7b-fp8-h200-vllm", fixed(8, 16, 8192), "throughput")
    assert line.argv[:3] == ("vllm", "serve", "acme/Acme-7B")
    blob = subprocess.run(["git", "rev-parse", "HEAD:" + line.script], cwd=work,  # type: ignore[operator]
                          check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    assert line.script_blob_sha == blob
    assert json.dumps(line.argv)  # plain strings


def test_a_label_spanning_fleets_whose_launchers_change_the_line_says_so(
    tmp_path: Path,
) -> None:
    # the same script on b200-cw gets the hub id, on b200-dgxc the staged directory
    shutil.copytree(DATA, tmp_path / "repo")
    configs = tmp_path / "repo" / "configs"
    master = configs / "nvidia-master.yaml"
    master.write_text(master.read_text().replace("runner: b200-dgxc\n", "runner: b200\n", 1))
    runners = configs / "runners.yaml"
    runners.write_text(
        runners.read_text().replace("labels:\n", "labels:\n  b200: [b200-cw_01, b200-dgxc_01]\n")
    )
    repo = load_bench_repo(DirectorySource(tmp_path / "repo"))
    from bot.benchmarks import extract

    line = extract(repo, "gptoss-fp4-b200-vllm", fixed(1, 4), "throughput")
    assert (line.fleet, line.argv[2]) == ("b200-cw", "openai/gpt-oss-120b")
    (note,) = line.notes
    assert note.startswith("runner label b200 also runs on b200-dgxc, whose launcher changes")
    assert (
        "(argv +`/lustre/fsw/models/gpt-oss-120b`, +`--served-model-name`, -`openai/gpt-oss-120b`)"
        in note
    )
    assert "this is the b200-cw line, pass --runner-node" in note
    chosen = extract(repo, "gptoss-fp4-b200-vllm", fixed(1, 4), "throughput",
                     runner_node="b200-dgxc_01")  # fmt: skip
    assert chosen.argv[2] == "/lustre/fsw/models/gpt-oss-120b" and chosen.notes == ()
    # fleets whose launchers differ in ways that do not reach this line: nothing to say
    same = extract(repo, "acme7b-fp8-h200-vllm", fixed(8, 16, 8192), "throughput")
    assert same.fleet == "h200-cw" and same.notes == ()


def test_line_change_names_what_another_fleet_runs_differently() -> None:
    from bot.benchmarks.repo import line_change
    from bot.shell import ScriptResult

    base = ScriptResult("x.sh", "launched", argv=("vllm", "serve", "a/B"), env={"X": "1"})
    same = ScriptResult("x.sh", "launched", argv=("vllm", "serve", "a/B"), env={"X": "1"})
    moved = ScriptResult("x.sh", "launched", argv=("vllm", "serve", "/m/B"), env={"X": "2"})
    exits = ScriptResult("x.sh", "no-launch", reason="the script exits 1")
    assert line_change(base, same) == ""
    assert line_change(base, moved) == "argv `a/B` → `/m/B`; env X"
    assert line_change(base, exits) == "it ends no-launch: the script exits 1"


AGENTIC = """k:
  image: vllm/vllm-openai:v0.25.0
  model: org/m
  model-prefix: m
  runner: mi355x
  precision: fp8
  framework: vllm
  scenarios:
    agentic-coding:
    - search-space:
      - { tp: 8, kv-offloading: dram, kv-offload-backend: BACKEND, conc-list: [32, 40] }
"""


@pytest.mark.parametrize(
    "backend", ["lmcache", "{ name: lmcache }", '{ name: lmcache, version: "0.4.5" }']
)
def test_every_kv_offload_backend_shape_main_had_is_accepted(tmp_path: Path, backend: str) -> None:
    """Until InferenceX #2096 (2026-07-13) ``kv-offload-backend`` was a bare name; since, a
    mapping with ``name`` and an optional ``version``. Both shapes give the same points."""
    repo = load_bench_repo(_repo_with(tmp_path, AGENTIC.replace("BACKEND", backend)))
    found = points(repo, "k")
    assert {p.kv_offload_backend for p, _ in found} == {"lmcache"}
    assert [p.conc for p, arm in found if arm == "throughput"] == [32, 40]


def test_master_configs_parsed_by_key_match_the_whole_file(tmp_path: Path) -> None:
    """Each top-level key is parsed (and cached) on its own; values and lines are the
    whole-file parse's, and a key given twice is still the whole parse's error."""
    text = "# header\n\n" + GOOD + "# a comment\n" + GOOD.replace("k:", "k2:", 1)
    nodes = load_bench_repo(_repo_with(tmp_path, text)).configs
    whole = configs._parse_yaml(text, "x")
    assert list(nodes) == ["k", "k2"]
    for name, node in nodes.items():
        assert to_plain(node.document[name]) == to_plain(whole[name])
        assert node.line == line_of(whole, [name])
        path: list[str | int] = [name, "scenarios", "fixed-seq-len", 0, "search-space", 0]
        assert node.line_at(path) == line_of(whole, path)
    twice = tmp_path / "twice"
    with pytest.raises(InputError, match=r"duplicate key"):
        load_bench_repo(_repo_with(twice, GOOD + GOOD))

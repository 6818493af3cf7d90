"""Path-sensitive evaluation: run-time probes that decide nothing the launch sees are joined;
probes that select between launch lines give alternatives, one unknown per differing flag."""

from __future__ import annotations

from bot.shell.result import ScriptResult
from tests.shell.conftest import SCRIPT, Runner

ENV = {"MODEL": "acme/Foo-7B", "TP": "8", "PORT": "8888", "RESULT_DIR": "/tmp/r"}


def notes(result: ScriptResult) -> str:
    return " | ".join(f"{a.what}: {a.why}" for a in result.assumptions)


def test_a_probe_loop_that_only_selects_a_config_file_is_resolved(run_script: Runner) -> None:
    # a Mooncake-style rail probe: the first active device goes into a config file the
    # server reads at run time; no device at all exits. The serve flags never change.
    result = run_script(
        """RAIL=""
for d in mlx5_0 mlx5_1 mlx5_2 mlx5_3; do
    if grep -q ACTIVE "/sys/class/infiniband/$d/ports/1/state" 2>/dev/null; then
        RAIL="$d"
        break
    fi
done
if [ -z "$RAIL" ]; then
    echo "no active RDMA rail" >&2
    exit 1
fi
CONFIG="$RESULT_DIR/mooncake.json"
cat > "$CONFIG" <<EOF
{"device_name": "$RAIL"}
EOF
export MOONCAKE_CONFIG_PATH="$CONFIG"
vllm serve "$MODEL" --tensor-parallel-size "$TP" \\
    --kv-transfer-config '{"kv_connector":"MooncakeStoreConnector"}'
""",
        ENV,
    )
    assert result.status == "launched" and result.unresolved == ()
    assert result.argv[:5] == ("vllm", "serve", "acme/Foo-7B", "--tensor-parallel-size", "8")
    assert result.env == {"MOONCAKE_CONFIG_PATH": "/tmp/r/mooncake.json"}
    assert result.alternatives == ()
    said = notes(result)
    # the probe is named with what it decides; the exit is a path, not a launch line
    assert (
        f'`grep -q ACTIVE "/sys/class/infiniband/$d/ports/1/state" 2>/dev/null` ({SCRIPT}:3)'
        in said
    )
    assert "assumed irrelevant: decides only $RAIL, when the loop ends" in said
    assert f"exit at {SCRIPT}:10" in said


def test_a_probe_that_selects_between_two_flag_values_gives_two_alternatives(
    run_script: Runner,
) -> None:
    result = run_script(
        """BLOCK=64
if [[ -e /dev/shm/big-pages ]]; then
    BLOCK=128
fi
if [ -n "${SLURM_JOB_ID:-}" ]; then echo "job $SLURM_JOB_ID"; fi
vllm serve "$MODEL" --block-size "$BLOCK" --tensor-parallel-size "$TP"
""",
        ENV,
    )
    assert result.status == "launched"
    assert [a.argv[4] for a in result.alternatives] == ["128", "64"]
    cond = f"the condition `[[ -e /dev/shm/big-pages ]]` ({SCRIPT}:2)"
    assert [a.conditions for a in result.alternatives] == [
        (f"{cond} holds",),
        (f"{cond} does not hold",),
    ]
    # the common line: only the flag that differs is unknown
    assert result.argv == (
        "vllm", "serve", "acme/Foo-7B", "--block-size", "<--block-size:opaque:undecidable-branch>",
        "--tensor-parallel-size", "8",
    )  # fmt: skip
    (item,) = result.unresolved
    assert item.what == "--block-size"
    assert item.why.startswith(f"differs between the alternative launch lines: '128' when {cond}")
    assert result.reach[item] == ("argv:4",)
    assert result.paths == 2


def test_an_early_return_on_a_probe_joins_at_the_end_of_the_function(run_script: Runner) -> None:
    # a checkpoint guard: `[[ -d … ]] || return 1`, then a download when incomplete
    result = run_script(
        """is_complete() {
    [[ -d "$1" && -f "$1/config.json" ]] || return 1
    python3 -c 'import sys'
}
if ! is_complete "/data/$MODEL"; then
    LOCK="/data/$MODEL.lock"
    hf download "$MODEL" --local-dir "/data/$MODEL"
    is_complete "/data/$MODEL" || { echo "still incomplete" >&2; exit 1; }
fi
vllm serve "/data/$MODEL" --tensor-parallel-size "$TP"
""",
        ENV,
    )
    assert result.status == "launched" and result.unresolved == ()
    assert result.argv == ("vllm", "serve", "/data/acme/Foo-7B", "--tensor-parallel-size", "8")
    said = notes(result)
    assert "decides only whether the function returns early" in said
    assert "decides only $LOCK" in said


def test_an_option_present_on_one_side_only_is_the_unknown(run_script: Runner) -> None:
    result = run_script(
        """ARGS=()
if nvidia-smi -q | grep -q "MIG Mode.*Enabled"; then ARGS+=(--enforce-eager); fi
vllm serve "$MODEL" --tensor-parallel-size "$TP" "${ARGS[@]}"
""",
        ENV,
    )
    assert [a.argv for a in result.alternatives] == [
        ("vllm", "serve", "acme/Foo-7B", "--tensor-parallel-size", "8", "--enforce-eager"),
        ("vllm", "serve", "acme/Foo-7B", "--tensor-parallel-size", "8"),
    ]
    (item,) = result.unresolved
    assert item.what == "--enforce-eager"
    assert "'--enforce-eager' when" in item.why and "| absent when" in item.why
    assert result.argv[-1] == "<--enforce-eager:opaque:undecidable-branch>"


def test_paths_that_all_exit_keep_the_merged_answer(run_script: Runner) -> None:
    result = run_script(
        """if [ -e /dev/shm/x ]; then echo a; exit 1; else echo b; exit 2; fi
vllm serve "$MODEL"
""",
        ENV,
    )
    assert result.status == "invalid"


def test_too_many_paths_fall_back_to_the_merged_evaluation(run_script: Runner) -> None:
    # eight independent probes that each reach the launch: 256 combinations
    body = "".join(f"V{i}=0\nif [ -e /dev/shm/p{i} ]; then V{i}=1; fi\n" for i in range(8))
    flags = " ".join(f"--v{i} $V{i}" for i in range(8))
    result = run_script(body + f'vllm serve "$MODEL" {flags}\n', ENV)
    assert result.status == "launched"
    assert result.alternatives == ()
    assert "not evaluated one by one (more than" in notes(result)
    assert {u.what for u in result.unresolved} == {f"$V{i}" for i in range(8)}


def test_a_probe_that_selects_a_config_file_the_server_reads_is_an_unknown(
    run_script: Runner,
) -> None:
    # the same argv, but the --config file it names differs: not the same launch line
    result = run_script(
        """if [ -e /dev/shm/big ]; then SEQS=512; else SEQS=256; fi
cat > config.yaml <<EOF
max-num-seqs: $SEQS
EOF
vllm serve "$MODEL" --config config.yaml
""",
        ENV,
    )
    assert result.argv == ("vllm", "serve", "acme/Foo-7B", "--config", "config.yaml")
    assert len(result.alternatives) == 2
    (item,) = result.unresolved
    assert item.what.startswith("contents of ") and item.what.endswith("config.yaml")
    assert result.reach[item] == ("argv:4",)


def test_a_return_in_a_sourced_file_does_not_land_at_the_callers_end(run_script: Runner) -> None:
    # the early `return` leaves the sourced file, and the caller goes on to the launch:
    # its state must not be dropped until the end of the calling function
    result = run_script(
        """setup() {
    source "$(dirname "$0")/opts.sh"
    vllm serve "$MODEL" --max-num-seqs "$SEQS"
}
setup
""",
        ENV,
        files={
            "benchmarks/single_node/fixed_seq_len/opts.sh": (
                "SEQS=256\nif [ -e /dev/shm/small ]; then return 0; fi\nSEQS=512\n"
            )
        },
    )
    assert result.status == "launched"
    assert [a.argv[-1] for a in result.alternatives] == ["256", "512"]
    assert [u.what for u in result.unresolved] == ["--max-num-seqs"]

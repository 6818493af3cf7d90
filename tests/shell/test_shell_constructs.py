"""Every evaluator feature of benchmark-extraction.md §2.3, with the exact argv bash would run.

Each case is a small synthetic script in the style of the InferenceX recipes; the expected argv
is what ``vllm`` receives (argv[0] = the program). Nothing is executed: the evaluator only reads.
"""

from __future__ import annotations

import pytest

from tests.shell.conftest import Runner

ENV = {
    "MODEL": "acme/Foo-7B",
    "TP": "4",
    "EP_SIZE": "1",
    "CONC": "16",
    "ISL": "8192",
    "OSL": "1024",
    "MAX_MODEL_LEN": "9472",
    "DP_ATTENTION": "false",
    "EVAL_ONLY": "false",
    "PORT": "8888",
}

CASES: list[tuple[str, str, dict[str, str], list[str]]] = [
    # 1. lexer: comments, continuations, quotes, escapes, heredocs, $'…'
    (
        "continuation-and-comments",
        """# a comment
vllm serve "$MODEL" \\
    --port $PORT \\
    --trust-remote-code  # trailing comment
""",
        {},
        ["vllm", "serve", "acme/Foo-7B", "--port", "8888", "--trust-remote-code"],
    ),
    (
        "quotes-and-escapes",
        r"""X="a \"quoted\" \$HOME \\ back"
Y='single $MODEL "kept"'
vllm serve m --a "$X" --b "$Y" --c it\'s --d "${MODEL}x" --e "" --f $'tab\there'
""",
        {},
        [
            "vllm",
            "serve",
            "m",
            "--a",
            'a "quoted" $HOME \\ back',
            "--b",
            'single $MODEL "kept"',
            "--c",
            "it's",
            "--d",
            "acme/Foo-7Bx",
            "--e",
            "",
            "--f",
            "tab\there",
        ],
    ),
    (
        "json-with-escaped-quotes-and-interpolation",
        """SPEC="{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":$TP}"
vllm serve m --speculative-config "$SPEC" --compilation-config '{"level": 3}'
""",
        {},
        [
            "vllm",
            "serve",
            "m",
            "--speculative-config",
            '{"method":"mtp","num_speculative_tokens":4}',
            "--compilation-config",
            '{"level": 3}',
        ],
    ),
    (
        "heredoc-expanding-into-variable",
        """SPEC=$(cat <<EOF
{"method": "mtp", "tp": $TP}
EOF
)
vllm serve m --speculative-config "$SPEC"
""",
        {},
        ["vllm", "serve", "m", "--speculative-config", '{"method": "mtp", "tp": 4}'],
    ),
    (
        "heredoc-literal",
        """SPEC=$(cat <<'EOF'
{"tp": $TP}
EOF
)
vllm serve m --x "$SPEC"
""",
        {},
        ["vllm", "serve", "m", "--x", '{"tp": $TP}'],
    ),
    (
        "heredoc-tab-stripped",
        'CFG=$(cat <<-EOF\n\t\tline one $TP\n\tline two\n\tEOF\n)\nvllm serve m --x "$CFG"\n',
        {},
        ["vllm", "serve", "m", "--x", "line one 4\nline two"],
    ),
    # 2. scalars and expansions
    (
        "defaults-and-alternatives",
        """A=${UNSET_VAR:-fallback}
B=${TP:-9}
C=${UNSET_VAR:+--never}
D=${TP:+--tp=$TP}
E=${EMPTY_VAR-set-but-empty-kept}
EMPTY_VAR=
F=${EMPTY_VAR-dash}
G=${EMPTY_VAR:-colon-dash}
vllm serve m $A $B $C $D $E x${F}x $G
""",
        {},
        ["vllm", "serve", "m", "fallback", "4", "--tp=4", "set-but-empty-kept", "xx", "colon-dash"],
    ),
    (
        "trims-with-glob-patterns",
        """P=/models/acme/Foo-7B-FP8.tar.gz
vllm serve m ${P#*/} ${P##*/} ${P%.*} ${P%%.*} ${MODEL#*/} ${MODEL%/*} ${P##*[0-9]B-}
""",
        {},
        [
            "vllm",
            "serve",
            "m",
            "models/acme/Foo-7B-FP8.tar.gz",
            "Foo-7B-FP8.tar.gz",
            "/models/acme/Foo-7B-FP8.tar",
            "/models/acme/Foo-7B-FP8",
            "Foo-7B",
            "acme",
            "FP8.tar.gz",
        ],
    ),
    (
        "replace-length-case",
        """N=${MODEL//\\//--}
S=${MODEL/o/0}
L=${#MODEL}
vllm serve m $N $S $L ${MODEL^^} ${MODEL,,} ${MODEL:5:3} ${MODEL: -2}
""",
        {},
        [
            "vllm",
            "serve",
            "m",
            "acme--Foo-7B",
            "acme/F0o-7B",
            "11",
            "ACME/FOO-7B",
            "acme/foo-7b",
            "Foo",
            "7B",
        ],
    ),
    (
        "export-local-unset",
        """export A=1
B=2
export B
C=3
unset C
f() { local C=inner; echo "$C"; }
D=$(f)
vllm serve m "${A}${B}${C:-gone}" "$D"
""",
        {},
        ["vllm", "serve", "m", "12gone", "inner"],
    ),
    # 3. word splitting
    (
        "unquoted-multi-word-string",
        """EXTRA="--enforce-eager   --max-num-seqs 8"
NONE=""
vllm serve m $EXTRA $NONE "$NONE" --x
""",
        {},
        ["vllm", "serve", "m", "--enforce-eager", "--max-num-seqs", "8", "", "--x"],
    ),
    (
        "empty-quoted-array-is-zero-words",
        """EMPTY=()
vllm serve m "${EMPTY[@]}" --x "${EMPTY[@]}"
""",
        {},
        ["vllm", "serve", "m", "--x"],
    ),
    (
        "custom-ifs-splitting",
        """LIST="1,2,,4"
IFS=,
set -- $LIST
IFS=$' \\t\\n'
vllm serve m "$#" "$1" "$3" "$4"
""",
        {},
        ["vllm", "serve", "m", "4", "1", "", "4"],
    ),
    # 4. arrays
    (
        "array-literal-append-splice-join",
        """ARGS=(--tensor-parallel-size "$TP")
ARGS+=(--max-model-len "$MAX_MODEL_LEN" "two words")
SIZES=(1 2 4)
JOINED="${SIZES[*]}"
CSV=$(IFS=,; echo "${SIZES[*]}")
vllm serve m "${ARGS[@]}" "$JOINED" "$CSV" ${!SIZES[@]} "${#ARGS[@]}" "${ARGS[1]}" "${ARGS[-1]}"
""",
        {},
        [
            "vllm",
            "serve",
            "m",
            "--tensor-parallel-size",
            "4",
            "--max-model-len",
            "9472",
            "two words",
            "1 2 4",
            "1,2,4",
            "0",
            "1",
            "2",
            "5",
            "4",
            "two words",
        ],
    ),
    (
        "array-as-command-prefix",
        """PFX=(env VLLM_A=1)
CMD=(vllm serve "$MODEL" --port "$PORT")
"${PFX[@]}" "${CMD[@]}" > server.log 2>&1 &
""",
        {},
        ["vllm", "serve", "acme/Foo-7B", "--port", "8888"],
    ),
    (
        "empty-prefix-array",
        """PFX=()
"${PFX[@]}" vllm serve m
""",
        {},
        ["vllm", "serve", "m"],
    ),
    # 5. arithmetic
    (
        "arithmetic-operators",
        """A=$(( CONC * 2 ))
B=$(( (CONC + 1) / 2 ))
C=$(( 7 % 3 ))
D=$(( CONC > 8 ? 64 : 32 ))
E=$(( -7 / 2 ))
(( F = TP << 1 ))
G=$(( CONC >= 16 && TP == 4 ))
vllm serve m $A $B $C $D $E $F $G $(( 2 ** 10 ))
""",
        {},
        ["vllm", "serve", "m", "32", "8", "1", "64", "-3", "8", "1", "1024"],
    ),
    (
        "max-num-seqs-from-conc",
        """MAX_NUM_SEQS=${CONC}
DOUBLE=$((CONC*2))
vllm serve m --max-num-seqs "$MAX_NUM_SEQS" --max-num-batched-tokens $(( DOUBLE * 256 ))
""",
        {},
        ["vllm", "serve", "m", "--max-num-seqs", "16", "--max-num-batched-tokens", "8192"],
    ),
    # 6. conditionals
    (
        "if-elif-else-and-tests",
        """if [ "$EP_SIZE" -gt 1 ]; then A=ep
elif [[ "$MODEL" == acme/* && $TP -ge 4 ]]; then A=glob
else A=else
fi
[[ $MODEL != /* ]] && B=relative || B=absolute
[ -z "$UNSET_VAR" ] && C=empty
[ -n "$TP" -a "$TP" = 4 ] && D=both
[[ ! -n "$UNSET_VAR" || $TP -lt 2 ]] && E=or
vllm serve m $A $B $C $D $E
""",
        {},
        ["vllm", "serve", "m", "glob", "relative", "empty", "both", "or"],
    ),
    (
        "dp-attention-parallel-and-port-swap",
        """if [ "$DP_ATTENTION" = "true" ]; then
    PARALLEL_ARGS="--data-parallel-size $TP --enable-expert-parallel"
    PORT_ARGS="--port $(( PORT + 10 ))"
else
    PARALLEL_ARGS="--tensor-parallel-size $TP"
    PORT_ARGS="--port $PORT"
fi
vllm serve m $PORT_ARGS $PARALLEL_ARGS
""",
        {"DP_ATTENTION": "true"},
        [
            "vllm",
            "serve",
            "m",
            "--port",
            "8898",
            "--data-parallel-size",
            "4",
            "--enable-expert-parallel",
        ],
    ),
    (
        "case-arms",
        """pick() {
    case "$1" in
        "") echo none ;;
        lmcache|mooncake) echo "kv:$1" ;;
        vllm-*) echo "native" ;;
        *) echo other ;;
    esac
}
vllm serve m "$(pick "")" "$(pick mooncake)" "$(pick vllm-simple)" "$(pick x)"
""",
        {},
        ["vllm", "serve", "m", "none", "kv:mooncake", "native", "other"],
    ),
    (
        "kv-offload-case-branches",
        """OFFLOAD_ARGS=()
case "$KV_OFFLOAD_BACKEND" in
    "") ;;
    lmcache)
        OFFLOAD_ARGS=(--kv-transfer-config '{"kv_connector":"LMCacheConnectorV1"}')
        ;;
    vllm-simple)
        BYTES=$(( TOTAL_CPU_DRAM_GB * 1000 * 1000 * 1000 / TP ))
        OFFLOAD_ARGS=(--kv-offloading-backend native --kv-offloading-size "$BYTES")
        ;;
    *) echo "unknown backend" >&2; exit 1 ;;
esac
vllm serve m "${OFFLOAD_ARGS[@]}"
""",
        {"KV_OFFLOAD_BACKEND": "vllm-simple", "TOTAL_CPU_DRAM_GB": "200"},
        [
            "vllm",
            "serve",
            "m",
            "--kv-offloading-backend",
            "native",
            "--kv-offloading-size",
            "50000000000",
        ],
    ),
    (
        "eval-only-drops-synthetic-acceptance",
        """if [ "$EVAL_ONLY" = "true" ]; then
    REJECT='"rejection_sample_method":"block"'
else
    REJECT='"rejection_sample_method":"synthetic","synthetic_acceptance_length":3.8'
fi
SPEC="{\\"method\\":\\"mtp\\",$REJECT}"
vllm serve m --speculative-config "$SPEC"
""",
        {"EVAL_ONLY": "true"},
        [
            "vllm",
            "serve",
            "m",
            "--speculative-config",
            '{"method":"mtp","rejection_sample_method":"block"}',
        ],
    ),
    # 7. loops
    (
        "cudagraph-capture-list-c-style",
        """SIZES=()
for ((i=1; i<=CONC; i*=2)); do SIZES+=($i); done
CAPTURE=$(IFS=,; echo "${SIZES[*]}")
vllm serve m --compilation-config "{\\"cudagraph_capture_sizes\\":[$CAPTURE]}"
""",
        {},
        ["vllm", "serve", "m", "--compilation-config", '{"cudagraph_capture_sizes":[1,2,4,8,16]}'],
    ),
    (
        "for-in-and-while-loops",
        """URLS=""
for p in 8000 8001 "80 02"; do URLS+="http://h:$p,"; done
URLS=${URLS%,}
n=1
while (( n < CONC )); do n=$(( n * 3 )); done
k=0
until [ $k -ge 3 ]; do k=$((k+1)); [ $k -eq 2 ] && continue; LAST=$k; done
for x in a b c; do if [ $x = b ]; then break; fi; SEEN=$x; done
vllm serve m "$URLS" $n $LAST $SEEN
""",
        {},
        ["vllm", "serve", "m", "http://h:8000,http://h:8001,http://h:80 02", "27", "3", "a"],
    ),
    # 8. command substitution whitelist
    (
        "whitelisted-substitutions",
        """DIR=$(dirname "$0")
BASE=$(basename "$0" .sh)
NUM=$(printf '%d' "$TP")
GMU=$(printf '%.2f' 0.9)
PAD=$(printf '%05d|%s|%x' 42 "$MODEL" 255)
QUOTED=$(printf '%q' '{"a": 1}')
CSV=$(seq -s, 1 "$TP")
ECHOED=$(echo -n "$MODEL")
vllm serve m "$DIR" "$BASE" $NUM $GMU "$PAD" "$QUOTED" $CSV "$ECHOED"
""",
        {},
        [
            "vllm",
            "serve",
            "m",
            "benchmarks/single_node/fixed_seq_len",
            "case",
            "4",
            "0.90",
            "00042|acme/Foo-7B|ff",
            '\\{\\"a\\":\\ 1\\}',
            "1,2,3,4",
            "acme/Foo-7B",
        ],
    ),
    (
        "brace-expansion",
        """for i in {1..3}; do L+=($i); done
vllm serve m a{b,c}d "{q,r}" ${TP}{x,y} {05..7} {1,{2,3}} x{} "${L[@]}"
""",
        {},
        [
            "vllm",
            "serve",
            "m",
            "abd",
            "acd",
            "{q,r}",
            "4x",
            "4y",
            "05",
            "06",
            "07",
            "1",
            "2",
            "3",
            "x{}",
            "1",
            "2",
            "3",
        ],
    ),
    (
        "read-assoc-rematch-printf-v-transforms",
        r"""LIST="a,b c,d"
IFS=, read -ra PARTS <<< "$LIST"
declare -A MAP=([gpu]=mi355x [tp]=8)
N=$((10#$X + 1))
printf -v PADDED '%03d' 7
[[ "v0.11.2" =~ ^v([0-9]+)\.([0-9]+) ]] && MAJ=${BASH_REMATCH[1]} MIN=${BASH_REMATCH[2]}
vllm serve m "${PARTS[@]}" ${#PARTS[@]} "${MAP[tp]}" $N $PADDED "$MAJ.$MIN" "${LIST@Q}" ${LIST^^}
""",
        {"X": "08"},
        [
            "vllm",
            "serve",
            "m",
            "a",
            "b c",
            "d",
            "3",
            "8",
            "9",
            "007",
            "0.11",
            "'a,b c,d'",
            "A,B",
            "C,D",
        ],
    ),
    # 10. script-defined functions
    (
        "functions-inlined-with-positional-args",
        """add_flag() {
    local name="$1"; shift
    FLAGS+=("--$name" "$@")
}
FLAGS=()
add_flag tensor-parallel-size "$TP"
add_flag enable-expert-parallel
serve() { vllm serve "$MODEL" "${FLAGS[@]}" "$@"; }
serve --port "$PORT"
""",
        {},
        [
            "vllm",
            "serve",
            "acme/Foo-7B",
            "--tensor-parallel-size",
            "4",
            "--enable-expert-parallel",
            "--port",
            "8888",
        ],
    ),
    # launch forms
    (
        "inline-env-prefix",
        """VLLM_USE_V1=1 HIP_VISIBLE_DEVICES=0,1 vllm serve m --tp 2
""",
        {},
        ["vllm", "serve", "m", "--tp", "2"],
    ),
    (
        "python-module-launch",
        """nohup python3 -m vllm.entrypoints.openai.api_server --model "$MODEL" --port $PORT &
""",
        {},
        [
            "python3",
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            "acme/Foo-7B",
            "--port",
            "8888",
        ],
    ),
    (
        "printf-q-command-file-then-array-launch",
        """set -x
trap 'echo done' EXIT
CMD=(vllm serve "$MODEL" --speculative-config '{"a": 1}')
printf '%q ' "${CMD[@]}" | tee "$RESULT_DIR/vllm_command.txt"
set +x
"${CMD[@]}" > "$RESULT_DIR/server.log" 2>&1 &
""",
        {"RESULT_DIR": "/workspace/results"},
        ["vllm", "serve", "acme/Foo-7B", "--speculative-config", '{"a": 1}'],
    ),
    (
        "eval-and-bash-c",
        """eval "A=from-eval; B=\\"$TP\\""
vllm serve m $A $B
""",
        {},
        ["vllm", "serve", "m", "from-eval", "4"],
    ),
    (
        "membership-via-grep",
        """MODELS=(acme/Foo-7B acme/Bar-3B)
if printf '%s\\n' "${MODELS[@]}" | grep -qxF "$MODEL"; then export KNOWN=1; EXTRA=--known; fi
vllm serve m $EXTRA
""",
        {},
        ["vllm", "serve", "m", "--known"],
    ),
]


@pytest.mark.parametrize(("name", "script", "env", "argv"), CASES, ids=[c[0] for c in CASES])
def test_construct_argv(
    run_script: Runner, name: str, script: str, env: dict[str, str], argv: list[str]
) -> None:
    result = run_script(script, {**ENV, **env})
    assert result.status == "launched", result.reason
    assert list(result.argv) == argv
    assert result.unresolved == ()
    assert len(result.argv_sources) == len(result.argv)


def test_inline_prefixes_and_env_wrapper_are_launch_env(run_script: Runner) -> None:
    result = run_script(
        """export VLLM_ENGINE_READY_TIMEOUT_S=3600
export TP=8
PFX=(env VLLM_ALL2ALL=allgather)
VLLM_USE_V1=1 "${PFX[@]}" vllm serve m
""",
        ENV,
    )
    assert dict(result.env) == {
        "VLLM_ENGINE_READY_TIMEOUT_S": "3600",
        "TP": "8",
        "VLLM_USE_V1": "1",
        "VLLM_ALL2ALL": "allgather",
    }
    assert list(result.env) == ["TP", "VLLM_ENGINE_READY_TIMEOUT_S", "VLLM_USE_V1", "VLLM_ALL2ALL"]


def test_path_and_home_are_not_launch_env(run_script: Runner) -> None:
    result = run_script(
        'set -u\nexport PATH="$HOME/.local/bin:$PATH"\nexport X=1\nvllm serve m\n', ENV
    )
    assert result.status == "launched"
    assert dict(result.env) == {"X": "1"}
    assert result.unresolved == ()


def test_exports_in_branches_and_unset_input(run_script: Runner) -> None:
    result = run_script(
        """if [ "$DP_ATTENTION" = true ]; then export VLLM_DP=1; else export VLLM_TP_ONLY=1; fi
unset MAX_MODEL_LEN
NOT_EXPORTED=1
vllm serve m
""",
        ENV,
    )
    assert dict(result.env) == {"VLLM_TP_ONLY": "1"}
    assert result.env_unset == ("MAX_MODEL_LEN",)


def test_argv_sources_point_at_the_written_line(run_script: Runner) -> None:
    result = run_script(
        """PARALLEL="--tensor-parallel-size $TP"
SEQS=$(( CONC * 2 ))
CMD=(
    vllm serve "$MODEL"
    --max-num-seqs "$SEQS"
)
"${CMD[@]}" $PARALLEL
""",
        ENV,
    )
    lines = dict(zip(result.argv, (s.line for s in result.argv_sources), strict=True))
    assert lines == {
        "vllm": 4,  # the array element's line
        "serve": 4,
        "acme/Foo-7B": 4,  # from the environment: where it was placed in the array
        "--max-num-seqs": 5,
        "32": 5,  # computed: where it was placed
        "--tensor-parallel-size": 1,  # written in the assignment
        "4": 7,  # from the environment, placed by the launch line's unquoted $PARALLEL
    }


def test_exit_in_reachable_branch_is_an_invalid_point(run_script: Runner) -> None:
    result = run_script(
        """if [ "$TP" -ne 8 ]; then
    echo "this recipe needs TP=8 (got $TP)" >&2
    exit 1
fi
vllm serve m
""",
        ENV,
    )
    assert result.status == "invalid"
    assert result.argv == ()
    assert result.invalid == (
        "point not valid for this script: this recipe needs TP=8 (got 4) (exit 1) "
        "(benchmarks/single_node/fixed_seq_len/case.sh:3)"
    )


def test_set_u_unbound_variable_exits_but_defaults_do_not(run_script: Runner) -> None:
    ok = run_script(
        """set -euo pipefail
X=${UNSET_VAR:-d}
declare -p UNSET_VAR >/dev/null 2>&1 || MISSING=yes
declare -p TP >/dev/null 2>&1 && PRESENT=yes
f() { echo "${1-none}"; }
vllm serve m "$X" "$MISSING" "$PRESENT" "$(f)"
""",
        ENV,
    )
    assert ok.argv == ("vllm", "serve", "m", "d", "yes", "yes", "none")
    bad = run_script("set -u\nvllm serve m $UNSET_VAR\n", ENV)
    assert bad.status == "invalid"
    assert "UNSET_VAR: unbound variable" in (bad.invalid or "")


def test_set_e_failure_exits(run_script: Runner) -> None:
    result = run_script("set -e\nfalse\nvllm serve m\n", ENV)
    assert result.status == "invalid"
    assert "set -e" in (result.invalid or "")


def test_no_vllm_launch_is_a_typed_result(run_script: Runner) -> None:
    result = run_script("python3 -m sglang.launch_server --model-path m\nvllm bench serve\n", ENV)
    assert result.status == "no-launch"
    assert result.argv == ()
    assert result.reason is not None and result.reason.startswith("no vllm launch found")


def test_exit_zero_before_launch_is_no_launch(run_script: Runner) -> None:
    result = run_script("echo nothing to do; exit 0\nvllm serve m\n", ENV)
    assert result.status == "no-launch"
    assert "exits with status 0" in (result.reason or "")


def test_files_written_by_heredoc_are_kept_in_memory(run_script: Runner, tmp_path: object) -> None:
    result = run_script(
        """cat > /tmp/server.yaml <<EOF
max-num-seqs: $CONC
EOF
echo "tp: $TP" >> /tmp/server.yaml
vllm serve m --config /tmp/server.yaml
""",
        ENV,
    )
    assert result.files == {"/tmp/server.yaml": "max-num-seqs: 16\ntp: 4\n"}


def test_digits_bash_does_not_count_are_words_not_numbers(run_script: Runner) -> None:
    """``str.isdigit`` is true of "¹", which ``int`` rejects: a hostile script spelling one
    in a brace sequence or as ``shift``'s count is evaluated, not a crash (the sequence is
    a word, as in bash)."""
    result = run_script("set -- a b\nshift ¹\nvllm serve m {¹..3} {1..2}\n", ENV)
    assert result.status == "launched"
    assert list(result.argv) == ["vllm", "serve", "m", "{¹..3}", "1", "2"]

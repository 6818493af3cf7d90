"""paste, simple sed scripts and awk field printing, on known input (docs/shell-census.md)."""

from __future__ import annotations

import pytest

from bot.shell import textutils
from tests.shell.conftest import Runner

ENV = {"MODEL": "acme/Foo-7B", "MAX_NUM_SEQS": "3", "DP_ATTENTION": "false"}


def test_capture_sizes_built_with_sort_and_paste(run_script: Runner) -> None:
    # the real shape: known values, sorted, de-duplicated and comma-joined
    result = run_script(
        """LIST=()
for ((n = 1; n <= MAX_NUM_SEQS; n++)); do LIST+=("$((n * 4))"); done
LIST+=(8 100)
SIZES=$(printf '%s\\n' "${LIST[@]}" | sort -n -u | paste -sd, -)
vllm serve "$MODEL" --compilation-config "{\\"cudagraph_capture_sizes\\":[${SIZES}]}"
""",
        ENV,
    )
    assert result.unresolved == ()
    assert result.argv[-1] == '{"cudagraph_capture_sizes":[4,8,12,100]}'


def test_sed_and_awk_read_a_repository_file(run_script: Runner) -> None:
    result = run_script(
        """DIR=$(dirname "$0")
DATASET=$(awk '/^dataset_path:[[:space:]]/{print $2; exit}' "$DIR/task.yaml")
PAIR=$(echo dsv4_fp4_b200_tp8 | sed -n 's/.*_\\([^_][^_]*\\)_\\([^_][^_]*\\)_tp.*/\\1 \\2/p')
vllm serve "$MODEL" --dataset "$DATASET" --pair "$PAIR"
""",
        ENV,
        files={"benchmarks/single_node/fixed_seq_len/task.yaml": "x: 1\ndataset_path: acme/set\n"},
    )
    assert result.unresolved == ()
    assert result.argv[-4:] == ("--dataset", "acme/set", "--pair", "fp4 b200")


def test_a_filter_over_a_host_probe_stays_unknown(run_script: Runner) -> None:
    result = run_script(
        'V=$(rocm-smi --showfw | grep MEC | awk \'{print $NF}\')\nvllm serve "$MODEL" --x "$V"\n',
        ENV,
    )
    assert result.argv[-1] == "<V:opaque:derived>" or "opaque" in result.argv[-1]
    assert [u.what for u in result.unresolved] == ["output of `rocm-smi --showfw`"]


@pytest.mark.parametrize(
    ("args", "text", "out"),
    [
        (["-sd,", "-"], "1\n2\n", "1,2\n"),
        (["-s", "-d", ":;", "-"], "a\nb\nc\n", "a:b;c\n"),
        (["-"], "a\nb\n", "a\nb\n"),
    ],
)
def test_paste(args: list[str], text: str, out: str) -> None:
    assert textutils.paste(args, lambda _: text) == (out, 0)


@pytest.mark.parametrize(
    ("args", "text", "out"),
    [
        (["$d"], "a\nb\nc\n", "a\nb\n"),
        (["s/a/X/g"], "banana\n", "bXnXnX\n"),
        (["s/a/X/"], "banana\n", "bXnana\n"),
        (["-E", "s/([0-9]+)-([0-9]+)/\\2-\\1/"], "1-22\n", "22-1\n"),
        (["-n", "2p"], "a\nb\nc\n", "b\n"),
        (["s|/|_|g"], "a/b/c\n", "a_b_c\n"),
        (["s/x/&&/"], "axb\n", "axxb\n"),
    ],
)
def test_sed(args: list[str], text: str, out: str) -> None:
    assert textutils.sed(args, lambda _: text) == (out, 0)


@pytest.mark.parametrize(
    "args",
    [["-i", "s/a/b/", "f"], ["y/abc/xyz/"], ["s/\\w/x/"], ["/re/,/re2/d"], ["s/(/x/X"]],
)
def test_sed_forms_not_modelled(args: list[str]) -> None:
    assert textutils.sed(args, lambda _: "abc\n") is None


@pytest.mark.parametrize(
    ("args", "text", "out"),
    [
        (["{print $NF}"], "a b c\nd e\n", "c\ne\n"),
        (["-F,", "{print $2, $1}"], "a,b\n", "b a\n"),
        (["/^k:/{print $2; exit}"], "x 1\nk: v\nk: w\n", "v\n"),
        (["{print $0}"], "a  b\n", "a  b\n"),
    ],
)
def test_awk(args: list[str], text: str, out: str) -> None:
    assert textutils.awk(args, lambda _: text) == (out, 0)


@pytest.mark.parametrize(
    "args",
    [
        ["{if ($NF > m) m = $NF} END {print m+0}"],
        ['BEGIN {printf "%d", 3 - 1}'],
        ["-F[,;]", "{print $1}"],
        ["-v", "x=1", "{print x}"],
    ],
)
def test_awk_programs_not_modelled(args: list[str]) -> None:
    assert textutils.awk(args, lambda _: "1 2\n") is None

from __future__ import annotations

import pytest

from bot.evidence.jobname import JobName, ParallelGroup, parse_job_name


def parse(name: str) -> JobName:
    job = parse_job_name(name)
    assert job is not None, name
    return job


def test_seed_eval_arm() -> None:
    job = parse(
        "agentic eval / p40 | dsv41flash fp4 cluster:mi355x-amds vllm TP4 mtp c32 | eval-only"
    )
    assert (job.bucket, job.caller, job.matrix_values, job.priority) == (
        "agentic eval",
        "agentic eval",
        None,
        40,
    )
    assert (job.model_prefix, job.precision, job.runner, job.framework) == (
        "dsv41flash",
        "fp4",
        "cluster:mi355x-amds",
        "vllm",
    )
    assert job.groups == (ParallelGroup(tp=4),)
    assert (job.spec, job.kv_offload, job.kv_offload_backend) == ("mtp", None, None)
    assert (job.concurrency, job.conc, job.eval_mode, job.is_eval) == ((32,), 32, "eval-only", True)
    assert job.template == "p40 | dsv41flash fp4 cluster:mi355x-amds vllm TP4 mtp c32 | eval-only"
    assert not job.is_multinode and job.extra == ()


def test_throughput_arm_has_no_eval_mode() -> None:
    job = parse("agentic / p40 | dsv41flash fp4 cluster:mi355x-amds vllm TP4 mtp c8")
    assert (job.bucket, job.conc, job.eval_mode) == ("agentic", 8, None)


def test_all_parallel_parts_runs_of_spaces_and_kv_offload() -> None:
    # empty optional parts leave runs of spaces in real names
    job = parse(
        "agentic / p7 | foo fp8 cluster:mi999-xyz vllm TP8/PP2/DCP2/PCP2/EP8/DPA   "
        "dram KV offload lmcache c64"
    )
    assert job.groups == (ParallelGroup(tp=8, pp=2, dcp=2, pcp=2, ep=8, dpa=True),)
    assert (job.tp, job.pp, job.dcp, job.pcp, job.ep, job.dpa) == (8, 2, 2, 2, 8, True)
    assert (job.spec, job.kv_offload, job.kv_offload_backend) == (None, "dram", "lmcache")
    assert job.template == (
        "p7 | foo fp8 cluster:mi999-xyz vllm TP8/PP2/DCP2/PCP2/EP8/DPA dram KV offload lmcache c64"
    )


def test_spec_with_kv_offload_and_default_spacing() -> None:
    job = parse(
        "agentic eval / p40 | foo fp8 cluster:mi999-xyz vllm TP8/EP8/DPA mtp   c64 | eval-only"
    )
    assert (job.ep, job.dpa, job.spec, job.conc) == (8, True, "mtp", 64)
    job = parse("agentic / p1 | foo fp8 cluster:x vllm TP2 mtp dram KV offload c4")
    assert (job.spec, job.kv_offload, job.kv_offload_backend) == ("mtp", "dram", None)


def test_matrix_values_appended_to_the_caller() -> None:
    job = parse("single-node 8k1k (foo, 8k1k) / p20 | foo fp8 h200 sgl TP8 c256 | eval")
    assert (job.caller, job.bucket, job.matrix_values) == (
        "single-node 8k1k (foo, 8k1k)",
        "single-node 8k1k",
        "foo, 8k1k",
    )
    assert (job.framework, job.eval_mode) == ("sglang", "eval")


def test_caller_part_may_itself_contain_slashes() -> None:
    job = parse("canary / x / p3 | foo fp4 b200 dyn-sgl TP4 c1")
    assert (job.caller, job.framework, job.conc) == ("canary / x", "dynamo-sglang", 1)


def test_multi_node_groups_and_concurrency_list() -> None:
    job = parse(
        "multi-node agentic eval / p10 | dsr1 fp8 gb200 sgl-disagg 1P (TP4/EP4) x 2D (TP8/EP8/DPA) "
        "c8x16 | eval-only"
    )
    assert job.framework == "sglang-disagg"
    assert job.groups == (
        ParallelGroup(tp=4, ep=4, role="prefill", workers=1),
        ParallelGroup(tp=8, ep=8, dpa=True, role="decode", workers=2),
    )
    assert (job.concurrency, job.is_multinode, job.tp) == ((8, 16), True, 4)
    bare = parse("multi-node 1k1k / p10 | dsr1 fp8 gb200 vllm 2P TP4 x 4D TP8/DPA c4x8x16")
    assert [g.workers for g in bare.groups] == [2, 4]
    assert bare.concurrency == (4, 8, 16)


@pytest.mark.parametrize(
    "name",
    [
        "collect-evals / collect",
        "collect-evals",
        "setup / p40",
        "agentic / p40 | foo fp8 runner vllm c8",  # no TP group
        "agentic / p40 | foo fp8 runner vllm TP4",  # no concurrency
        "agentic / p40 | foo fp8 runner vllm TP4 c8 | benchmark",  # unknown mode
        "agentic / px | foo fp8 runner vllm TP4 c8",
        "",
    ],
)
def test_other_jobs_are_not_benchmark_jobs(name: str) -> None:
    assert parse_job_name(name) is None


def test_unplaced_tokens_are_kept() -> None:
    job = parse("agentic / p1 | foo fp8 x vllm TP1 mtp turbo c2")
    assert (job.spec, job.extra) == ("mtp", ("turbo",))

"""The linker: maintainer commits to the benchmark PRs whose change they carry."""

from __future__ import annotations

from bot.agreement.links import BenchmarkPR, Linker, guide_settings

from .conftest import DAY, TAXONOMY, commit, digest

SCOPE = {"variants": {"mxfp8": {"hardware_overrides": {"mi300x": {}}}}}


def _with_env(env: dict[str, str]) -> dict[str, object]:
    return {"variants": {"mxfp8": {"hardware_overrides": {"mi300x": {"extra_env": env}}}}}


def _pr(number: int, *digests: object, opened: int = 10, merged: int = 12) -> BenchmarkPR:
    return BenchmarkPR(number, f"PR {number}", opened * DAY, merged * DAY, tuple(digests))  # type: ignore[arg-type]


def test_a_commit_carrying_what_a_pr_changed_links_to_it_and_not_to_a_bystander() -> None:
    tuned = _pr(
        1951,
        digest("mi300x", {"VLLM_ROCM_USE_AITER": "1", "TORCH_BLAS_PREFER_HIPBLASLT": "1"},
               changed=("TORCH_BLAS_PREFER_HIPBLASLT", "VLLM_ROCM_USE_AITER")),
    )  # fmt: skip
    # launches the same values, but its change is elsewhere (a deprecation, a harness tweak)
    bystander = _pr(
        2263,
        digest("mi300x", {"VLLM_ROCM_USE_AITER": "1", "TORCH_BLAS_PREFER_HIPBLASLT": "1"},
               changed=("--max-num-seqs",)),
    )  # fmt: skip
    linker = Linker([tuned, bystander], TAXONOMY)
    change = commit(
        "c1", 14, SCOPE, _with_env({"VLLM_ROCM_USE_AITER": "1", "TORCH_BLAS_PREFER_HIPBLASLT": "1"})
    )
    links = linker.links(change)
    assert [link.pr for link in links] == [1951]
    link = links[0]
    assert link.hardware == ("mi300x",)
    assert link.confidence == 1.0
    assert not link.before_merge
    assert "TORCH_BLAS_PREFER_HIPBLASLT=1 at variants.mxfp8.hardware_overrides.mi300x" in (
        link.reason()
    )


def test_no_link_outside_the_window_or_on_another_gpu_or_variant() -> None:
    pr = _pr(7, digest("mi355x", {"X": "1"}), opened=10, merged=12)
    linker = Linker([pr], TAXONOMY)
    assert linker.links(commit("late", 12 + 22, SCOPE, _with_env({"X": "1"}))) == ()
    assert linker.links(commit("gpu", 13, SCOPE, _with_env({"X": "1"}))) == ()  # mi300x node
    other_variant = {
        "variants": {"nvfp4": {"hardware_overrides": {"mi355x": {"extra_env": {"X": "1"}}}}}
    }
    assert linker.links(commit("variant", 13, {}, other_variant)) == ()
    family = {"hardware_overrides": {"amd": {"extra_env": {"X": "1"}}}}
    assert [link.pr for link in linker.links(commit("amd", 13, {}, family))] == [7]


def test_common_settings_weigh_less_than_distinctive_ones() -> None:
    prs = [
        _pr(n, digest("mi300x", {"VLLM_ROCM_USE_AITER": "1", f"ONLY_{n}": "1"}))
        for n in range(100, 110)
    ]
    linker = Linker(prs, TAXONOMY)
    common = linker.weight("models/x/M.yaml", "env", "VLLM_ROCM_USE_AITER", "1")
    distinctive = linker.weight("models/x/M.yaml", "env", "ONLY_101", "1")
    assert distinctive == 1.0
    assert common < 0.3
    # a commit adding only the common setting is linked weakly to all ten, so to none strongly
    found = linker.links(commit("c", 11, SCOPE, _with_env({"VLLM_ROCM_USE_AITER": "1",
                                                               "UNRELATED": "0"})))  # fmt: skip
    assert all(link.confidence < 0.5 for link in found)


def test_a_guide_reproduction_links_by_its_exports_and_by_naming_the_lane() -> None:
    pr = _pr(2104, digest("mi355x", {"VLLM_ROCM_QUICK_REDUCE_QUANTIZATION": "INT4"},
                          {"--kv-cache-dtype": "fp8"}, key="m-fp4-mi355x-vllm"))  # fmt: skip
    text = (
        "### MXFP4 benchmark reproduction (InferenceX MI355X sweep)\n"
        "```bash\nexport VLLM_ROCM_QUICK_REDUCE_QUANTIZATION=INT4\n"
        'export GPU_MAX_HW_QUEUES="${GPU_MAX_HW_QUEUES:-2}"\n'
        "vllm serve org/M \\\n  --kv-cache-dtype fp8\n```\n"
    )
    env, args = guide_settings(text)
    assert ("GPU_MAX_HW_QUEUES", "2") in env
    assert ("--kv-cache-dtype", "fp8") in args
    links = Linker([pr], TAXONOMY).links(commit("g", 13, {}, {}, guide=text))
    assert [link.pr for link in links] == [2104]
    assert links[0].hardware == ("mi355x",)
    named = Linker([pr], TAXONOMY).links(
        commit("n", 13, {}, {}, guide="The m-fp4-mi355x-vllm lane runs TP4.")
    )
    assert [e.kind for e in named[0].evidence] == ["guide-names-key"]


def test_a_citation_links_even_without_matching_settings() -> None:
    pr = _pr(2158, digest("b200", {"A": "1"}))
    change = commit("cite", 13, {}, {}, subject="Update K2.6 (InferenceX #2158)")
    change = type(change)(**{**change.__dict__, "recipes": ("models/x/M.yaml",)})
    links = Linker([pr], TAXONOMY).links(change)
    assert [(link.pr, link.evidence[0].kind) for link in links] == [(2158, "citation")]

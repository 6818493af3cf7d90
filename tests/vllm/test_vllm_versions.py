"""Version parsing, image tags and which vLLM rules a comparison uses."""

from __future__ import annotations

import pytest

from bot.vllm.versions import parse_image, parse_version, resolve_version, span_status

SHA = "eed1f3d0c6043bd494424a22443ee198dd56f657"


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("0.25.0", (0, 25, 0)),
        ("v0.27.1", (0, 27, 1)),
        ("0.33", (0, 33, 0)),
        ("0.11.1rc2", (0, 11, 1)),
        ("nightly", None),
        ("", None),
    ],
)
def test_parse_version(text: str, version: tuple[int, int, int] | None) -> None:
    assert parse_version(text) == version


@pytest.mark.parametrize(
    ("image", "repo", "tag", "release", "nightly", "sha"),
    [
        ("vllm/vllm-openai:v0.25.0", "vllm/vllm-openai", "v0.25.0", (0, 25, 0), False, None),
        ("vllm/vllm-openai:0.27.1", "vllm/vllm-openai", "0.27.1", (0, 27, 1), False, None),
        (
            "vllm/vllm-openai-rocm:v0.22.1-cu130",
            "vllm/vllm-openai-rocm",
            "v0.22.1-cu130",
            (0, 22, 1),
            False,
            None,
        ),
        (
            f"vllm/vllm-openai-rocm:nightly-{SHA}",
            "vllm/vllm-openai-rocm",
            f"nightly-{SHA}",
            None,
            True,
            SHA,
        ),
        ("vllm/vllm-openai:nightly", "vllm/vllm-openai", "nightly", None, True, None),
        (
            "vllm/vllm-openai-cpu:latest-x86_64",
            "vllm/vllm-openai-cpu",
            "latest-x86_64",
            None,
            True,
            None,
        ),
        ("vllm/vllm-openai", "vllm/vllm-openai", None, None, True, None),
        (
            "vllm/vllm-openai-rocm:deepseekv41-flash-0909",
            "vllm/vllm-openai-rocm",
            "deepseekv41-flash-0909",
            None,
            False,
            None,
        ),
        (
            "localhost:5000/vllm:v0.33.0@sha256:abc",
            "localhost:5000/vllm",
            "v0.33.0",
            (0, 33, 0),
            False,
            None,
        ),
    ],
)
def test_parse_image(
    image: str,
    repo: str,
    tag: str | None,
    release: tuple[int, int, int] | None,
    nightly: bool,
    sha: str | None,
) -> None:
    ref = parse_image(image)
    assert (ref.repo, ref.tag, ref.release, ref.nightly, ref.nightly_sha) == (
        repo,
        tag,
        release,
        nightly,
        sha,
    )


def test_release_tag_wins() -> None:
    res = resolve_version(bench_image="vllm/vllm-openai:v0.25.0", recipe_min_version="0.20.0")
    assert (res.version, res.source) == ((0, 25, 0), "benchmark image")
    res = resolve_version(bench_image="x/y:custom", recipe_image="vllm/vllm-openai:0.27.1")
    assert (res.version, res.source) == ((0, 27, 1), "recipe image")


def test_explicit_version_wins_over_everything() -> None:
    res = resolve_version(given="0.22", bench_image="vllm/vllm-openai:v0.25.0")
    assert (res.version, res.source) == ((0, 22, 0), "given")
    assert resolve_version(given="nightly").source == "nightly"


def test_nightly_benchmark_image_assumes_033_and_says_so() -> None:
    res = resolve_version(
        bench_image=f"vllm/vllm-openai-rocm:nightly-{SHA}",
        recipe_image="vllm/vllm-openai-rocm:deepseekv41-flash-0909",
        recipe_min_version="0.25.0",
    )
    assert res.version == (0, 33, 0)
    assert res.reason.startswith("nightly image: assumed 0.33 rules")
    assert any("min_vllm_version 0.25.0" in n for n in res.notes)


def test_custom_tag_falls_back_to_min_version_then_unknown() -> None:
    res = resolve_version(bench_image="x/vllm:deepseekv41-flash-0909", recipe_min_version="0.22.0")
    assert (res.version, res.source) == ((0, 22, 0), "recipe min_vllm_version")
    res = resolve_version(bench_image="x/vllm:deepseekv41-flash-0909")
    assert (res.version, res.source) == ((0, 33, 0), "unknown")
    assert "version unknown" in res.reason


def test_min_version_ranks_above_a_nightly_recipe_image() -> None:
    res = resolve_version(recipe_image="vllm/vllm-openai:nightly", recipe_min_version="0.22.0")
    assert res.version == (0, 22, 0)
    assert resolve_version(recipe_image="vllm/vllm-openai:latest").source == "nightly"


def test_versions_outside_the_researched_range_are_noted() -> None:
    old = resolve_version(recipe_min_version="0.8.5")
    assert old.rules == (0, 12, 0) and old.notes
    new = resolve_version(bench_image="vllm/vllm-openai:v0.35.0")
    assert new.rules == (0, 33, 0) and new.notes


@pytest.mark.parametrize(
    ("version", "status"),
    [
        ((0, 22, 0), "yes"),
        ((0, 27, 1), "yes"),
        ((0, 33, 0), "no"),
        ((0, 17, 0), "no"),
        ((0, 30, 0), "unverified"),
        ((0, 20, 0), "unverified"),
        ((0, 25, 0), "yes"),
    ],
)
def test_span_status_between_researched_releases(
    version: tuple[int, int, int], status: str
) -> None:
    assert span_status(version, (0, 22, 0), (0, 27, 1)) == status


@pytest.mark.parametrize(
    ("tag", "sha"),
    [
        ("nightly-dev-x86_64-cu13.0.1-728d3ad", "728d3ad"),
        ("nightly-dev-arm64-cu13.0.1-75c2eef", "75c2eef"),
        ("nightly-aarch64", None),
    ],
)
def test_every_nightly_tag_means_the_newest_rules(tag: str, sha: str | None) -> None:
    """InferenceX's dev builds (``nightly-dev-<arch>-<cuda>-<sha>``) are nightlies, not a
    custom tag that falls back to the recipe's ``min_vllm_version`` (0.20 rules)."""
    ref = parse_image(f"vllm/vllm-openai:{tag}")
    assert (ref.nightly, ref.nightly_sha, ref.release) == (True, sha, None)
    res = resolve_version(bench_image=f"vllm/vllm-openai:{tag}", recipe_min_version="0.20.0")
    assert (res.version, res.source) == ((0, 33, 0), "nightly")

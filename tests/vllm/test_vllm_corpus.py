"""Every flag the real recipes corpus uses is known to the 0.33 catalogue: normalising each
rendered `vllm serve` argv, under the version its image names, finds no unknown flags."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from ruamel.yaml import YAML

from bot.vllm.normalise import normalise, split_env_prefix
from bot.vllm.versions import resolve_version
from tests.shared import corpus_dir

CORPUS = corpus_dir()
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="recipes corpus not present")

# Documented findings the corpus really has (not catalogue gaps): a rendering that joins
# "--max-model-len auto" into one argv word, and -ac.use_fp4_indexer_cache on images that
# resolve to 0.33 rules, where the key was removed (doc §3).
EXPECTED = {
    ("unrecognised", "'--max-model-len"),  # the word is '--max-model-len auto'
    ("unknown-config-key", "'use_fp4_indexer_cache'"),
}


def rendered_argvs() -> Iterator[tuple[tuple[str, ...], str | None]]:
    def walk(node: Any, image: str | None) -> Iterator[tuple[tuple[str, ...], str | None]]:
        if isinstance(node, dict):
            for key, value in node.items():
                if (
                    key.endswith("argv")
                    and isinstance(value, list)
                    and all(isinstance(t, str) for t in value)
                ):
                    yield tuple(value), image
                else:
                    yield from walk(value, image)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item, image)

    with gzip.open(CORPUS / "renderings.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            rendering = json.loads(line)["rendering"]
            image = rendering.get("docker_image")
            yield from walk(rendering, image if isinstance(image, str) else None)


def test_every_rendered_flag_is_known() -> None:
    seen: set[tuple[tuple[str, ...], str | None]] = set()
    problems: Counter[tuple[str, str]] = Counter()
    for argv, image in rendered_argvs():
        _, argv = split_env_prefix(argv)
        if argv[:2] != ("vllm", "serve") or (argv, image) in seen:
            continue
        seen.add((argv, image))
        config = normalise(argv, version=resolve_version(bench_image=image).version)
        for finding in config.errors:
            detail = next((part for part in finding.message.split() if part.startswith("'")), "")
            problems[(finding.code, detail)] += 1
    assert len(seen) > 5000
    assert set(problems) <= EXPECTED, problems


def test_every_flag_in_the_model_yamls_is_known_for_033() -> None:
    """Args written in models/, strategies/ and kv_store/ YAMLs, rendered or not."""
    yaml = YAML(typ="safe")
    flags: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                if isinstance(item, str) and item.startswith("-") and not item[1:2].isdigit():
                    flags.add(item.split("=", 1)[0].split(" ", 1)[0])
                else:
                    walk(item)

    for folder in ("models", "strategies", "kv_store"):
        for path in sorted((CORPUS / folder).rglob("*.yaml")):
            walk(yaml.load(path.read_text(encoding="utf-8")))
    assert len(flags) > 100
    unknown = []
    for flag in sorted(flags):
        dotted = "." in flag
        argv = ("vllm", "serve", "m", flag, *(("1",) if dotted else ()))
        codes = {f.code for f in normalise(argv).errors}
        if codes & {"unknown-flag", "ambiguous", "not-in-version"}:
            unknown.append(flag)
    assert unknown == []

"""Parsing on two CPUs: the same answers as one, and nothing lost when a document or the
child fails (the caller then parses it and says why, as it would have)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.errors import InputError
from bot.recipes.repo import load_recipes
from bot.recipes.tolerant import load_recipes_tolerant
from bot.sources import DirectorySource
from bot.yamlio.twoway import MIN_DOCUMENTS, load_yaml_twoway
from bot.yamlio.yaml12 import load_yaml
from tests.yamlio.test_yamlio import BOMB

needs_fork = pytest.mark.skipif(
    not hasattr(os, "fork") or (os.cpu_count() or 1) < 2, reason="needs fork and two CPUs"
)


def _documents(count: int) -> dict[str, str]:
    return {
        f"doc{i}.yaml": f"name: doc{i}\nvalues: [{i}, {i}.0, 0x{i:x}, yes, true, null]\n"
        f"when: 2026-07-{1 + i % 28:02d}\nnested: {{a: &x [1, 2], b: *x}}\n"
        for i in range(count)
    }


@needs_fork
def test_both_halves_parse_as_one_process_would(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _documents(MIN_DOCUMENTS + 5)
    children: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        pid = real_fork()
        children.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counting_fork)
    found = load_yaml_twoway(list(texts), texts.__getitem__)
    assert children and all(pid > 0 for pid in children)  # a child did parse (this is the parent)
    assert list(found) == list(texts)[0::2] + list(texts)[1::2]
    assert found == {name: load_yaml(text, name) for name, text in texts.items()}
    assert found["doc3.yaml"]["values"] == [3, 3, 3, "yes", True, None]  # YAML 1.2, JS numbers


@needs_fork
@pytest.mark.parametrize("bad", [1, 2])  # the child's half and the parent's
def test_a_document_that_does_not_parse_is_left_to_the_caller(bad: int) -> None:
    texts = _documents(MIN_DOCUMENTS)
    names = list(texts)
    texts[names[bad]] = BOMB
    texts[names[bad + 4]] = "a: [unclosed\n"
    found = load_yaml_twoway(names, texts.__getitem__)
    assert set(found) == set(names) - {names[bad], names[bad + 4]}


@needs_fork
def test_a_child_that_fails_loses_nothing() -> None:
    texts = _documents(MIN_DOCUMENTS)
    parent = os.getpid()

    def read(name: str) -> str:
        if os.getpid() != parent:  # the child dies before it can send anything
            os._exit(3)
        return texts[name]

    found = load_yaml_twoway(list(texts), read)
    assert list(found) == list(texts)[0::2]  # the parent's half; the caller reads the rest


def test_few_documents_are_parsed_here() -> None:
    texts = _documents(3)
    found = load_yaml_twoway(list(texts), texts.__getitem__)
    assert found == {name: load_yaml(text, name) for name, text in texts.items()}


def _checkout(corpus: Path, root: Path, count: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(corpus / "taxonomy.yaml", root / "taxonomy.yaml")
    for folder in ("strategies", "kv_store"):
        shutil.copytree(corpus / folder, root / folder)
    recipes = sorted((corpus / "models").rglob("*.yaml"))[:count]
    for path in recipes:
        target = root / path.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    return root


@needs_fork
def test_recipes_load_the_same_on_two_cpus(tmp_path: Path) -> None:
    from tests.shared import corpus_dir

    root = _checkout(corpus_dir(), tmp_path, MIN_DOCUMENTS * 2)
    one = load_recipes(DirectorySource(root))
    two = load_recipes(DirectorySource(root), two_way=True)
    assert [r.path for r in two.recipes] == [r.path for r in one.recipes]
    assert [r.data for r in two.recipes] == [r.data for r in one.recipes]


@needs_fork
def test_a_broken_recipe_is_named_as_on_one_cpu(tmp_path: Path) -> None:
    from tests.shared import corpus_dir

    root = _checkout(corpus_dir(), tmp_path, MIN_DOCUMENTS * 2)
    recipes = sorted((root / "models").rglob("*.yaml"))
    recipes[3].write_text(BOMB)  # the child's half
    recipes[6].write_text("meta: {title: [unclosed\n")  # the parent's
    with pytest.raises(InputError) as one:
        load_recipes(DirectorySource(root))
    with pytest.raises(InputError) as two:
        load_recipes(DirectorySource(root), two_way=True)
    assert str(two.value) == str(one.value)
    tolerant = load_recipes_tolerant(DirectorySource(root), two_way=True)
    assert tolerant.broken == load_recipes_tolerant(DirectorySource(root)).broken
    assert len(tolerant.broken) == 2 and tolerant.repo is not None


@needs_fork
@pytest.mark.parametrize("workers", ["1", "2"])
def test_render_forks_to_parse_only_when_it_may_use_two_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    from bot.commands.main import main
    from tests.shared import corpus_dir

    root = _checkout(corpus_dir(), tmp_path / "recipes", MIN_DOCUMENTS * 2)
    parsed_twoway: list[int] = []

    def spy(names: list[str], read: Callable[[str], str]) -> dict[str, Any]:
        parsed_twoway.append(len(names))
        return load_yaml_twoway(names, read)

    monkeypatch.setattr("bot.recipes.repo.load_yaml_twoway", spy)
    out = tmp_path / "api"
    args = ["render", "--recipes", str(root), "--api-out", str(out), "--workers", workers]
    assert main(args) == 0
    assert parsed_twoway == ([] if workers == "1" else [MIN_DOCUMENTS * 2])
    assert (out / "models.json").is_file()


@needs_fork
@pytest.mark.timeout(30)  # the fault this guards against is a hang
def test_a_parent_that_fails_does_not_wait_for_a_blocked_child() -> None:
    # the child's answer is larger than a pipe holds: had the parent waited for it before
    # closing its end, the child would block on the write and the parent on the wait
    texts = {f"doc{i}.yaml": "values: [" + ", ".join(["x" * 50] * 400) + "]\n" for i in range(20)}
    parent = os.getpid()

    def read(name: str) -> str:
        if os.getpid() == parent and name == "doc4.yaml":
            raise KeyboardInterrupt  # not an error of the document: it goes up
        return texts[name]

    with pytest.raises(KeyboardInterrupt):
        load_yaml_twoway(list(texts), read)

"""Loading a recipes checkout: YAML 1.2 semantics and located errors for bad input."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.errors import InputError
from bot.recipes import RecipesRepo, build_api, load_recipes
from bot.sources import DirectorySource, GitTreeSource
from bot.yamlio.yaml12 import load_yaml

MakeRepo = Callable[..., RecipesRepo]


def test_yaml_1_2_scalars_as_js_yaml_reads_them() -> None:
    data = load_yaml(
        """
        yes_: yes
        on_: on
        no_: NO
        true_: True
        octal_like: 0755
        octal: 0o17
        hex: 0x1F
        binary: 0b101
        clock: 1:30
        date: 2026-07-31
        float_int: 1.0
        half: .5
        exp: 1e3
        null_: ~
        empty:
        underscore: 1_000
        version: 0.20.0
        """.replace("\n        ", "\n"),
        "t.yaml",
    )
    assert data == {
        "yes_": "yes",
        "on_": "on",
        "no_": "NO",
        "true_": True,
        "octal_like": 755,
        "octal": 15,
        "hex": 31,
        "binary": 5,
        "clock": "1:30",
        "date": "2026-07-31",
        "float_int": 1,
        "half": 0.5,
        "exp": 1000,
        "null_": None,
        "empty": None,
        "underscore": "1_000",
        "version": "0.20.0",
    }
    assert type(data["float_int"]) is int


def test_yaml_merge_keys_and_non_string_keys() -> None:
    data = load_yaml("base: &b {a: 1, b: 2}\nuse:\n  <<: *b\n  b: 3\n8: x\ntrue: y\n", "t.yaml")
    assert data["use"] == {"a": 1, "b": 3}
    assert data["8"] == "x" and data["true"] == "y"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a:\n  b: 1\n  b: 2\n", "t.yaml:3: key 'a.b': malformed YAML: duplicated mapping key 'b'"),
        ("a:\n  b: c: d\n", "t.yaml:2: key 'a.b': malformed YAML: mapping values are not allowed"),
        (
            "variants:\n  default:\n    extra_args:\n      - [open\n  other: 1\n",
            "t.yaml:4: key 'variants.default.extra_args': malformed YAML: while parsing a flow",
        ),
    ],
)
def test_malformed_yaml_names_file_line_and_key(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_yaml(text, "t.yaml")
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


GOOD = """
meta: {title: Good, tasks: [text]}
model: {model_id: test/Good, base_args: ["--a", "1"]}
variants: {default: {vram_minimum_gb: 10}}
compatible_strategies: [single_node_tp]
"""


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        (
            "model: {model_id: x}\nvariants: {default: {}}\n"
            "compatible_strategies:\n  - single_node_tp\n  - single_node_xx\n",
            "Bad.yaml:5: key 'compatible_strategies.1'",
            "unknown strategy 'single_node_xx'",
        ),
        (
            "variants:\n  default:\n    supported_hardware: [h200, h900]\n",
            "Bad.yaml:3: key 'variants.default.supported_hardware.1'",
            "unknown hardware id 'h900'",
        ),
        (
            "variants: {default: {}}\ndefault_strategy: fastest\n",
            "Bad.yaml:2: key 'default_strategy'",
            "unknown strategy 'fastest'",
        ),
        (
            "variants: {default: {}}\nstrategy_hardware:\n  multi_node_tp:\n    h999: supported\n",
            "Bad.yaml:4: key 'strategy_hardware.multi_node_tp.h999'",
            "unknown hardware id 'h999'",
        ),
        (
            "variants:\n  fp8: {}\n",
            "Bad.yaml:1: key 'variants'",
            "a recipe needs a 'default' variant",
        ),
        (
            "variants: {default: {}}\nmodel: [not, a, mapping]\n",
            "Bad.yaml:2: key 'model'",
            "expected a mapping",
        ),
        (
            "variants: {default: {}}\nmodel:\n  base_args: [\n",
            "Bad.yaml:4: key 'model.base_args'",  # detected at end of input
            "malformed YAML",
        ),
    ],
)
def test_bad_recipe_is_a_located_input_error(
    make_repo: MakeRepo, text: str, where: str, reason: str
) -> None:
    with pytest.raises(InputError) as caught:
        make_repo({"models/test/Good.yaml": GOOD, "models/test/Bad.yaml": text})
    message = str(caught.value)
    assert "models/test/" + where in message
    assert reason in message
    assert "\n" not in message


def test_git_commit_and_directory_render_the_same(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    directory_repo = make_repo({"models/test/Good.yaml": GOOD}, root=root)

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=root,
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "one")
    (root / "models/test/Good.yaml").write_text(GOOD.replace('"1"', '"2"'), encoding="utf-8")
    at_head = load_recipes(GitTreeSource(root, "HEAD"))
    edited = load_recipes(DirectorySource(root))
    before, after = build_api(at_head), build_api(edited)
    assert before == build_api(directory_repo)
    assert set(before) == set(after)
    assert before["test/Good/hw/h200.json"]["argv"][3:5] == ["--a", "1"]
    assert after["test/Good/hw/h200.json"]["argv"][3:5] == ["--a", "2"]
    assert at_head.by_hf_id["test/Good"].path == "models/test/Good.yaml"


def test_corpus_loads_with_all_recipes(corpus_repo: RecipesRepo) -> None:
    assert len(corpus_repo.recipes) == 173
    assert len(corpus_repo.hardware) == 26
    assert list(corpus_repo.hardware)[:2] == ["h100", "h200"]
    assert corpus_repo.kv_ids == ("kv_store_centralized_mooncake", "kv_store_distributed_mooncake")
    assert sum(recipe.is_omni for recipe in corpus_repo.recipes) == 25
    v4f = corpus_repo.by_hf_id["deepseek-ai/DeepSeek-V4-Flash"]
    assert v4f.data["meta"]["date_added"] == "2026-07-31"

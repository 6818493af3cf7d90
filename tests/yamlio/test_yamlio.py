"""Alias bombs (billion laughs) in every untrusted YAML input: one located error, fast, small.

Each bomb is ten lines that expand to 9^9 ≈ 387 million nodes; before the bounds the loaders
(``to_plain`` on a master config entry, the recipes loader, the taxonomy) allocated gigabytes.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from bot.benchmarks.configs import load_master_configs
from bot.errors import InputError
from bot.recipes.repo import load_recipes
from bot.rules.loader import load_validated
from bot.sources import DirectorySource
from bot.yamlio.bounds import MAX_NODES, check_expansion
from bot.yamlio.yaml12 import load_yaml

BOMB = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def _one_line(err: InputError, file: str) -> str:
    message = str(err)
    assert "\n" not in message and len(message) < 300, message
    assert file in message and "lol" not in message  # located; never echoes the data
    return message


def _fast(started: float) -> None:
    assert time.perf_counter() - started < 5.0


def test_master_config_bomb_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "nvidia-master.yaml").write_text(
        BOMB.replace("i: &i", "dsr1-fp8-b200-vllm: &i")
    )
    started = time.perf_counter()
    with pytest.raises(InputError) as caught:
        load_master_configs(DirectorySource(tmp_path))
    _fast(started)
    message = _one_line(caught.value, "configs/nvidia-master.yaml")
    assert "expand to more than" in message and ":" in message


def test_recipe_bomb_is_a_located_error() -> None:
    started = time.perf_counter()
    with pytest.raises(InputError) as caught:
        load_yaml("model: x\n" + BOMB.replace("i: &i", "recipe_args: &i"), "models/a/b.yaml")
    _fast(started)
    message = _one_line(caught.value, "models/a/b.yaml")
    assert message.startswith("models/a/b.yaml:")  # with a line


def test_merge_key_chain_stays_small() -> None:
    # PyYAML ≥ 6.0.2 de-duplicates merged keys while flattening: 40 doubling levels are cheap
    lines = ["a0: &a0 {x: 1, y: 2}"]
    for n in range(1, 40):
        lines.append(f"a{n}: &a{n} {{<<: [*a{n - 1}, *a{n - 1}]}}")
    started = time.perf_counter()
    data = load_yaml("\n".join(lines) + "\n", "models/m.yaml")
    _fast(started)
    assert data["a39"] == {"x": 1, "y": 2}


def test_taxonomy_bomb_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "taxonomy.yaml").write_text(BOMB.replace("i: &i", "hardware_profiles: &i"))
    started = time.perf_counter()
    with pytest.raises(InputError) as caught:
        load_recipes(DirectorySource(tmp_path))
    _fast(started)
    _one_line(caught.value, "taxonomy.yaml")


def test_recursive_alias_is_an_error_not_a_crash() -> None:
    with pytest.raises(InputError) as caught:
        load_yaml("a: &a [1, *a]\n", "models/r.yaml")
    assert "cycle" in _one_line(caught.value, "models/r.yaml")


class _Anything(BaseModel):
    model_config = ConfigDict(extra="allow")


def test_rules_file_bomb_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(BOMB)
    with pytest.raises(InputError) as caught:
        load_validated(path, _Anything, "rules/policy.yaml")
    _one_line(caught.value, "rules/policy.yaml")


def test_ordinary_aliases_still_load(tmp_path: Path) -> None:
    data = load_yaml("base: &b {tp: 8}\nx: *b\ny: {<<: *b, ep: true}\n", "models/ok.yaml")
    assert data == {"base": {"tp": 8}, "x": {"tp": 8}, "y": {"tp": 8, "ep": True}}
    check_expansion([list(range(100))] * 100, "ok")  # 10^4 nodes: fine
    with pytest.raises(InputError):
        check_expansion([[0] * 1000] * (MAX_NODES // 1000 + 1), "big")


def test_render_errors_never_repr_a_whole_list() -> None:
    from bot.recipes.layers import _token_error

    message = str(_token_error([("recipe.args", ["--x", ["lol"] * 100_000])]))
    assert message == "recipe.args[1]: argument a list is not a string"
    assert str(_token_error([("a", [7])])) == "a[0]: argument 7 is not a string"

"""Which error a broken combination reports, in the JSON API and in ``render``.

The JSON API renders without provenance from token runs cleaned once per memoised layer
(``layers.clean_tokens``); ``render`` takes the full pass over every segment. Both must name
the same first broken layer, in layering order, as one pass over all layers does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bot.recipes import RecipesRepo, RenderError, RenderRequest, render, write_api

MakeRepo = Callable[..., RecipesRepo]

BROKEN_STRATEGY = """
name: broken_tp
deploy_type: single_node
vllm_args: "not a list"
env: "not a mapping"
parallel_flag: "--tensor-parallel-size"
"""


def _api_error(repo: RecipesRepo, out: Path, hardware: str, strategy: str) -> str:
    dropped = write_api(repo, out, workers=1).dropped
    prefix = f"test/Broken {hardware} {strategy}: "
    found = [line[len(prefix) :] for line in dropped if line.startswith(prefix)]
    assert len(found) == 1, dropped
    return found[0]


def _render_error(repo: RecipesRepo, hardware: str, strategy: str) -> str:
    with pytest.raises(RenderError) as caught:
        render(repo, RenderRequest("test/Broken", hardware, strategy))
    return str(caught.value)


@pytest.mark.parametrize(
    ("recipe", "expected"),
    [
        # the strategy's own args (A4) come before the features (A11) and its env (E4)
        (
            """
            model: {model_id: test/Broken}
            features: {f: {args: "not a list"}}
            variants: {default: {}}
            compatible_strategies: [broken_tp]
            """,
            "strategies/broken_tp.yaml:vllm_args: expected a list of arguments",
        ),
        # a non-string token: the first one in layer order is named
        (
            """
            model: {model_id: test/Broken, base_args: ["--a", "x", "--n", 8]}
            features: {f: {args: ["--m", 9]}}
            variants: {default: {extra_args: ["--v", {k: 1}]}}
            compatible_strategies: [single_node_tp]
            """,
            "model.base_args[3]: argument 8 is not a string",
        ),
        (
            """
            model: {model_id: test/Broken, base_args: ["--a", "x", "--off", 0, "--no", null]}
            features: {f: {args: ["--m", 9]}}
            strategy_overrides:
              single_node_tp:
                hardware_overrides:
                  h200: {extra_args: ["--hw", true]}
            variants: {default: {}}
            compatible_strategies: [single_node_tp]
            """,
            "strategy_overrides.single_node_tp.hardware_overrides.h200.extra_args[1]: "
            "argument True is not a string",
        ),
        # the tail's own order: exact-hardware override, features, then nothing else
        (
            """
            model: {model_id: test/Broken}
            features: {f: {args: "not a list"}}
            strategy_overrides:
              single_node_tp:
                hardware_overrides:
                  h200: {extra_args: "not a list either"}
            variants: {default: {}}
            compatible_strategies: [single_node_tp]
            """,
            "strategy_overrides.single_node_tp.hardware_overrides.h200.extra_args: "
            "expected a list of arguments",
        ),
    ],
)
def test_api_and_render_name_the_same_first_broken_layer(
    make_repo: MakeRepo, tmp_path: Path, recipe: str, expected: str
) -> None:
    strategy = "broken_tp" if "broken_tp" in recipe else "single_node_tp"
    repo = make_repo(
        {"strategies/broken_tp.yaml": BROKEN_STRATEGY, "models/test/Broken.yaml": recipe}
    )
    assert _render_error(repo, "h200", strategy) == expected
    assert _api_error(repo, tmp_path / "out", "h200", strategy) == expected

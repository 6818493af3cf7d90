"""Recipe nodes and FlagDiffs as the planner reads them: provenance paths, values, scopes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bot.argv import option_name
from bot.benchmarks import LaunchLine
from bot.digits import is_integer
from bot.errors import RecipeSyncError
from bot.placeholders import PLACEHOLDER_RE
from bot.recipes import (
    ArgOrigin,
    Coordinates,
    RecipesRepo,
    Rendering,
    api_coordinates,
    build_api,
    render,
)
from bot.recipes.edit import NodePath
from bot.recipes.render import RenderingKey
from bot.shell.result import SourceSpan
from bot.vllm import FlagDiff, canonical_flag

_EXTERNAL = re.compile(r"^(generated|request|default-image):|^[\w./-]+\.ya?ml:")
MISSING = object()  # what ``lookup`` returns for a path the data does not have


def in_recipe(path: str | None) -> bool:
    """Provenance inside the recipe file (not a strategy file, generated, or a default)."""
    return bool(path) and not _EXTERNAL.match(path or "")


def lookup(data: Any, path: NodePath) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(data, list) or not -len(data) <= part < len(data):
                return MISSING
            data = data[part]
        else:
            if not isinstance(data, Mapping) or part not in data:
                return MISSING
            data = data[part]
    return data


def exists(data: Any, path: NodePath) -> bool:
    return lookup(data, path) is not MISSING


def hw_label(recipes: RecipesRepo, hw_id: str) -> str:
    hw = recipes.hardware.get(hw_id)
    name = hw.data.get("display_name") if hw is not None else None
    return str(name) if isinstance(name, str) and name else hw_id.upper()


def _key_label(recipes: RecipesRepo, key: str) -> str:
    """A hardware_overrides key in words: a hardware id, a generation or a brand."""
    if key in recipes.hardware:
        return hw_label(recipes, key)
    return {"amd": "AMD", "nvidia": "NVIDIA", "intel": "Intel", "default": "default"}.get(
        key, key.capitalize()
    )


def scope_of(path: NodePath, recipes: RecipesRepo) -> str:
    """Which renderings draw from ``path``, in words (the regression matrix lists them)."""
    parts = [str(p) for p in path]
    if not parts:
        return "the whole recipe"
    head = parts[0]
    if head == "meta":
        return "recipe metadata (no rendering changes)"
    if head == "model" and len(parts) >= 3 and parts[1] == "docker_image":
        return f"every {_key_label(recipes, parts[2])} rendering"
    if head == "model":
        return "every rendering of the recipe"
    if head == "hardware_overrides" and len(parts) > 1:
        return f"every {_key_label(recipes, parts[1])} rendering"
    if head == "strategy_overrides" and len(parts) > 1:
        if len(parts) > 3 and parts[2] == "hardware_overrides":
            return f"{_key_label(recipes, parts[3])} + {parts[1]} only"
        return f"every {parts[1]} rendering"
    if head == "variants" and len(parts) > 1:
        return f"variant {parts[1]}" + (
            f" on {_key_label(recipes, parts[3])}"
            if len(parts) > 3 and parts[2] == "hardware_overrides"
            else ""
        )
    if head == "features" and len(parts) > 1:
        where = ""
        if "hardware_overrides" in parts:
            where = f" on {_key_label(recipes, parts[parts.index('hardware_overrides') + 1])}"
        return f"renderings with {parts[1]}{where}"
    return "renderings drawing from it"


def text_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def bench_value_text(diff: FlagDiff) -> str | None:
    """The value as the benchmark spells it (``--x v`` or ``--x=v``); None for a bare flag."""
    tokens = diff.bench_tokens
    if field_of_whole_json(diff):
        # one field of a JSON the benchmark passes whole: the field's own value, for the
        # dotted flag (``--attention-config.use_prefill_query_quantization true``)
        value = diff.bench_value
        if isinstance(value, str) and not _json_scalar(value):
            return value
        return json.dumps(value, separators=(",", ":"))
    if diff.benchmark_only_keys and isinstance(diff.bench_value, Mapping):
        kept = {k: v for k, v in diff.bench_value.items() if k not in diff.benchmark_only_keys}
        return json.dumps(kept, separators=(",", ":"))
    if len(tokens) == 2:
        return one_line_json(tokens[1])
    if len(tokens) == 1 and tokens[0].startswith("-") and "=" in tokens[0]:
        return one_line_json(tokens[0].split("=", 1)[1])
    return None


def bench_field_tokens(diff: FlagDiff) -> tuple[str, ...]:
    """The benchmark's tokens for ``diff``; for one field of a JSON the benchmark passes whole,
    the field's own dotted flag and value (``--attention-config.use_prefill_query_quantization
    true``), so each field is shown, and classed, apart from its neighbours."""
    if field_of_whole_json(diff):
        return (diff.flag, bench_value_text(diff) or "")
    return tuple(diff.bench_tokens)


def one_line_json(value: str) -> str:
    """A JSON value a script pretty-prints over several lines, as one compact line (the
    recipes write their JSON arguments on one line; vLLM reads both as the same data).
    Anything else as it is."""
    if "\n" not in value:
        return value
    try:
        data = json.loads(value)
    except ValueError:
        return value
    return json.dumps(data, separators=(",", ":")) if isinstance(data, dict | list) else value


def field_of_whole_json(diff: FlagDiff) -> bool:
    """``diff`` is one field (``--x.key``) of a config the benchmark spells as a whole
    (``--x '{"key": …}'``): its tokens carry the whole JSON, not the field's value."""
    if diff.kind != "flag" or "." not in diff.flag or not diff.bench_tokens:
        return False
    spelled = option_name(diff.bench_tokens[0])
    return canonical_flag(spelled) != canonical_flag(diff.flag)


def _json_scalar(text: str) -> bool:
    """vLLM reads a dotted flag's value as JSON first: ``"8"`` must be quoted to stay a string."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def has_placeholder(*values: str | None) -> bool:
    return any(v is not None and PLACEHOLDER_RE.search(v) for v in values)


def bench_spans(launch: LaunchLine, diff: FlagDiff) -> tuple[SourceSpan, ...]:
    """Script lines of the benchmark tokens of ``diff`` (where the flag and value are set)."""
    argv = launch.argv
    sources = launch.argv_sources
    tokens = diff.bench_tokens
    if not tokens or diff.kind != "flag" or len(sources) != len(argv):
        return ()
    for start in range(len(argv) - len(tokens) + 1):
        if tuple(argv[start : start + len(tokens)]) == tuple(tokens):
            return tuple(dict.fromkeys(sources[start : start + len(tokens)]))
    return ()


# --- who draws from a node -------------------------------------------------------------------


def rendering_draws(rendering: Rendering | None) -> frozenset[str]:
    """Every recipe node a rendering takes a token, env var or image from."""
    if rendering is None:
        return frozenset()
    found: set[str] = set()
    for command in rendering.commands:
        for unit in command.args:
            found.add(unit.path)
            if unit.value is not None and unit.path.endswith("]"):
                head, _, index = unit.path.rpartition("[")
                if is_integer(index[:-1]):
                    found.add(f"{head}[{int(index[:-1]) + 1}]")
        found.update(origin.path for origin in command.env_origins)
    if rendering.image_origin:
        found.add(rendering.image_origin)
    return frozenset(found)


def recipe_renderings(
    recipes: RecipesRepo, recipe_path: str, feature_sets: Sequence[Coordinates] = ()
) -> list[tuple[RenderingKey, frozenset[str]]]:
    """Every rendering of one recipe the JSON API publishes (default features), and each of
    them with the feature sets of ``feature_sets`` (the benchmarked profiles), with the nodes
    each draws from."""
    out: list[tuple[RenderingKey, frozenset[str]]] = []
    for _, api in api_coordinates(build_api(recipes, only_recipes={recipe_path})):
        for extra in (None, *feature_sets):
            coordinates = api
            if extra is not None:
                coordinates = replace(api, features=extra.features, modes=extra.modes)
            try:
                rendering = render(recipes, coordinates.request())
            except RecipeSyncError:
                continue
            variant, hardware, strategy = coordinates.rendering_key
            out.append(
                ((variant or "default", hardware, strategy or ""), rendering_draws(rendering))
            )
    return out


def json_holder(units: Sequence[ArgOrigin], diff: FlagDiff) -> ArgOrigin | None:
    """The recipe's unit that spells, as one JSON object, the config ``diff`` is a field of
    (``--compilation-config '{…}'`` for ``--compilation-config.mode``); None otherwise."""
    if diff.kind != "flag" or "." not in diff.flag or not diff.flag.startswith("--"):
        return None
    prefix = canonical_flag(diff.flag.split(".", 1)[0])
    for unit in units:
        if unit.flag is None or "." in unit.flag or canonical_flag(unit.flag) != prefix:
            continue
        if not in_recipe(unit.path) or unit.value is None:
            return None
        try:
            value = json.loads(unit.value)
        except ValueError:
            return None
        return unit if isinstance(value, dict) else None
    return None


_LOOPBACK = re.compile(r"(?<![\w.])(localhost|127\.0\.0\.1|0\.0\.0\.0|\[?::1\]?)(?![\w.])")


def host_local(value: Any) -> str | None:
    """Why a benchmark value belongs to the benchmark host, not to a recipe (None when it does
    not): an absolute path on that machine (a staged draft model, a cache directory) or a
    loopback address. A JSON value is looked into: ``{"model": "/data/models/…"}`` is."""
    if isinstance(value, Mapping):
        return next((r for v in value.values() if (r := host_local(v)) is not None), None)
    if isinstance(value, list | tuple):
        return next((r for v in value if (r := host_local(v)) is not None), None)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text[:1] in "{[":
        try:
            return host_local(json.loads(text))
        except ValueError:
            pass
    if text.startswith("/") and "/" in text[1:] and " " not in text:
        return f"{text} is a path on the benchmark host"
    found = _LOOPBACK.search(text)
    if found:
        return f"{found.group(1)} is the benchmark host's own address"
    return None


def only_host_copies(bench: Any, recipe: Any) -> bool:
    """``bench`` is ``recipe`` but for absolute paths on the benchmark host that end in the
    recipe's name (``/data/models/MiniMax-M3-EAGLE3`` for ``Inferact/MiniMax-M3-EAGLE3``: a
    staged copy of the same checkpoint), looking into JSON: the benchmark ran the recipe's
    value from a local copy."""
    bench, recipe = parsed_json(bench), parsed_json(recipe)
    if isinstance(bench, Mapping) and isinstance(recipe, Mapping):
        return bench.keys() == recipe.keys() and all(
            only_host_copies(bench[k], recipe[k]) for k in bench
        )
    if isinstance(bench, list | tuple) and isinstance(recipe, list | tuple):
        return len(bench) == len(recipe) and all(map(only_host_copies, bench, recipe))
    if isinstance(bench, str) and isinstance(recipe, str) and bench != recipe:
        name = recipe.rstrip("/").rsplit("/", 1)[-1]
        local = host_local(bench) is not None and bench.startswith("/")
        return local and bool(name) and bench.rstrip("/").rsplit("/", 1)[-1] == name
    return bool(bench == recipe)


def parsed_json(value: Any) -> Any:
    """A JSON object or list spelled as text, parsed; anything else as it is."""
    if isinstance(value, str) and value.strip()[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value

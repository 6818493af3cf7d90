"""``recipe-sync render``: the JSON API for a whole corpus, or one/many profiles with provenance.

    recipe-sync render --recipes DIR --api-out OUT
    recipe-sync render --recipes DIR --model HF_ID --hardware H [--strategy S] [--variant V]
                       [--features a,b | --default-features] [--mode FEATURE=MODE]...
                       [--nodes N] [--format md|json] [--out FILE]
    recipe-sync render --recipes DIR --batch IN.jsonl

The recipes are read at --recipes-ref (default: HEAD of a git repository; a plain
directory as it is). With --api-out a recipe file that does not load is named on stderr and
left out, the others are written (exit 1). Hardware ids are matched case-insensitively
(MI355X = mi355x); an unknown model, hardware, strategy or feature names the closest known
ones. Rendering hardware the recipe marks unsupported prints the command with a warning on
stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bot.commands.grammar import (
    add_command,
    add_output,
    add_repo,
    casefold_choice,
    note,
    open_repo,
    output_format,
    unknown,
    write,
)
from bot.digits import is_integer
from bot.errors import InputError, Location, RecipeSyncError
from bot.words import count

REQUEST_KEYS = {
    "model",
    "hardware",
    "strategy",
    "variant",
    "features",
    "modes",
    "nodes",
    "pd_nodes",
    "serving_strategy",
    "instances",
    "advanced_args",
    "kv_offload",
    "pd_kv_store",
}


def register(subparsers: Any) -> None:
    summary = "render recipes like the upstream JSON API, or one profile with provenance"
    parser = add_command(subparsers, "render", __doc__, summary)
    add_repo(parser, "recipes")
    parser.add_argument("--ref", dest="ref_alias", help=argparse.SUPPRESS)  # old spelling
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--api-out", type=Path, metavar="OUT", help="write the whole JSON API")
    mode.add_argument("--model", help="hf_id of a recipe, or a promoted variant's model_id")
    mode.add_argument("--batch", type=Path, metavar="IN.jsonl", help="one request per line")
    parser.add_argument("--hardware", help="taxonomy hardware id (with --model)")
    parser.add_argument("--strategy", help="strategy id (default: the API's recommendation)")
    parser.add_argument("--variant", help="variant key (default: the API's)")
    features = parser.add_mutually_exclusive_group()
    features.add_argument(
        "--features", help="comma-separated enabled features, emitted in this order"
    )
    features.add_argument(
        "--default-features", action="store_true", help="the API's default features (default)"
    )
    parser.add_argument(
        "--mode", action="append", default=[], metavar="FEATURE=MODE", help="select a mode"
    )
    parser.add_argument("--nodes", type=int, help="node count (per instance for Mooncake)")
    parser.add_argument(
        "--pd-nodes", metavar="prefill=N,decode=M", help="pd_cluster nodes per role (0: co-located)"
    )
    parser.add_argument("--serving-strategy", help="Mooncake: the serving strategy")
    parser.add_argument("--instances", type=int, help="Mooncake: number of vLLM instances")
    parser.add_argument(
        "--advanced-arg",
        action="append",
        default=[],
        metavar="TOKEN",
        help="an 'advanced' extra token (repeat; use --advanced-arg=--flag for flags)",
    )
    parser.add_argument("--kv-offload", help="a taxonomy kv_offload option (site only)")
    parser.add_argument("--pd-kv-store", help="a Mooncake deployment composed with pd_cluster")
    add_output(
        parser,
        "write the single rendering to this file (default: stdout)",
        formats=("md", "json"),
    )
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # = --format json
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes for --api-out (default 2; 1: one process, parsing included)",
    )
    parser.set_defaults(func=run)


def _nodes(nodes: int | None) -> str:
    return "the default node count" if nodes is None else count(nodes, "node")


def run(args: argparse.Namespace) -> int:
    from bot.recipes.repo import load_recipes

    if args.ref_alias:
        note("warning: --ref is deprecated; use --recipes-ref")
        args.recipes_ref = args.recipes_ref or args.ref_alias
    source = open_repo(args.recipes, args.recipes_ref, "--recipes")
    if args.api_out is not None:
        return _api_out(source, args.api_out, args.workers)
    repo = load_recipes(source)
    if args.batch is not None:
        return _batch(repo, args.batch)
    if not args.hardware:
        raise InputError(Location("command line", "--hardware"), "required with --model")
    return _single(repo, args)


def _api_out(source: Any, out: Path, workers: int | None) -> int:
    """The whole JSON API of every recipe that loads; one that does not is named on stderr
    and left out (exit 1), so one malformed file does not cost the other recipes."""
    from bot.recipes.api import write_api
    from bot.recipes.tolerant import load_recipes_tolerant
    from bot.sources import DirectorySource

    # this process runs no threads, so it may fork to parse (unless asked for one process);
    # a git tree is read through one `git cat-file` process a child must not share
    two_way = isinstance(source, DirectorySource) and workers != 1
    loaded = load_recipes_tolerant(source, two_way=two_way)
    if loaded.repo is None:  # the taxonomy or strategies do not load: nothing to render
        print(f"recipe-sync: error: {loaded.error}", file=sys.stderr)
        return 2
    summary = write_api(loaded.repo, out, workers=workers)
    for overwritten in summary.overwritten:
        print(f"recipe-sync: warning: promoted id rendered twice: {overwritten}", file=sys.stderr)
    for dropped in summary.dropped:
        print(f"recipe-sync: warning: not rendered (upstream throws): {dropped}", file=sys.stderr)
    for path, why in sorted(loaded.broken.items()):
        print(f"recipe-sync: error: {path} does not load, not written: {why}", file=sys.stderr)
    print(
        summary.line()
        + (f"; {count(len(loaded.broken), 'recipe')} did not load" if loaded.broken else "")
    )
    return 1 if loaded.broken else 0


def _modes(pairs: list[str]) -> dict[str, str]:
    modes = {}
    for pair in pairs:
        feature, sep, mode = pair.partition("=")
        if not sep or not feature or not mode:
            raise InputError(Location("command line", "--mode"), f"expected FEATURE=MODE: {pair}")
        modes[feature] = mode
    return modes


def _pd_nodes(text: str | None) -> dict[str, int] | None:
    if text is None:
        return None
    shape = {}
    for pair in text.split(","):
        role, _, count = pair.partition("=")
        if role not in ("prefill", "decode") or not is_integer(count):
            raise InputError(
                Location("command line", "--pd-nodes"), f"expected prefill=N,decode=M: {text}"
            )
        shape[role] = int(count)
    return shape


def _single(repo: Any, args: argparse.Namespace) -> int:
    from bot.recipes.render import RenderRequest, render, rendering_as_json

    features = None
    if args.features is not None:
        features = tuple(name for name in args.features.split(",") if name)
    hardware = check_names(repo, args, features)
    request = RenderRequest(
        model=args.model,
        hardware=hardware,
        strategy=args.strategy,
        variant=args.variant,
        features=features,
        modes=_modes(args.mode),
        nodes=args.nodes,
        pd_nodes=_pd_nodes(args.pd_nodes),
        serving_strategy=args.serving_strategy,
        instances=args.instances,
        advanced_args=tuple(args.advanced_arg),
        kv_offload=args.kv_offload,
        pd_kv_store=args.pd_kv_store,
    )
    rendering = render(repo, request)
    support = recipe_support(repo, rendering.recipe_path, hardware)
    if support == "unsupported":
        note(
            f"warning: {rendering.recipe_path} marks {hardware} unsupported "
            f"(meta.hardware.{hardware}); this command is rendered anyway, not a recommendation"
        )
    if args.json or output_format(args) == "json":
        write(args, json.dumps(rendering_as_json(rendering), ensure_ascii=False, indent=2) + "\n")
        return 0
    resolved = rendering.request
    lines = [
        f"# {rendering.recipe_path}: {resolved.model} on {resolved.hardware}, "
        f"{resolved.strategy}, variant {resolved.variant}, {_nodes(resolved.nodes)}, "
        f"features {','.join(resolved.features or ()) or '-'}",
        f"# image {rendering.image}  <- {rendering.image_origin}",
    ]
    if support == "unsupported":
        lines.append(f"# warning: {hardware} is marked unsupported by this recipe")
    for command in rendering.commands:
        lines.append(f"\n## {command.role}" + (f" (rank {command.rank})" if command.rank else ""))
        for origin in command.env_origins:
            lines.append(f"  env {origin.name}={origin.value}  <- {origin.path}")
        for unit in command.args:
            text = " ".join(part for part in (unit.flag, unit.value) if part is not None)
            shadowed = f"  (shadows {', '.join(unit.shadowed)})" if unit.shadowed else ""
            lines.append(f"  {text}  <- {unit.path}{shadowed}")
    write(args, "\n".join(lines) + "\n")
    return 0


def _model_ids(repo: Any) -> dict[str, Any]:
    """Every name --model accepts (a recipe's hf_id, a promoted variant's model_id) → recipe."""
    found: dict[str, Any] = {}
    for recipe in repo.recipes:
        found[recipe.hf_id] = recipe
        for variant in recipe.variants.values():
            model_id = variant.get("model_id") if isinstance(variant, dict) else None
            if isinstance(model_id, str):
                found.setdefault(model_id, recipe)
    return found


def check_names(repo: Any, args: argparse.Namespace, features: tuple[str, ...] | None) -> str:
    """The taxonomy's spelling of --hardware; an unknown name suggests the closest ones."""
    models = _model_ids(repo)
    if args.model not in models:
        raise unknown("model", args.model, models, "--model")
    hardware = casefold_choice(args.hardware, repo.hardware)
    if hardware is None:
        raise unknown("hardware", args.hardware, repo.hardware, "--hardware")
    if args.strategy is not None and args.strategy not in repo.strategies:
        raise unknown("strategy", args.strategy, repo.strategies, "--strategy")
    recipe = models[args.model]
    known = set(as_names(recipe.data.get("features"))) | set(
        as_names(recipe.data.get("opt_in_features"))
    )
    for feature in features or ():
        if known and feature not in known:
            raise unknown(f"feature of {recipe.path}", feature, known, "--features")
    return hardware


def as_names(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str)]
    return []


def recipe_support(repo: Any, recipe_path: str, hardware: str) -> str:
    """``meta.hardware.<hw>`` of the recipe rendered ("" when it does not say)."""
    recipe = repo.by_path.get(recipe_path)
    meta = recipe.data.get("meta") if recipe is not None else None
    table = meta.get("hardware") if isinstance(meta, dict) else None
    value = table.get(hardware) if isinstance(table, dict) else None
    return value if isinstance(value, str) else ""


def request_from_json(line: str, number: int) -> Any:
    """Parse and check one batch line into a RenderRequest."""
    from bot.recipes.render import RenderRequest

    where = Location(f"batch line {number}")
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise InputError(where, f"not JSON: {err.msg}") from err
    if not isinstance(data, dict):
        raise InputError(where, "expected a JSON object")
    unknown = sorted(set(data) - REQUEST_KEYS)
    if unknown:
        raise InputError(where, f"unknown keys {', '.join(unknown)}")

    def text(key: str, required: bool = False) -> str | None:
        value = data.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            raise InputError(Location(where.file, key), "expected a non-empty string")
        return value

    features = data.get("features")
    if features is not None and (
        not isinstance(features, list) or not all(isinstance(f, str) for f in features)
    ):
        raise InputError(Location(where.file, "features"), "expected a list of names or null")
    modes = data.get("modes") or {}
    if not isinstance(modes, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in modes.items()
    ):
        raise InputError(Location(where.file, "modes"), "expected an object of feature: mode")
    for key in ("nodes", "instances"):
        value = data.get(key)
        if value is not None and (type(value) is not int or value < 1):
            raise InputError(Location(where.file, key), "expected a positive integer or null")
    pd_nodes = data.get("pd_nodes")
    if pd_nodes is not None and (
        not isinstance(pd_nodes, dict)
        or not set(pd_nodes) <= {"prefill", "decode"}
        or not all((type(v) is int and v >= 0) or isinstance(v, dict) for v in pd_nodes.values())
    ):
        raise InputError(Location(where.file, "pd_nodes"), "expected {prefill/decode: nodes}")
    advanced = data.get("advanced_args") or []
    if not isinstance(advanced, list) or not all(isinstance(t, str) for t in advanced):
        raise InputError(Location(where.file, "advanced_args"), "expected a list of strings")
    return RenderRequest(
        model=text("model", required=True) or "",
        hardware=text("hardware", required=True) or "",
        strategy=text("strategy"),
        variant=text("variant"),
        features=tuple(features) if features is not None else None,
        modes=modes,
        nodes=data.get("nodes"),
        pd_nodes=pd_nodes,
        serving_strategy=text("serving_strategy"),
        instances=data.get("instances"),
        advanced_args=tuple(advanced),
        kv_offload=text("kv_offload"),
        pd_kv_store=text("pd_kv_store"),
    )


def _batch(repo: Any, path: Path) -> int:
    from bot.recipes.render import render, rendering_as_json

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(Location(str(path)), f"cannot read batch file: {err}") from err
    failed = 0
    for number, line in enumerate(lines, start=1):
        try:
            if not line.strip():
                raise InputError(Location(f"batch line {number}"), "empty line")
            result = rendering_as_json(render(repo, request_from_json(line, number)))
        except RecipeSyncError as err:
            failed += 1
            message = str(err)
            if not message.startswith("batch line"):
                message = f"batch line {number}: {message}"
            result = {"error": message}
        print(json.dumps(result, ensure_ascii=False))
    return 1 if failed else 0

"""Feature order: an explicit list renders in the caller's order, the API's defaults in
declaration order (upstream ``resolveCommand`` iterates ``enabledFeatures`` as given)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.commands.main import main
from bot.recipes import RecipesRepo, RenderRequest, build_api, render

MakeRepo = Callable[..., RecipesRepo]
TWO_FEATURES = """
meta: {title: Two, tasks: [text]}
model: {model_id: test/Two, base_args: ["--a", "1"]}
variants:
  default: {vram_minimum_gb: 10}
compatible_strategies: [single_node_tp]
features:
  first: {args: ["--first"]}
  second: {args: ["--second", "2"]}
  third: {args: ["--first", "3", "pos"]}
opt_in_features: [third]
"""


def _tail(repo: RecipesRepo, features: tuple[str, ...] | None) -> list[str]:
    request = RenderRequest(
        model="test/Two", hardware="h200", strategy="single_node_tp", features=features
    )
    argv: list[str] = render(repo, request).json["argv"]
    return argv[argv.index("--tensor-parallel-size") + 2 :]


def test_explicit_features_render_in_the_callers_order(make_repo: MakeRepo) -> None:
    repo = make_repo({"models/test/Two.yaml": TWO_FEATURES})
    assert _tail(repo, ("first", "second")) == ["--first", "--second", "2"]
    assert _tail(repo, ("second", "first")) == ["--second", "2", "--first"]
    # last-wins de-duplication then follows the caller's order too
    assert _tail(repo, ("third", "second", "first")) == ["pos", "--second", "2", "--first"]
    assert _tail(repo, ("first", "second", "third")) == ["--second", "2", "--first", "3", "pos"]
    # the resolved request echoes the caller's order
    request = RenderRequest(model="test/Two", hardware="h200", features=("second", "first"))
    assert render(repo, request).request.features == ("second", "first")


def test_default_features_stay_in_declaration_order(make_repo: MakeRepo) -> None:
    repo = make_repo({"models/test/Two.yaml": TWO_FEATURES})
    assert _tail(repo, None) == ["--first", "--second", "2"]
    (rendering,) = (v for k, v in build_api(repo).items() if k == "test/Two/hw/h200.json")
    assert rendering["argv"][-3:] == ["--first", "--second", "2"]


def test_cli_and_batch_keep_the_order(
    make_repo: MakeRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"models/test/Two.yaml": TWO_FEATURES})
    common = ["render", "--recipes", repo.label]
    single = ["--model", "test/Two", "--hardware", "h200", "--json"]
    assert main([*common, *single, "--features", "second,first"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["request"]["features"] == ["second", "first"]
    assert found["rendering"]["argv"][-3:] == ["--second", "2", "--first"]
    assert [a["path"] for a in found["commands"][0]["args"]][-2:] == [
        "features.second.args[0]",
        "features.first.args[0]",
    ]
    batch = tmp_path / "in.jsonl"
    line = {"model": "test/Two", "hardware": "h200", "features": ["second", "first"]}
    batch.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert main([*common, "--batch", str(batch)]) == 0
    (result,) = [json.loads(text) for text in capsys.readouterr().out.splitlines()]
    assert result["rendering"]["argv"][-3:] == ["--second", "2", "--first"]


# ---- against the upstream builder's own resolveCommand (when node and its tree are here) ----

BUILDER_ENV = "RECIPE_SYNC_BUILDER_TREE"
PROBE = """
import fs from "fs";
import path from "path";
import { createRequire } from "module";
import { pathToFileURL } from "url";
const [tree, corpus, casesJson] = process.argv.slice(2);
const yaml = createRequire(path.join(tree, "package.json"))("js-yaml");
const lib = path.join(tree, "src/lib/command-synthesis.js");
const { resolveCommand } = await import(pathToFileURL(lib).href);
const load = (f) => yaml.load(fs.readFileSync(f, "utf8"));
const strategies = {};
for (const f of fs.readdirSync(path.join(corpus, "strategies"))) {
  if (!f.endsWith(".yaml")) continue;
  const s = load(path.join(corpus, "strategies", f));
  strategies[s.name] = s;
}
const taxonomy = load(path.join(corpus, "taxonomy.yaml"));
const out = JSON.parse(casesJson).map(([file, variant, strategy, hw, features]) =>
  resolveCommand(load(path.join(corpus, file)), variant, strategy, hw, features,
                 strategies, taxonomy).argv);
process.stdout.write(JSON.stringify(out));
"""
# (recipe file, hf id, variant, strategy, hardware, features in a non-declaration order)
UPSTREAM_CASES = [
    (
        "models/baidu/ERNIE-4.5-VL-28B-A3B-PT.yaml",
        "baidu/ERNIE-4.5-VL-28B-A3B-PT",
        "default",
        "single_node_tp",
        "h200",
        ("encoder_parallel", "text_only"),
    ),
    (
        "models/baidu/ERNIE-4.5-VL-28B-A3B-PT.yaml",
        "baidu/ERNIE-4.5-VL-28B-A3B-PT",
        "default",
        "single_node_tp",
        "h200",
        ("text_only", "encoder_parallel"),
    ),
    (
        "models/PaddlePaddle/PaddleOCR-VL.yaml",
        "PaddlePaddle/PaddleOCR-VL",
        "default",
        "single_node_tp",
        "b200",
        ("encoder_parallel", "text_only"),
    ),
]


def builder_tree() -> Path | None:
    """The upstream recipes source tree named by $RECIPE_SYNC_BUILDER_TREE, if usable."""
    named = os.environ.get(BUILDER_ENV)
    if not named:
        return None
    tree = Path(named)
    needed = ("src/lib/command-synthesis.js", "node_modules/js-yaml/package.json")
    return tree if all((tree / part).is_file() for part in needed) else None


def test_upstream_resolve_command_keeps_the_callers_order(
    corpus: Path, corpus_repo: RecipesRepo, tmp_path: Path
) -> None:
    tree = builder_tree()
    if shutil.which("node") is None or tree is None:
        pytest.skip(
            f"needs node and ${BUILDER_ENV} = a vllm-project/recipes checkout with "
            "src/lib/command-synthesis.js and node_modules/js-yaml (npm install js-yaml)"
        )
    probe = tmp_path / "probe.mjs"
    probe.write_text(PROBE, encoding="utf-8")
    cases = [[f, v, s, h, list(feats)] for f, _, v, s, h, feats in UPSTREAM_CASES]
    done = subprocess.run(
        ["node", "--no-warnings", str(probe), str(tree), str(corpus), json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    upstream = json.loads(done.stdout)
    ours = [
        render(
            corpus_repo,
            RenderRequest(model=m, hardware=h, strategy=s, variant=v, features=feats),
        ).json["argv"]
        for _, m, v, s, h, feats in UPSTREAM_CASES
    ]
    assert ours == upstream
    # and the order is really exercised: the two ERNIE orders differ
    assert upstream[0] != upstream[1] and sorted(upstream[0]) == sorted(upstream[1])

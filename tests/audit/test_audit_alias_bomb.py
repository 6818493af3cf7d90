"""``recipe-sync audit`` bounds YAML alias expansion like every other reader: a master config
that is a billion-laughs document is left out in seconds (and within a memory cap: walking
the expansion would need gigabytes), the rest is audited and reported, and the file is named
in the report and on stderr, exit 2."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from bot.fixtures import SeedFixtures
from bot.sources import GitTreeSource
from tests.audit.test_audit_robust import export

ROOT = Path(__file__).resolve().parents[2]

BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)
    )
    + "lol-fp8-b200-vllm:\n  image: *i\n"
)


def _capped() -> None:
    cap = 1024**3  # 1 GiB of address space: enough for the audit, not for the expansion
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def test_an_alias_bomb_master_config_is_named_and_the_rest_audited(
    seed: SeedFixtures, tmp_path: Path
) -> None:
    bench = export(GitTreeSource(seed.bench_repo, seed.bench_pr_head), tmp_path / "bench")
    recipes = export(GitTreeSource(seed.recipes_repo, seed.recipes_base), tmp_path / "recipes")
    assert (bench / "configs/amd-master.yaml").is_file()
    (bench / "configs/nvidia-master.yaml").write_text(BOMB)
    started = time.monotonic()
    command = ["audit", "--bench-repo", str(bench), "--recipes", str(recipes), "--format", "json"]
    result = subprocess.run(
        [sys.executable, "-m", "bot", *command],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_capped,
    )
    assert time.monotonic() - started < 60
    assert result.returncode == 2, result.stderr[-2000:]  # was 2 with no report at all
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr[-2000:]
    assert errors[0].startswith("recipe-sync: error: configs/nvidia-master.yaml"), errors[0]
    assert "aliases expand to more than" in errors[0]
    report = json.loads(result.stdout)  # what it could read: the other master config
    assert report["rows"], "the readable master config was not audited"
    assert {row["config_file"] for row in report["rows"]} == {"configs/amd-master.yaml"}
    assert len(report["unread"]) == 1 and "configs/nvidia-master.yaml" in report["unread"][0]
    assert any("aliases expand" in warning for warning in report["warnings"])

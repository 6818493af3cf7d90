"""``recipe-sync audit`` bounds YAML alias expansion like every other reader: a master config
that is a billion-laughs document ends the audit with one line naming the file, exit 2, in
seconds (and within a memory cap: walking the expansion would need gigabytes)."""

from __future__ import annotations

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


def test_an_alias_bomb_master_config_is_one_line_and_exit_2(
    seed: SeedFixtures, tmp_path: Path
) -> None:
    bench = export(GitTreeSource(seed.bench_repo, seed.bench_pr_head), tmp_path / "bench")
    recipes = export(GitTreeSource(seed.recipes_repo, seed.recipes_base), tmp_path / "recipes")
    (bench / "configs/nvidia-master.yaml").write_text(BOMB)
    started = time.monotonic()
    command = ["audit", "--bench-repo", str(bench), "--recipes", str(recipes)]
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
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("recipe-sync: error: configs/nvidia-master.yaml"), lines[0]
    assert "aliases expand to more than" in lines[0]
    assert result.stdout == ""

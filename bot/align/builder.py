"""Run the recipes repository's own builder on the edited tree (imperative shell).

Where ``node`` and ``scripts/build-recipes-api.mjs`` exist, the edited tree is written to a
temporary directory and the builder runs there (argument list, no shell, a timeout); its
summary line is reported and a failing builder blocks the PR. Otherwise recipe-sync's own
JSON API build (``write_api``) of the edited tree is reported, with why the builder did not
run. The builder is the recipes repository's code at its base commit, never anything from a
benchmark PR.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from bot.align.regression import BuilderReport
from bot.recipes import RecipesRepo, write_api
from bot.sources import FileSource

BUILDER = "scripts/build-recipes-api.mjs"
TIMEOUT_SECONDS = 300.0
MISSING_DEPENDENCY = ("ERR_MODULE_NOT_FOUND", "Cannot find package", "Cannot find module")


def own_summary(after: RecipesRepo) -> str:
    """``write_api``'s summary line for the edited tree (written to memory-backed /dev/shm
    when there is one: ~15k small files for a full corpus)."""
    shm = Path("/dev/shm")
    where = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="recipe-sync-api-", dir=where) as out:
        return write_api(after, Path(out), workers=1).line()


def _summary_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if "JSON API" in line:
            return line
    return lines[-1] if lines else "(no output)"


def _materialise(source: FileSource, edited: Mapping[str, bytes], root: Path) -> None:
    for path in source.iter_files(""):
        if path.startswith(("node_modules/", "public/", ".next/")):
            continue
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes(path))
    for path, data in edited.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def run_builder(
    source: FileSource,
    edited: Mapping[str, bytes],
    after: RecipesRepo,
    *,
    node: str | None = None,
    node_modules: Path | None = None,
    timeout: float = TIMEOUT_SECONDS,
) -> BuilderReport:
    """The builder's verdict on ``source`` with ``edited`` files written over it."""
    node = node if node is not None else shutil.which("node")
    if not source.exists(BUILDER):
        reason = f"not run: {BUILDER} is not in the recipes tree"
        return BuilderReport(False, True, own_summary(after), reason)
    if node is None:
        return BuilderReport(False, True, own_summary(after), "not run: node is not installed")
    with tempfile.TemporaryDirectory(prefix="recipe-sync-build-") as tmp:
        root = Path(tmp)
        _materialise(source, edited, root)
        if node_modules is not None and node_modules.is_dir():
            os.symlink(node_modules, root / "node_modules")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "CI": "1"}
        try:
            done = subprocess.run(
                [node, BUILDER],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return BuilderReport(True, False, "", f"timed out after {timeout:g} s")
        except OSError as err:
            reason = f"not run: node could not start ({err.strerror})"
            return BuilderReport(False, True, own_summary(after), reason)
    output = done.stdout + "\n" + done.stderr
    if done.returncode == 0:
        return BuilderReport(True, True, _summary_line(done.stdout), "")
    if any(marker in output for marker in MISSING_DEPENDENCY):
        reason = "not run: its node dependencies are not installed (run pnpm install)"
        return BuilderReport(False, True, own_summary(after), reason)
    tail = " | ".join(line for line in done.stderr.strip().splitlines()[-3:] if line.strip())
    return BuilderReport(True, False, "", f"exit status {done.returncode}: {tail[:500]}")

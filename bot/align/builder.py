"""Run the recipes repository's own builder on the edited tree (imperative shell).

Where ``node`` and ``scripts/build-recipes-api.mjs`` exist, the edited tree is written to a
temporary directory and the builder runs there (argument list, no shell, a timeout); its
summary line is reported and a failing builder blocks the PR. Otherwise recipe-sync's own
JSON API build (``write_api``) of the edited tree is reported, with why the builder did not
run. The builder is the recipes repository's code at its base commit, never anything from a
benchmark PR.

recipe-sync's own build covers the edited recipes only (every file a recipe's renderings
depend on besides itself is shared and unedited, so no other recipe's output can move); an
edit outside the recipes builds the whole tree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path

from bot.align.regression import BuilderReport
from bot.errors import InputError
from bot.recipes import RecipesRepo, write_api
from bot.sources import FileSource

BUILDER = "scripts/build-recipes-api.mjs"
TIMEOUT_SECONDS = 300.0
MISSING_DEPENDENCY = ("ERR_MODULE_NOT_FOUND", "Cannot find package", "Cannot find module")


def own_summary(after: RecipesRepo, edited: Collection[str]) -> str:
    """What was built and ``write_api``'s summary line for it: the edited recipes, or the
    whole tree when an edited file is not a recipe (written to memory-backed /dev/shm when
    there is one)."""
    only = set(edited) if edited and set(edited) <= set(after.by_path) else None
    scope = "the edited tree" if only is None else "the edited recipe" + "s" * (len(only) > 1)
    shm = Path("/dev/shm")
    where = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="recipe-sync-api-", dir=where) as out:
        return f"{scope}: {write_api(after, Path(out), only_recipes=only, workers=1).sentence()}"


NOT_INSTALLED = "not run: its node dependencies are not installed (run pnpm install)"
# `import x from "pkg"`, `import {a} from 'pkg/sub'`, `import "pkg"`: static ES imports are
# resolved before the script runs, so one the tree cannot resolve fails it deterministically
_STATIC_IMPORT = re.compile(r"""^\s*import\s+(?:[^'";]*?\s+from\s+)?["']([^"']+)["']""", re.M)


def missing_packages(source: FileSource, node_modules: Path | None) -> tuple[str, ...]:
    """The npm dependencies the builder imports statically when there is no ``node_modules``
    to resolve them from: the builder cannot start, so the tree need not be written out."""
    if (node_modules is not None and node_modules.is_dir()) or not source.exists("package.json"):
        return ()
    try:
        manifest = json.loads(source.read_bytes("package.json"))
    except (InputError, ValueError):
        return ()
    if not isinstance(manifest, dict):
        return ()
    declared: set[str] = set()
    for field in ("dependencies", "devDependencies"):
        if isinstance(manifest.get(field), dict):
            declared.update(manifest[field])
    builder = source.read_bytes(BUILDER).decode("utf-8", errors="replace")
    imported = (_package_of(m.group(1)) for m in _STATIC_IMPORT.finditer(builder))
    return tuple(dict.fromkeys(name for name in imported if name in declared))


def _package_of(specifier: str) -> str:
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") else parts[0]


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
        return BuilderReport(False, True, own_summary(after, edited), reason)
    if node is None:
        reason = "not run: node is not installed"
        return BuilderReport(False, True, own_summary(after, edited), reason)
    if missing_packages(source, node_modules):
        return BuilderReport(False, True, own_summary(after, edited), NOT_INSTALLED)
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
            return BuilderReport(False, True, own_summary(after, edited), reason)
    output = done.stdout + "\n" + done.stderr
    if done.returncode == 0:
        return BuilderReport(True, True, _summary_line(done.stdout), "")
    if any(marker in output for marker in MISSING_DEPENDENCY):
        return BuilderReport(False, True, own_summary(after, edited), NOT_INSTALLED)
    tail = " | ".join(line for line in done.stderr.strip().splitlines()[-3:] if line.strip())
    return BuilderReport(True, False, "", f"exit status {done.returncode}: {tail[:500]}")

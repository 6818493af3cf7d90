"""Turn the saved-run templates under ``fixtures/evidence/`` into a ``--from-dir`` directory.

Template files may contain ``{{NAME}}`` placeholders; :func:`materialise` copies the tree and
substitutes them, so the project's fixture builder can point the saved runs at the real SHAs
of the benchmark git repository it generates. Placeholders the caller does not pass fall back
to :data:`SEED_DEFAULTS` (the seed PR's own values); an unknown one is an error.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from bot.errors import InputError, Location


def _fixtures_dir() -> Path:
    """The checkout's ``fixtures/evidence``, else the copy bundled in the wheel."""
    package = Path(__file__).resolve().parent.parent
    candidates = (package.parent / "fixtures", package / "_bundled" / "fixtures")
    for candidate in candidates:
        if (candidate / "evidence").is_dir():
            return candidate / "evidence"
    return candidates[0] / "evidence"


FIXTURES_DIR = _fixtures_dir()
SEED_TEMPLATE_DIR = FIXTURES_DIR / "seed"

# The seed PR (SemiAnalysisAI/InferenceX#3058); the run head is shortened in the seed text
# (ab76c131) and completed here with made-up digits, as is the earlier head of the PR.
SEED_DEFAULTS: Mapping[str, str] = {
    "BENCH_REPO": "SemiAnalysisAI/InferenceX",
    "PR_NUMBER": "3058",
    "PR_BRANCH": "dsv41flash-mi355x-ck-moe",
    "PR_HEAD_SHA": "559ef7560a74d0fb8da64fdfc0c357ad2fc33c4f",
    "RUN_HEAD_SHA": "ab76c131f0e2d4a6b8c0e1f3a5b7d9e1f2a4c6e8",
    "OLD_HEAD_SHA": "3f1c9a7e0b6d4c2a8e5f7b9d1c3a5e7f9b2d4c6e",
    "BASE_SHA": "8d2e4f6a0b1c3e5d7f9a1b3c5e7d9f0a2b4c6d8e",
}

_PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")


def substitute(text: str, values: Mapping[str, str], label: str = "<template>") -> str:
    """``text`` with every ``{{NAME}}`` replaced; :class:`InputError` names an unknown one."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in values:
            return values[name]
        if name in SEED_DEFAULTS:
            return SEED_DEFAULTS[name]
        line = text.count("\n", 0, match.start()) + 1
        raise InputError(Location(label, line=line), f"unknown placeholder {{{{{name}}}}}")

    return _PLACEHOLDER.sub(replace, text)


def materialise(template_dir: Path, out_dir: Path, values: Mapping[str, str]) -> Path:
    """Copy ``template_dir`` to ``out_dir`` substituting placeholders in every file; return
    ``out_dir``. Existing files in ``out_dir`` are overwritten."""
    if not template_dir.is_dir():
        raise InputError(Location(str(template_dir)), "template directory does not exist")
    for source in sorted(template_dir.rglob("*")):
        target = out_dir / source.relative_to(template_dir)
        if source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            text = source.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            shutil.copyfile(source, target)  # binary: copied as is
            continue
        target.write_text(substitute(text, values, str(source)), encoding="utf-8")
    return out_dir

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.errors import InputError
from bot.evidence.fixtures import SEED_DEFAULTS, SEED_TEMPLATE_DIR, materialise, substitute


def test_values_override_defaults_everywhere(tmp_path: Path) -> None:
    values = {
        "RUN_HEAD_SHA": "1" * 40,
        "PR_HEAD_SHA": "2" * 40,
        "PR_BRANCH": "b",
        "PR_NUMBER": "12",
        "BENCH_REPO": "o/r",
    }
    out = materialise(SEED_TEMPLATE_DIR, tmp_path / "out", values)
    assert out == tmp_path / "out"
    texts = [path.read_text() for path in out.rglob("*") if path.is_file()]
    assert all("{{" not in text for text in texts)
    pull = json.loads((out / "pull.json").read_text())
    assert (pull["number"], pull["head"]["sha"], pull["head"]["ref"]) == (12, "2" * 40, "b")
    runs = json.loads((out / "runs.json").read_text())["workflow_runs"]
    assert [run["head_sha"] for run in runs] == ["1" * 40, SEED_DEFAULTS["OLD_HEAD_SHA"]]
    assert runs[0]["html_url"] == "https://github.com/o/r/actions/runs/34710937012"
    for path in out.rglob("*.json"):
        json.loads(path.read_text())  # every template is valid JSON once filled


def test_unknown_placeholder_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"t\.txt:2: unknown placeholder \{\{NOPE\}\}"):
        substitute("a\n{{NOPE}}\n", {}, "t.txt")
    with pytest.raises(InputError, match="template directory does not exist"):
        materialise(tmp_path / "missing", tmp_path / "out", {})
    assert substitute("{{PR_NUMBER}} {{x}}", {}) == "3058 {{x}}"  # lower case is not a placeholder

"""The libyaml reader gives what ruamel.yaml's round-trip loader gave, data and line marks,
on the real master configs and perf changelogs of the InferenceX history (a sample of the
distinct blobs, the oldest and the newest included; all 1,633 distinct blobs were compared
once when the reader was written, with the same result). ruamel is the reference only here:
the code reads these files with :mod:`bot.yamlio.marked` alone."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from bot.errors import InputError
from bot.yamlio.marked import MarkedMap, MarkedSeq, parse_marked
from tests.shared import shared_dir

pytestmark = pytest.mark.slow

PATHS = ("perf-changelog.yaml", "configs/nvidia-master.yaml", "configs/amd-master.yaml")
SAMPLE = 4  # blobs per path, evenly spread over its history


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bundle = shared_dir() / "data" / "history" / "InferenceX-main-upto-2026-08-21.bundle"
    clone = tmp_path_factory.mktemp("ix") / "ix"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(clone)], check=True)
    return clone


def _blobs(repo: Path, path: str) -> list[str]:
    listing = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=", "--raw", "--no-abbrev", "main", "--", path],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    blobs = list(dict.fromkeys(line.split()[3] for line in listing.splitlines() if line))
    blobs = [b for b in blobs if set(b) != {"0"}]  # deletions
    step = max(1, (len(blobs) - 1) // (SAMPLE - 1))
    return list(dict.fromkeys([*blobs[::step], blobs[-1]]))


def _shape(value: Any) -> Any:
    """Data with its YAML type, whatever container or scalar class holds it."""
    if isinstance(value, dict):
        return ("map", [(_shape(k), _shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [_shape(v) for v in value])
    for kind in (bool, int, float, str, dt.date):
        if isinstance(value, kind):
            return (kind.__name__, kind(value) if kind is not dt.date else value.isoformat())
    return (type(value).__name__, value)


def _ruamel_lines(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if isinstance(value, CommentedMap):
        for key in value:
            line = value.lc.key(key)[0] + 1
            out += [(*path, key, line), *_ruamel_lines(value[key], (*path, key))]
    elif isinstance(value, CommentedSeq):
        for i, item in enumerate(value):
            out += [(*path, i, value.lc.item(i)[0] + 1), *_ruamel_lines(item, (*path, i))]
    return out


def _marked_lines(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if isinstance(value, MarkedMap):
        for key in value:
            out += [(*path, key, value.key_line(key)), *_marked_lines(value[key], (*path, key))]
    elif isinstance(value, MarkedSeq):
        for i, item in enumerate(value):
            out += [(*path, i, value.item_line(i)), *_marked_lines(item, (*path, i))]
    return out


@pytest.mark.parametrize("path", PATHS)
def test_same_data_and_lines_as_ruamel(bench: Path, path: str) -> None:
    blobs = _blobs(bench, path)
    assert len(blobs) >= 2
    for blob in blobs:
        text = subprocess.run(
            ["git", "-C", str(bench), "cat-file", "blob", blob], capture_output=True, check=True
        ).stdout.decode()
        try:
            expected = YAML(typ="rt").load(text)
        except Exception:  # a malformed blob of the history: both refuse it
            with pytest.raises(InputError, match="malformed YAML"):
                parse_marked(text, path)
            continue
        got = parse_marked(text, path)
        assert _shape(got) == _shape(expected), (path, blob)
        assert _marked_lines(got) == _ruamel_lines(expected), (path, blob)

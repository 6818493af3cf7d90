"""``recipe-sync migrate`` (compose.yaml runs it before serve and worker): the schema at the
newest revision, then exit; a database it cannot migrate is one line and exit 2."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory

from bot.commands.main import main
from bot.state.migrate import alembic_config

HEAD = ScriptDirectory.from_config(alembic_config()).get_current_head()


def test_migrate_brings_the_database_to_the_newest_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RECIPE_SYNC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert main(["migrate"]) == 0
    database = tmp_path / "data" / "recipe-sync.db"
    assert capsys.readouterr().out == f"migrate: sqlite:///{database} at revision {HEAD}\n"
    assert main(["migrate"]) == 0  # again: nothing to do, same answer
    assert capsys.readouterr().out.endswith(f"at revision {HEAD}\n")


def test_a_database_migrated_by_a_newer_version_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "newer.db"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        conn.execute("INSERT INTO alembic_version VALUES ('9999')")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.setenv("RECIPE_SYNC_DATA_DIR", str(tmp_path / "data"))
    assert main(["migrate"]) == 2  # was a traceback from alembic
    assert capsys.readouterr().err == (
        f"recipe-sync: error: database sqlite:///{database} cannot be migrated: "
        "Can't locate revision identified by '9999'\n"
    )

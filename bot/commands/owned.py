"""Directories a command builds and may rebuild: only what it made itself.

A command that fills ``DIR`` with entries it builds (``fixtures``: ``benchmark``,
``recipes``, ``evidence``) leaves a marker file listing them. The next run replaces those
entries; an entry that exists without the marker (a maintainer's own clone, say) is refused
with one line unless ``--force`` is given."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.errors import InputError, Location

MARKER = ".recipe-sync-built"


def claim(out: Path, entries: Sequence[str], command: str, *, force: bool, flag: str) -> None:
    """Refuse to replace an entry of ``out`` that ``command`` did not build; then mark
    ``out`` as built by it (before building: an interrupted build is replaced next time)."""
    marker = out / MARKER
    ours = set(marker.read_text(encoding="utf-8").split()) if marker.is_file() else set()
    foreign = [name for name in entries if (out / name).exists() and name not in ours]
    if foreign and not force:
        names = ", ".join(str(out / name) for name in foreign)
        raise InputError(
            Location(flag),
            f"{names} already exist{'s' if len(foreign) == 1 else ''} and "
            f"`recipe-sync {command}` did not make {'it' if len(foreign) == 1 else 'them'}: "
            "choose another directory, or pass --force to replace "
            f"{'it' if len(foreign) == 1 else 'them'}",
        )
    out.mkdir(parents=True, exist_ok=True)
    marker.write_text("\n".join(sorted(ours | set(entries))) + "\n", encoding="utf-8")

"""Values the evaluator hands back: where things came from, what stays unknown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class SourceSpan:
    """A script line (1-based) an argv element or value was written on."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Unresolved:
    """Something the static evaluation cannot know, and why; never silently guessed."""

    what: str
    why: str
    file: str
    line: int | None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.what}: {self.why}"


def sort_key(item: Unresolved) -> tuple[str, int, str, str]:
    return (item.file, item.line or 0, item.what, item.why)


Status = Literal["launched", "invalid", "no-launch"]


@dataclass(frozen=True)
class Alternative:
    """One launch line of a script whose run-time conditions select between several.

    ``conditions`` says which way each undecidable condition went on the paths that launch
    this line (``"`[[ … ]]` (x.sh:9) holds"``); paths that exit are never alternatives.
    """

    argv: tuple[str, ...]
    env: Mapping[str, str]
    env_unset: tuple[str, ...]
    conditions: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class ScriptResult:
    """What one benchmark script launches for one input environment.

    ``env`` holds the variables the launch sees that the input environment did not give it
    (script and library exports, inline ``VAR=x`` prefixes), in export order; ``env_unset``
    the input variables the script removed. ``unresolved`` lists what reaches the argv or env
    without being statically known (opaque values carry named placeholders such as
    ``<PORT:opaque:slurm-job-id>``); ``assumptions`` what was assumed or ignored without
    affecting them (skipped side effects, undecidable guards that only exit or download).
    """

    script: str
    status: Status
    argv: tuple[str, ...] = ()
    argv_sources: tuple[SourceSpan, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    env_unset: tuple[str, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()
    assumptions: tuple[Unresolved, ...] = ()
    invalid: str | None = None
    reason: str | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    launch: SourceSpan | None = None
    steps: int = 0
    # several launch lines, selected by conditions only known at run time (empty: one line);
    # argv/env above then hold the common line with placeholders where they differ
    alternatives: tuple[Alternative, ...] = ()
    paths: int = 1  # paths through the script's run-time conditions that were evaluated
    # where each unresolved item reaches the launch: "argv:<index>", "env:<NAME>"; an item
    # without places is about the whole line (a launch reached on one side, a syntax error)
    reach: Mapping[Unresolved, tuple[str, ...]] = field(default_factory=dict)

    def read_files(self) -> dict[str, str]:
        """The written files the launch's arguments name (``--config x.yaml``): the server
        reads them as flags. (A file named by an env var, such as a KV connector's config,
        is the connector's, not the server's flags.)"""
        return {
            path: text
            for path, text in self.files.items()
            if any(mentions(word, path) for word in self.argv)
        }

    @property
    def resolved(self) -> bool:
        """True when the launch was found and every argv element and env value is known."""
        return self.status == "launched" and not self.unresolved


def mentions(word: str, path: str) -> bool:
    """True when an argv word or env value names ``path`` (as written, or by its file name
    relative to the working directory)."""
    name = path.rsplit("/", 1)[-1]
    value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    if not name:
        return value == path
    return value in (path, name) or value.endswith("/" + name)


def item_key(item: Unresolved) -> tuple[str, int, str]:
    """Unresolved items in file, line, text order."""
    return (item.file, item.line or 0, item.what)

"""The options every command spells the same way, and what they mean.

* ``--bench-repo``/``--bench-ref`` and ``--recipes``/``--recipes-ref``: a repository is read
  at a git commit, never checked out. Without a ref a git repository is read at ``HEAD``
  (said on stderr); ``WORKTREE`` reads the files on disk, uncommitted changes included (said
  too); a plain directory (not a git repository) is read as it is on disk.
  A path that does not exist is the same one-line error for every repository flag.
* ``--jobs N``: worker processes (``--workers`` is an alias that warns).
* ``--format md|json|html`` and ``--out FILE``: without ``--format`` the format follows the
  extension of ``--out`` (``.json``, ``.html``/``.htm``, anything else Markdown).
* ``--bench-name``/``--recipes-name``: OWNER/NAME for links and texts; without them the name
  comes from the repository's ``origin`` remote when it is a GitHub URL, else "local".
* Names a user types (model, hardware, strategy, feature, config key) are matched
  case-insensitively where the taxonomy is, and a miss suggests the closest names.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bot import gitcli
from bot.errors import InputError, Location
from bot.sources import DirectorySource, FileSource, GitTreeSource

FORMATS = ("md", "json", "html")
_EXTENSIONS = {".json": "json", ".html": "html", ".htm": "html", ".md": "md"}
_GITHUB = re.compile(r"github\.com[:/]([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")
LOCAL = "local"
WORKTREE = "WORKTREE"  # --bench-ref/--recipes-ref value: the files on disk, said on stderr


def note(text: str) -> None:
    print(f"recipe-sync: {text}", file=sys.stderr)


def add_command(
    subparsers: Any, name: str, doc: str | None, summary: str
) -> argparse.ArgumentParser:
    """A subcommand's parser: ``summary`` in ``recipe-sync --help``, its module's docstring
    ``doc`` as its own help, laid out as written (main.py turns its markup into text)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=summary, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    return parser


def add_repo(
    parser: argparse.ArgumentParser, which: str, *, required: bool = True, ref_help: str = ""
) -> None:
    """``--bench-repo/--bench-ref/--bench-name`` or ``--recipes/--recipes-ref/--recipes-name``
    (``ref_help``: what the ref means to a command that reads a history, not one commit)."""
    if which == "bench":
        parser.add_argument(
            "--bench-repo", type=Path, required=required, help="benchmark repository (a path)"
        )
        parser.add_argument(
            "--bench-ref",
            help=ref_help
            or "git commit, branch or tag of --bench-repo to read "
            "(default: HEAD; WORKTREE: the files on disk, uncommitted changes included; "
            "a plain directory is read as it is)",
        )
        parser.add_argument(
            "--bench-name", help="OWNER/NAME of the benchmark repository (default: from origin)"
        )
    else:
        parser.add_argument(
            "--recipes", type=Path, required=required, help="recipes repository (a path)"
        )
        parser.add_argument(
            "--recipes-ref",
            help=ref_help
            or "git commit, branch or tag of --recipes to read "
            "(default: HEAD; WORKTREE: the files on disk, uncommitted changes included; "
            "a plain directory is read as it is)",
        )
        parser.add_argument(
            "--recipes-name", help="OWNER/NAME of the recipes repository (default: from origin)"
        )


def add_jobs(parser: argparse.ArgumentParser, default: int, help_text: str) -> None:
    parser.add_argument("--jobs", type=int, default=default, help=help_text)
    parser.add_argument("--workers", type=int, dest="workers_alias", help=argparse.SUPPRESS)


def jobs(args: argparse.Namespace) -> int:
    alias = getattr(args, "workers_alias", None)
    if alias is not None:
        note("warning: --workers is deprecated; use --jobs")
        args.jobs = alias
    value: int = args.jobs
    if value < 0:
        raise InputError(Location("--jobs"), "must be 0 (automatic) or a positive number")
    return value


def add_output(
    parser: argparse.ArgumentParser,
    out_help: str,
    default: str = "md",
    formats: tuple[str, ...] = FORMATS,
) -> None:
    parser.add_argument(
        "--format",
        choices=formats,
        help=f"output format (default: from the extension of --out, else {default}; "
        "md is the human-readable text)",
    )
    parser.add_argument("--out", type=Path, help=out_help)
    parser.set_defaults(format_default=default)


def output_format(args: argparse.Namespace) -> str:
    """``--format``, else the one ``--out``'s extension names, else the command's default."""
    if args.format:
        return str(args.format)
    out = getattr(args, "out", None)
    if out is not None and Path(out).suffix.lower() in _EXTENSIONS:
        return _EXTENSIONS[Path(out).suffix.lower()]
    return str(getattr(args, "format_default", "md"))


def write(args: argparse.Namespace, text: str) -> None:
    """``text`` to ``--out`` (its directory created), else to stdout."""
    out = getattr(args, "out", None)
    if out is None:
        sys.stdout.write(text)
        return
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(text, encoding="utf-8")


def must_exist(path: Path, flag: str) -> None:
    if not path.exists():
        raise InputError(Location(flag), f"{path} does not exist")
    if not path.is_dir():
        raise InputError(Location(flag), f"{path} is not a directory")


def is_git(path: Path) -> bool:
    """Whether ``path`` itself is a git repository (a work tree's root or a bare one)."""
    if not (path / ".git").exists() and not (path / "HEAD").is_file():
        return False  # a plain directory: no need to start git
    try:
        out = gitcli.text(path, "rev-parse", "--is-bare-repository", "--absolute-git-dir",
                          "--show-prefix")  # fmt: skip
    except gitcli.GitError:
        return False
    bare, git_dir, prefix = [*out.split("\n"), "", "", ""][:3]
    if bare == "true":  # the repository itself, not a directory inside it
        return Path(git_dir).resolve() == path.resolve()
    return prefix == ""  # a work tree's root (or its .git directory), not a subdirectory


def open_repo(path: Path, ref: str | None, flag: str, *, quiet: bool = False) -> FileSource:
    """The files of ``path`` at ``ref`` (default HEAD of a git repository; said on stderr)."""
    must_exist(path, flag)
    if ref and ref.upper() == WORKTREE:
        if not quiet:
            note(f"{flag}: reading the working tree of {path} (uncommitted changes included)")
        return DirectorySource(path)
    ref_flag = "--bench-ref" if flag == "--bench-repo" else f"{flag}-ref"
    if ref:
        return read_ref(path, ref, ref_flag)
    if is_git(path):
        source = GitTreeSource(path, "HEAD")
        if not quiet:
            note(f"{flag}: reading HEAD ({source.commit_sha[:12]}) of {path}; {ref_flag} to choose")
        return source
    return DirectorySource(path)  # not a git repository: its files are all there is


def require_recipes(source: FileSource, path: Path, flag: str = "--recipes") -> None:
    """A recipes repository has ``taxonomy.yaml`` at its root: an empty folder or the
    benchmark repository given by mistake is one line, not every row "unresolved"."""
    if not source.exists("taxonomy.yaml"):
        commit = getattr(source, "commit_sha", "")
        at = f" at {commit[:12]}" if commit else ""
        raise InputError(
            Location(flag), f"{path}{at} is not a recipes repository (no taxonomy.yaml)"
        )


def read_ref(path: Path, ref: str, flag: str) -> GitTreeSource:
    """The files of ``path`` at ``ref``; a ref that names no commit is one line naming the
    flag, with the closest branch or tag names."""
    try:
        return GitTreeSource(path, ref)
    except InputError:
        if not is_git(path):
            raise InputError(Location(flag), f"{path} is not a git repository") from None
        try:
            refs = gitcli.text(path, "for-each-ref", "--format=%(refname:short)",
                               "refs/heads", "refs/tags", "refs/remotes").split()  # fmt: skip
        except gitcli.GitError:
            refs = []
        hint = did_you_mean(ref, refs)
        raise InputError(
            Location(flag), f"'{ref}' is not a commit, branch or tag of {path}{hint}"
        ) from None


def repo_name(path: Path | None, given: str | None) -> str:
    """OWNER/NAME: ``given``, else the GitHub ``origin`` remote of ``path``, else ``local``."""
    if given:
        return given
    if path is None or not is_git(path):
        return LOCAL
    try:
        urls = gitcli.text(path, "remote", "get-url", "--all", "origin").split()
    except gitcli.GitError:
        return LOCAL
    for url in urls:
        found = _GITHUB.search(url)
        if found:
            return found.group(1)
    return LOCAL


def link_name(name: str) -> str:
    """The name to build GitHub links from ("" for a local repository)."""
    return "" if name == LOCAL else name


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` with up to three close names, case-insensitively; else "".
    Options are compared without their dashes (``--formt`` is close to ``--format`` only)."""
    options = sorted(set(choices))
    lowered = {option.lower().lstrip("-"): option for option in options}
    close = difflib.get_close_matches(word.lower().lstrip("-"), list(lowered), n=3, cutoff=0.6)
    if not close:
        return ""
    names = " or ".join(f"'{lowered[c]}'" for c in close)
    return f" (did you mean {names}?)"


def unknown(kind: str, word: str, choices: Iterable[str], flag: str) -> InputError:
    options = list(choices)
    hint = did_you_mean(word, options)
    if not hint and len(options) <= 12:
        hint = f" (known: {', '.join(sorted(options))})"
    return InputError(Location(flag), f"unknown {kind} '{word}'{hint}")


def casefold_choice(word: str, choices: Iterable[str]) -> str | None:
    """``word`` as the taxonomy spells it when they differ only in case (``MI355X``)."""
    for choice in choices:
        if choice.lower() == word.lower():
            return choice
    return None

"""The one way bot/ runs git: the git command line, as an argument list, never a shell.

Every git operation of the bot (reading trees and blobs, history, mirrors, fixtures) goes
through :func:`run` (or :func:`text`) and, for many blobs, :class:`CatFile` (one long-lived
``git cat-file --batch``). A failing command raises :class:`GitError`, one line naming the
command and the repository (``<repo>: git <command> failed: <git's last words>``), never a
bare ``CalledProcessError``. tests/test_gitcli.py fails if another module of bot/ starts git
itself or imports GitPython.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bot.errors import InputError, Location

SHOWN_CHARS = 160  # of the command line named in an error


def _shown(args: Sequence[str]) -> str:
    line = " ".join(args)
    return line if len(line) <= SHOWN_CHARS else line[: SHOWN_CHARS - 1] + "…"


class GitError(Exception):
    """A git command failed (or could not start, or timed out). Its message is one line:
    ``<repo>: git <command> failed: <last line git wrote on stderr, or the exit status>``;
    ``stdout`` and ``stderr`` keep everything git said (decoded, secrets masked).

    Not a :class:`bot.errors.RecipeSyncError`: whether a failure is the user's input (a bad
    ref given on the command line) or the machine's (a mirror that cannot write) is for the
    caller to say; the reading layers turn it into an :class:`InputError` (``as_input``),
    the service retries it like any other failure, the CLI prints it in one line."""

    def __init__(
        self,
        repo: str,
        command: Sequence[str],
        detail: str,
        *,
        returncode: int | None = None,
        stdout: str = "",
        stderr: str = "",
    ) -> None:
        self.repo = repo
        self.command = tuple(command)
        self.detail = detail
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.what = f"git {_shown(command)} failed: {detail}"
        super().__init__(f"{repo}: {self.what}")

    def as_input(self) -> InputError:
        """The same line as an :class:`InputError` located at the repository."""
        return InputError(Location(self.repo), self.what)

    @property
    def output(self) -> str:
        """stdout then stderr, as git wrote them."""
        return f"{self.stdout}\n{self.stderr}" if self.stdout else self.stderr


def _mask(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def _argv(repo: Path | str | None, args: Sequence[str], config: Mapping[str, str]) -> list[str]:
    argv = ["git"]
    if repo is not None:
        argv += ["-C", str(repo)]
    for key, value in config.items():
        argv += ["-c", f"{key}={value}"]
    return argv + list(args)


def _environment(env: Mapping[str, str] | None, clean_env: bool) -> dict[str, str] | None:
    if clean_env:
        return dict(env or {})
    return None if env is None else {**os.environ, **env}


def run(
    repo: Path | str | None,
    *args: str,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    clean_env: bool = False,
    config: Mapping[str, str] | None = None,
    timeout: float | None = None,
    secrets: Sequence[str] = (),
) -> bytes:
    """git's stdout for ``git -C <repo> [-c k=v]… <args>`` (``repo`` None: no ``-C``).

    ``env`` is added to this process's environment (``clean_env``: it is the whole
    environment); ``config`` becomes ``-c`` options (not named in errors); ``secrets`` are
    masked in an error's text. stdin is empty unless ``input`` is given."""
    where = str(repo) if repo is not None else "git"
    try:
        done = subprocess.run(
            _argv(repo, args, config or {}),
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            env=_environment(env, clean_env),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise GitError(where, args, f"timed out after {timeout:g} s") from err
    except OSError as err:
        raise GitError(where, args, f"git could not start ({err.strerror or err})") from err
    if done.returncode != 0:
        stdout = _mask(done.stdout.decode("utf-8", "replace"), secrets)
        stderr = _mask(done.stderr.decode("utf-8", "replace"), secrets)
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        detail = lines[-1] if lines else f"exit status {done.returncode}"
        raise GitError(
            where, args, detail, returncode=done.returncode, stdout=stdout, stderr=stderr
        )
    return done.stdout


def text(repo: Path | str | None, *args: str, errors: str = "replace", **options: Any) -> str:
    """:func:`run`'s stdout decoded as UTF-8 (``errors`` as for :meth:`bytes.decode`)."""
    return run(repo, *args, **options).decode("utf-8", errors)


class CatFile:
    """One long-lived ``git cat-file --batch`` over ``repo``: :meth:`read` of an object name
    (a blob sha, ``<rev>:<path>``) → its content, None when git has no such object. Not
    thread-safe: a caller shared between threads holds its own lock. Restarted if it died."""

    def __init__(self, repo: Path | str) -> None:
        self.repo = repo
        self._proc: subprocess.Popen[bytes] | None = None

    def read(self, name: str) -> bytes | None:
        if self._proc is None or self._proc.poll() is not None:
            try:
                self._proc = subprocess.Popen(
                    _argv(self.repo, ["cat-file", "--batch"], {}),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
            except OSError as err:
                raise GitError(
                    str(self.repo), ["cat-file", "--batch"], f"git could not start ({err})"
                ) from err
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(name.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) != 3:  # "<name> missing", "<name> ambiguous", or git is gone
            return None
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after the content
        return data

    def close(self) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait(timeout=30)
            self._proc = None

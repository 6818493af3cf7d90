"""Bare local mirrors of GitHub repositories: fetch, read, commit and push without a checkout.

Benchmark PR heads are untrusted: they are fetched as objects into a bare repository
(``refs/pull/<n>/head``) and read through :class:`bot.sources.GitTreeSource`: never checked
out, no hooks (``core.hooksPath=/dev/null``), no submodules, no LFS, no filters. The token
travels in the environment (``GIT_CONFIG_*`` → ``http.extraheader``), never in
``.git/config``, a remote URL or the command line. Every git call takes an argument list.

Alignment commits are built with plumbing on a temporary index (``read-tree`` of the base,
``update-index`` of the new blobs, ``write-tree``, ``commit-tree``) and pushed with
``--force-with-lease=<branch>:<the tip we inspected>``: if anyone pushed in between, the
push is refused and treated as a human edit. Only that ("stale info", "fetch first") is a lost
lease; any other refusal (a pre-receive hook, branch protection, a workflow file without the
``workflows`` permission, HTTP 403) raises :class:`PushRefused` with the remote's reason.
"""

from __future__ import annotations

import base64
import fcntl
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bot import gitcli
from bot.github.errors import PushRefused, TransientGitHubError
from bot.sources import GitTreeSource

# on every mirror command, whatever the mirror's config says
MIRROR_CONFIG = {"core.hooksPath": "/dev/null", "submodule.recurse": "false"}

NOREPLY = "noreply@github.com"  # GitHub web-flow: the "Update branch" button, web edits

# `git push --porcelain`: "!<TAB><from>:<to><TAB>[rejected] (<reason>)" per refused ref
_REFUSED_REF = re.compile(r"!\t[^\t\n]+\t\[(?:remote )?rejected\] \(([^\n]*)\)")
_REMOTE_LINE = re.compile(r"remote: (?:error: )?([^\n]*?)\s*$", re.MULTILINE)
_HTTP_403 = "The requested URL returned error: 403"
LEASE_LOST = ("stale info", "fetch first")  # someone pushed since we looked


def grant_for(reason: str) -> str:
    """What would let the push through, for the check run and the sticky comment."""
    lowered = reason.lower()
    if "workflow" in lowered:
        return (
            "Grant the App the `workflows: write` permission (the branch would change files "
            "under .github/workflows, e.g. taken over from the default branch)."
        )
    if "protected branch" in lowered or "gh006" in lowered or "rule" in lowered:
        return "Allow the App to push to this branch in the branch protection rules or rulesets."
    if "hook" in lowered:
        return "Ask the repository admins to let their server-side hook accept the App's pushes."
    if "403" in lowered:
        return "Grant the App `contents: write` on this repository."
    return "Check what the repository allows the App to push."


def push_refusal(output: str) -> tuple[str, bool] | None:
    """(the remote's one-line reason, whether it is a lost lease) of a failed push, or None
    when the output shows no refusal (a network or server error: retried)."""
    refused = _REFUSED_REF.search(output)
    if refused is not None:
        reason = refused.group(1).strip()
        if any(marker in reason for marker in LEASE_LOST):
            return reason, True
        detail = next((line for line in _REMOTE_LINE.findall(output) if line.strip()), "")
        return (f"{reason}: {detail}" if detail else reason), False
    if _HTTP_403 in output:
        return "HTTP 403 (the token may not push here)", False
    return None


# A git command failed for a reason other than a refused lease: the one error of bot.gitcli
# (its message names the command and the mirror), under the name this module always used.
GitOperationError = gitcli.GitError


@dataclass(frozen=True)
class Identity:
    name: str
    email: str


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    author_name: str
    author_email: str
    committer_email: str
    parents: int
    subject: str

    def by_human(self, bot: Identity) -> bool:
        """A commit someone other than the bot made; a web-flow merge of the base branch into
        the PR ("Update branch") does not count (renovatebot/renovate#982)."""
        if self.author_email == bot.email and self.committer_email in (bot.email, NOREPLY):
            return False
        return not (self.parents > 1 and self.committer_email == NOREPLY)


def check_ref_format(branch: str) -> bool:
    try:
        gitcli.run(None, "check-ref-format", "--branch", branch)
    except gitcli.GitError:
        return False
    return True


class Mirror:
    """A bare mirror of ``full_name`` under ``root``; ``url`` is the clone URL (https or a
    local path in tests); ``token`` authenticates https fetches and pushes."""

    def __init__(self, root: Path, full_name: str, url: str, token: str | None = None) -> None:
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", full_name.replace("/", "__"))
        self.path = root / "mirrors" / f"{safe}.git"
        self.full_name = full_name
        self.url = url
        self._token = token

    def _env(self) -> dict[str, str]:
        env = {
            "LANGUAGE": "C",  # git's messages in English: push_refusal reads them
            "LC_ALL": "C",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_LFS_SKIP_SMUDGE": "1",
            # only the transport of the configured clone URL (https; file for local mirrors)
            "GIT_ALLOW_PROTOCOL": "https"
            if "://" in self.url and not self.url.startswith("file://")
            else "file",
        }
        if self._token and self.url.startswith(("https://", "http://")):
            basic = base64.b64encode(f"x-access-token:{self._token}".encode()).decode()
            env.update(
                GIT_CONFIG_COUNT="1",
                GIT_CONFIG_KEY_0="http.extraheader",
                GIT_CONFIG_VALUE_0=f"AUTHORIZATION: basic {basic}",
            )
        return env

    def _git(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        return self._run(*args, env=env).strip()

    def _run(
        self, *args: str, env: Mapping[str, str] | None = None, input: bytes | None = None
    ) -> str:
        return gitcli.text(
            self.path,
            *args,
            input=input,
            env={**self._env(), **(env or {})},
            config=MIRROR_CONFIG,
            secrets=[self._token] if self._token else [],
        )

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One git writer per mirror at a time (threads and processes on this machine)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def ensure(self) -> None:
        if (self.path / "HEAD").exists():
            return
        self.path.mkdir(parents=True, exist_ok=True)
        # an empty template: no sample hooks (they could not run anyway: hooksPath=/dev/null)
        gitcli.run(self.path, "init", "--quiet", "--bare", "--template=")
        for key, value in (
            ("core.hooksPath", "/dev/null"),
            ("fetch.recurseSubmodules", "false"),
            ("gc.auto", "0"),
        ):
            gitcli.run(self.path, "config", key, value)

    def remote_tip(self, branch: str) -> str | None:
        """The remote tip of ``refs/heads/<branch>`` (``git ls-remote``), or None."""
        self.ensure()
        try:
            out = self._git("ls-remote", "--", self.url, f"refs/heads/{branch}")
        except GitOperationError as err:
            raise TransientGitHubError(f"git ls-remote {self.full_name}: {err}") from err
        for line in out.splitlines():
            sha, _, ref = line.partition("\t")
            if ref == f"refs/heads/{branch}":
                return sha
        return None

    def fetch(self, *refspecs: str) -> None:
        """Fetch objects for ``refspecs`` (``+<remote ref>:<local ref>``) from the remote."""
        self.ensure()
        with self.locked():
            try:
                self._git(
                    "fetch",
                    "--quiet",
                    "--no-tags",
                    "--no-recurse-submodules",
                    "--no-write-fetch-head",
                    "--",
                    self.url,
                    *refspecs,
                )
            except GitOperationError as err:
                raise TransientGitHubError(f"git fetch {self.full_name}: {err}") from err

    def rev(self, ref: str) -> str | None:
        try:
            return self._git(
                "rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"
            )
        except GitOperationError:
            return None

    def has(self, sha: str) -> bool:
        return self.rev(sha) is not None

    def source(self, ref: str, label: str | None = None) -> GitTreeSource:
        return GitTreeSource(self.path, ref, label=label or "")

    def read(self, commit: str, path: str) -> bytes | None:
        source = GitTreeSource(self.path, commit)
        return source.read_bytes(path) if source.exists(path) else None

    def commit_files(
        self, base: str, files: Mapping[str, bytes], message: str, identity: Identity
    ) -> str:
        """A commit on top of ``base`` whose tree is ``base``'s with ``files`` replaced."""
        with self.locked(), tempfile.TemporaryDirectory() as scratch:
            index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            self._git("read-tree", base, env=index)
            for path, data in sorted(files.items()):
                blob = self._run("hash-object", "-w", "--no-filters", "--stdin", input=data).strip()
                # the mode the file has in the base (an executable stays executable)
                listed = self._git("ls-tree", "--full-tree", base, "--", path)
                mode = listed.split(" ", 1)[0] if listed else "100644"
                self._git(
                    "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=index
                )
            tree = self._git("write-tree", env=index)
            people = {
                "GIT_AUTHOR_NAME": identity.name,
                "GIT_AUTHOR_EMAIL": identity.email,
                "GIT_COMMITTER_NAME": identity.name,
                "GIT_COMMITTER_EMAIL": identity.email,
            }
            return self._git("commit-tree", tree, "-p", base, "-m", message, env=people)

    def files_match(self, commit: str, files: Mapping[str, bytes]) -> bool:
        return all(self.read(commit, path) == data for path, data in files.items())

    def commits_between(self, base: str, tip: str) -> list[CommitInfo]:
        """Commits reachable from ``tip`` but not from ``base``, newest first."""
        out = self._git(
            "log", "--format=%H%x1f%an%x1f%ae%x1f%ce%x1f%P%x1f%s", tip, "--not", base, "--"
        )
        commits = []
        for line in out.splitlines():
            sha, name, email, committer, parents, subject = line.split("\x1f", 5)
            commits.append(CommitInfo(sha, name, email, committer, len(parents.split()), subject))
        return commits

    def push(self, commit: str, branch: str, expected: str | None) -> bool:
        """Push ``commit`` to ``branch`` only if the remote branch is still at ``expected``
        (None: must not exist). False when the lease is refused (someone pushed); any other
        refusal raises :class:`PushRefused`, a network or server error TransientGitHubError."""
        if not check_ref_format(branch):
            raise GitOperationError(
                str(self.path),
                ["push", "--", self.url, f"{commit}:refs/heads/{branch}"],
                f"refusing to push to an invalid branch name {branch!r}",
            )
        lease = f"--force-with-lease=refs/heads/{branch}:{expected or ''}"
        try:
            self._git("push", "--porcelain", lease, "--", self.url, f"{commit}:refs/heads/{branch}")
        except GitOperationError as err:
            refusal = push_refusal(err.output)
            if refusal is None:
                raise TransientGitHubError(f"git push {self.full_name} {branch}: {err}") from err
            reason, lease_lost = refusal
            if lease_lost:
                return False
            raise PushRefused(self.full_name, branch, reason, grant_for(reason)) from err
        return True


def mirror_root(data_dir: Path) -> Path:
    root = data_dir / "git"
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o700)
    return root

"""The contract between the service and the alignment engine.

The service builds a :class:`SyncRequest` (sources read from git objects, never a checkout),
calls :meth:`SyncEngine.sync`, and applies the :class:`SyncOutcome` on GitHub. The engine is
pure with respect to GitHub: it reads files and evidence and returns text and file contents.

The service runs :class:`bot.service.engine.AlignEngine`; ``RECIPE_SYNC_ENGINE=module:attr``
replaces it with an out-of-tree engine such as a test double (a class is instantiated with
no arguments; any other object is used as is).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from bot.errors import RecipeSyncError
from bot.evidence.source import RunSource
from bot.rules.models import Policy
from bot.sources import FileSource

CONCLUSIONS: frozenset[str] = frozenset({"success", "neutral", "action_required", "failure"})


@dataclass(frozen=True)
class SyncRequest:
    bench_repo: str
    pr_number: int
    head_sha: str
    head_branch: str
    base_sha: str
    is_fork: bool
    bench: FileSource  # the PR head, read from a local mirror with no checkout
    bench_base: FileSource  # the PR base commit
    recipes_repo: str
    recipes_base_sha: str
    recipes: FileSource  # recipes default-branch head
    runs: RunSource | None  # workflow-run evidence for the PR head
    dry_run: bool
    head_repo: str | None = None  # OWNER/NAME the head branch lives in (a fork's, for fork PRs)
    # recipe path → flags a maintainer ignored for it on the dashboard issue (never proposed)
    ignored_flags: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # recipe path ("*": every file of this PR) → flag or env var → who dropped that hunk with
    # `/recipe-sync drop` (never proposed; the PR body says so)
    dropped: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # the same for `/recipe-sync add`: candidates proposed whatever their adoption estimate
    added: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # the benchmark repository's .github/recipe-sync.yml over the service's policy (None: the
    # engine's own rules/policy.yaml)
    policy: Policy | None = None


@dataclass(frozen=True)
class RecipeChange:
    recipe_path: str  # models/<org>/<repo>.yaml
    files: Mapping[str, bytes]  # repo path → new content (usually just the recipe)
    title: str
    # the PR body exactly as posted: bot.present.posted frames it (the metadata line with
    # this fingerprint, the neutralised text, the footer, the length limit)
    body: str
    commit_message: str
    fingerprint: str  # sha256 of the normalised change; a declined PR with it is not re-proposed
    # edits_digest() of the recipe file's YAML edits (the guide and the texts left out): an open
    # alignment PR from another benchmark PR with the same digest already proposes this change,
    # so no second PR is opened. "": no YAML edit (a guide-only change), never deduplicated
    edits_digest: str = ""


def edits_digest(edits: Iterable[tuple[str, str | None]]) -> str:
    """sha256 of a recipe file's set of YAML edits, as (node path, new value; None: removed)
    pairs: the same set in any order has the same digest; "" for no edit."""
    found = sorted(
        {(node, value) for node, value in edits}, key=lambda e: (e[0], e[1] is None, e[1] or "")
    )
    if not found:
        return ""
    return hashlib.sha256(json.dumps(found, ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Annotation:
    path: str
    start_line: int
    end_line: int
    level: str  # notice | warning | failure
    message: str
    title: str


@dataclass(frozen=True)
class SyncOutcome:
    changes: tuple[RecipeChange, ...]
    aligned: tuple[str, ...]  # recipe files already aligned (an open alignment PR is obsolete)
    comment: str  # the engine's verification text (bot.present.posted adds marker, metadata, links)
    check_conclusion: str  # "success" | "neutral" | "action_required" | "failure"
    check_title: str
    check_summary: str
    annotations: tuple[Annotation, ...]
    # recipe file → why its open alignment PR is obsolete though the file is not aligned (every
    # hunk left was dropped on request): the service closes that PR with the reason
    withdrawn: Mapping[str, str] = field(default_factory=dict)


class SyncEngine(Protocol):
    def sync(self, request: SyncRequest) -> SyncOutcome: ...


class EngineUnavailable(RecipeSyncError):
    """The configured engine cannot be imported (retryable once it is installed)."""


def load_engine(spec: str) -> SyncEngine:
    """Import ``module:attr``; instantiate it when it is a class."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
        target = getattr(module, attr)
    except (ImportError, AttributeError) as err:
        raise EngineUnavailable(
            f"alignment engine '{spec}' cannot be loaded ({err}); "
            "set RECIPE_SYNC_ENGINE=module:attr to an installed engine"
        ) from err
    engine = target() if isinstance(target, type) else target
    if not callable(getattr(engine, "sync", None)):
        raise EngineUnavailable(f"alignment engine '{spec}' has no sync(request) method")
    return engine  # type: ignore[no-any-return]


class EngineContractError(RecipeSyncError):
    """The engine returned an outcome the service cannot apply (an engine bug)."""


def check_outcome(outcome: SyncOutcome) -> None:
    """Reject an outcome the service cannot apply (a bug in the engine, not in the input)."""
    if outcome.check_conclusion not in CONCLUSIONS:
        raise EngineContractError(
            f"engine returned unknown check conclusion {outcome.check_conclusion!r}"
        )
    for change in outcome.changes:
        if not change.files:
            raise EngineContractError(f"engine change for {change.recipe_path} has no files")
        for path in change.files:
            if path.startswith("/") or ".." in path.split("/"):
                raise EngineContractError(f"engine change writes outside the repository: {path!r}")

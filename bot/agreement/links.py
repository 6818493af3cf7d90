"""Link maintainer commits on the recipes main to the benchmark PRs they follow or anticipate.

Squash commits on the recipes main rarely cite the benchmark PR, so links are found from
content (issue #24): the same flag, env var or image value on both sides for the same recipe
and hardware, from ``BEFORE`` the PR was certainly open to ``WINDOW`` after its merge, where
the setting is one the PR changed (its delta, :mod:`bot.align.delta`: a lane that copies what
the recipe already had is not what a commit follows); a guide addition that names the PR, one
of its config keys, or reproduces its launch (its exports and flags); a citation when there
is one. Each link carries its evidence and a confidence in [0, 1].

Content matches are weighted by how distinctive the setting is among the window's benchmark
launches (``VLLM_ROCM_USE_AITER=1`` is on most AMD lanes; ``--linear-backend emulation`` on
one), so a commit is linked to the PR whose launch it carries, not to every AMD PR.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bot.agreement.recipes_history import MaintainerCommit
from bot.agreement.taxonomy import Taxonomy
from bot.backtest.history import cited_prs
from bot.backtest.model import LaunchDigest
from bot.recipes.leaves import Leaf
from bot.vllm.pairs import canonical_value, launch_pairs

DAY = 86400
# a maintainer commit follows a PR up to three weeks after its merge, or anticipates it a
# little: every July link that came first landed less than a day before the moment the PR
# was certainly open (PR numbers order creation), so a week before that bounds it
WINDOW = 21 * DAY
BEFORE = 7 * DAY
MIN_CONFIDENCE = 0.5
EXPORT = re.compile(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
DEFAULTED = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*:-(.*)\}$")
PR_MENTION = re.compile(r"InferenceX(?:MAX)?[^\n#]{0,40}#(\d+)|InferenceX(?:MAX)?/pull/(\d+)", re.I)


@dataclass(frozen=True)
class BenchmarkPR:
    """What the linker knows of one merged benchmark PR."""

    number: int
    title: str
    opened: int  # a moment it was certainly open (bot.backtest.history.open_moments)
    merged: int
    launches: tuple[LaunchDigest, ...]

    def near(self, moment: int) -> bool:
        """Could a commit at ``moment`` follow or anticipate this PR?"""
        return self.opened - BEFORE <= moment <= self.merged + WINDOW


@dataclass(frozen=True)
class Evidence:
    kind: str  # citation | setting | guide-setting | guide-names-key | guide-names-pr
    detail: str
    weight: float  # this evidence alone: how sure it makes the link, in [0, 1]


@dataclass(frozen=True)
class Link:
    commit: MaintainerCommit = field(repr=False)
    pr: int
    recipe: str
    hardware: tuple[str, ...]  # GPUs both sides name
    confidence: float
    evidence: tuple[Evidence, ...]
    before_merge: bool  # the recipe change landed before the PR merged

    @property
    def sha(self) -> str:
        return self.commit.sha

    def reason(self) -> str:
        """One line: the strongest evidence first."""
        top = sorted(self.evidence, key=lambda e: -e.weight)[:4]
        return "; ".join(e.detail for e in top)


def guide_settings(text: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(env pairs, flag pairs) of the ``export`` lines and ``vllm serve`` commands in text."""
    env: list[tuple[str, str]] = []
    args: list[tuple[str, str]] = []
    joined = re.sub(r"\\\n\s*", " ", text)
    for line in joined.splitlines():
        found = EXPORT.match(line)
        if found:
            value = found.group(2).strip().strip("'\"")
            default = DEFAULTED.match(value)
            env.append((found.group(1), canonical_value(default.group(1) if default else value)))
            continue
        at = line.find("vllm serve")
        if at >= 0:
            try:
                argv = shlex.split(line[at:])
            except ValueError:
                continue
            args.extend(launch_pairs(argv))
    return env, args


class Linker:
    """Links for one window of benchmark PRs; reused across the window's commits."""

    def __init__(
        self,
        prs: Sequence[BenchmarkPR],
        taxonomy: Taxonomy,
        min_confidence: float = MIN_CONFIDENCE,
    ) -> None:
        self.prs = tuple(prs)
        self.taxonomy = taxonomy
        self.min_confidence = min_confidence
        self.by_number = {pr.number: pr for pr in prs}
        # how many PRs launch each (recipe, slot, subject, value): its distinctiveness
        counts: dict[tuple[str, str, str, str], int] = {}
        for pr in prs:
            seen: set[tuple[str, str, str, str]] = set()
            for digest in pr.launches:
                for slot, subject, value in _settings(digest):
                    seen.add((digest.recipe, slot, subject, value))
            for item in seen:
                counts[item] = counts.get(item, 0) + 1
        self._counts = counts
        self._total = max(1, len(prs))

    def weight(self, recipe: str, slot: str, subject: str, value: str) -> float:
        """Inverse launch frequency: 1.0 for a setting one PR launches, less when common."""
        count = self._counts.get((recipe, slot, subject, value), 0)
        if count <= 1:
            return 1.0
        return max(0.15, 1.0 - math.log(count) / math.log(self._total + 1))

    def links(self, commit: MaintainerCommit) -> tuple[Link, ...]:
        """The commit's links: per recipe, the candidates within 0.8 of the strongest."""
        return _strongest(self.candidates(commit), self.by_number)

    def candidates(self, commit: MaintainerCommit) -> list[Link]:
        """Every PR the commit carries enough evidence for (``min_confidence``), before the
        PRs that carry the same content compete (:meth:`links`)."""
        cited = cited_prs(f"{commit.subject}\n{commit.body}")
        candidates = [pr for pr in self.prs if pr.near(commit.time)]
        found: list[Link] = []
        for recipe in commit.recipes:
            if recipe in commit.created:
                continue  # a new recipe file: not a change of a recipe the bot could edit
            for pr in candidates:
                link = self._link(commit, recipe, pr, cited)
                if link is not None:
                    found.append(link)
        return found

    def _link(
        self, commit: MaintainerCommit, recipe: str, pr: BenchmarkPR, cited: set[int]
    ) -> Link | None:
        launches = [d for d in pr.launches if d.recipe == recipe]
        evidence: list[Evidence] = []
        hardware: set[str] = set()
        if pr.number in cited:
            evidence.append(Evidence("citation", f"the commit cites #{pr.number}", 1.0))
        evidence += self._new_variants(commit, recipe, pr, hardware)
        if not launches and not evidence:
            return None
        total = 0.0
        matched = 0.0
        moved = commit.moved(recipe)
        for change in commit.launch_changes:
            leaf = change.leaf
            if leaf.recipe != recipe or change.removed or leaf.slot == "scalar":
                continue
            if (leaf.subject, leaf.value) in moved:
                continue  # the commit moves a setting it had: no new content
            weight = self.weight(recipe, leaf.slot, leaf.subject, leaf.value)
            total += weight
            hit = self._launched(leaf, launches)
            if hit is None:
                continue
            how, gpus = hit
            share = weight * (0.5 if how == "image family" else 1.0)
            matched += share
            hardware.update(gpus)
            evidence.append(Evidence("setting", _describe(leaf, how), share))
        for addition in commit.guide:
            if addition.recipe != recipe:
                continue
            evidence.extend(self._guide(addition.text, recipe, pr, launches, hardware))
        # each channel's own confidence, combined as independent evidence (noisy-or)
        channels = [e.weight for e in evidence if e.kind != "setting"]
        if total:
            channels.append(matched / total)
        miss = 1.0
        for chance in channels:
            miss *= 1.0 - min(1.0, chance)
        confidence = 1.0 - miss
        if confidence < self.min_confidence:
            return None
        return Link(
            commit,
            pr.number,
            recipe,
            tuple(sorted(hardware)),
            round(confidence, 2),
            tuple(evidence),
            commit.time < pr.merged,
        )

    def _new_variants(
        self, commit: MaintainerCommit, recipe: str, pr: BenchmarkPR, hardware: set[str]
    ) -> list[Evidence]:
        """A variant the commit adds for a checkpoint the PR benchmarks (a lane no recipe
        served yet, or served by another variant)."""
        found: list[Evidence] = []
        for path, variant in commit.new_variants:
            if path != recipe:
                continue
            scope = f"variants.{variant}"
            model = next(
                (
                    c.leaf.value
                    for c in commit.changes
                    if c.leaf.recipe == recipe and c.leaf.node == f"{scope}.model_id"
                ),
                "",
            )
            if not model:
                continue
            lanes = [
                d for d in pr.launches if d.model == model and (not d.recipe or d.recipe == recipe)
            ]
            if lanes and any(d.new or d.changed for d in lanes):
                hardware.update(d.hardware for d in lanes if d.hardware)
                found.append(
                    Evidence("new-variant", f"adds variant {variant} for {model}, which "
                             f"#{pr.number} benchmarks", 0.8)
                )  # fmt: skip
        return found

    def _lane_named(self, text: str, launches: Sequence[LaunchDigest]) -> set[str]:
        """GPUs of the PR's changed lanes a benchmark section names by variant and GPU (a
        heading such as "MXFP4 benchmark reproduction (InferenceX MI355X sweep)")."""
        if not re.search(r"\bbenchmark\b|\binferencex\b", text, re.I):
            return set()
        gpus = self.taxonomy.gpus_named(text)
        return {
            d.hardware
            for d in launches
            if (d.new or d.changed) and d.hardware in gpus and _names(text, d.variant)
        }

    def _launched(
        self, leaf: Leaf, launches: Sequence[LaunchDigest]
    ) -> tuple[str, set[str]] | None:
        """How a benchmark launch of the leaf's scope carries the leaf's value, and on which
        GPUs: "same value", or "image family" (a nightly tag for a pinned nightly build)."""
        gpus = self.taxonomy.gpus_of_scope(leaf.scope)
        variant = _variant_of(leaf.scope)
        how = ""
        where: set[str] = set()
        for digest in launches:
            if gpus is not None and digest.hardware not in gpus:
                continue
            if variant is not None and digest.variant != variant:
                continue
            found = _carries(leaf, digest)
            if found:
                where.add(digest.hardware)
                how = "same value" if "same value" in (found, how) else found
        return (how, where) if how else None

    def _guide(
        self,
        text: str,
        recipe: str,
        pr: BenchmarkPR,
        launches: Sequence[LaunchDigest],
        hardware: set[str],
    ) -> list[Evidence]:
        found: list[Evidence] = []
        named = {int(a or b) for a, b in PR_MENTION.findall(text)}
        lane = self._lane_named(text, launches)
        if lane:
            hardware.update(lane)
        if pr.number in named:
            found.append(Evidence("guide-names-pr", f"the guide names #{pr.number}", 0.9))
        keys = sorted({d.key for d in launches if d.key and (d.new or d.changed) and d.key in text})
        if keys:
            found.append(Evidence("guide-names-key", f"the guide names {keys[0]}", 0.8))
        if lane and not found:
            gpu_names = ", ".join(sorted(lane))
            found.append(
                Evidence("guide-names-lane", f"a benchmark section for a lane it changed "
                         f"({gpu_names})", 0.4)
            )  # fmt: skip
        gpus = self.taxonomy.gpus_named(text)
        variants = {d.variant for d in launches if _names(text, d.variant)}
        scoped = [
            d
            for d in launches
            if (not gpus or d.hardware in gpus) and (not variants or d.variant in variants)
        ]
        env, args = guide_settings(text)
        hits: list[str] = []
        weight = 0.0
        for slot, pairs in (("env", env), ("arg", args)):
            for subject, value in pairs:
                if any((subject, value) in _pairs_of(d, slot) for d in scoped):
                    hits.append(f"{subject}={value}" if value else subject)
                    weight += self.weight(recipe, slot, subject, value)
        if hits:
            hardware.update(d.hardware for d in scoped)
            share = weight / max(1, len(env) + len(args))
            detail = "the guide reproduces " + ", ".join(hits[:4])
            if len(hits) > 4:
                detail += f" (+{len(hits) - 4})"
            found.append(Evidence("guide-setting", detail, round(share, 2)))
        elif found:
            hardware.update(d.hardware for d in scoped)
        return found


def changed_by_pr(digest: LaunchDigest, subject: str) -> bool:
    """Did the PR change ``subject`` in this lane (or bring the whole lane)? A JSON field
    and its flag are one subject."""
    if digest.new:
        return True
    return any(
        c == subject or subject.startswith(c + ".") or c.startswith(subject + ".")
        for c in digest.changed
    )


def _names(text: str, word: str) -> bool:
    """Does ``text`` name ``word`` (a variant key such as ``mxfp4``) as a word?"""
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", text, re.I) is not None


def _settings(digest: LaunchDigest) -> Iterable[tuple[str, str, str]]:
    """The settings the PR changed in this lane: what its content is."""
    for subject, value in digest.args:
        if changed_by_pr(digest, subject):
            yield "arg", subject, value
    for subject, value in digest.env:
        if changed_by_pr(digest, subject):
            yield "env", subject, value
    if digest.image and changed_by_pr(digest, "image"):
        yield "image", "image", digest.image


def _pairs_of(digest: LaunchDigest, slot: str) -> set[tuple[str, str]]:
    pairs = digest.env if slot == "env" else digest.args
    return {(s, v) for s, v in pairs if changed_by_pr(digest, s)}


def _carries(leaf: Leaf, digest: LaunchDigest) -> str:
    if leaf.slot == "image":
        if not changed_by_pr(digest, "image"):
            return ""
        if digest.image == leaf.value:
            return "same value"
        if _image_family(digest.image) == _image_family(leaf.value):
            return "image family"
        return ""
    pairs = _pairs_of(digest, leaf.slot)
    return "same value" if (leaf.subject, leaf.value) in pairs else ""


def _image_family(image: str) -> str:
    """``repo:nightly-<sha>`` and ``repo:nightly`` are one family (a build of the channel)."""
    repo, _, tag = image.partition(":")
    return f"{repo}:{tag.split('-', 1)[0]}" if tag else repo


def _variant_of(scope: str) -> str | None:
    parts = scope.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "variants" else None


def _describe(leaf: Leaf, how: str) -> str:
    value = f"={leaf.value}" if leaf.value else ""
    what = "image" if leaf.slot == "image" else leaf.subject
    if leaf.slot == "image":
        value = f" {leaf.value}"
    suffix = " (same image channel)" if how == "image family" else ""
    return f"{what}{value} at {leaf.scope}{suffix}"


def _strongest(links: Sequence[Link], prs: Mapping[int, BenchmarkPR]) -> tuple[Link, ...]:
    """Per recipe, the PRs within 0.8 of the best confidence (a lane reapplied as a second
    PR, or split in two, links to both; a weaker neighbour does not). Confidence is ranked
    with a small penalty per day between the commit and the PR being open, so among PRs that
    carry the same content the one the commit answered soonest wins."""
    out: list[Link] = []
    by_recipe: dict[str, list[Link]] = {}
    for link in links:
        by_recipe.setdefault(link.recipe, []).append(link)

    def ranked(link: Link) -> float:
        pr = prs[link.pr]
        gap = max(0, pr.opened - link.commit.time, link.commit.time - pr.merged) / DAY
        return link.confidence * (1.0 - 0.01 * gap)

    for found in by_recipe.values():
        best = max(ranked(link) for link in found)
        out.extend(link for link in found if ranked(link) >= 0.8 * best)
    return tuple(sorted(out, key=lambda link: (link.recipe, -link.confidence, link.pr)))


def link_all(commits: Iterable[MaintainerCommit], linker: Linker) -> Mapping[str, tuple[Link, ...]]:
    return {commit.sha: linker.links(commit) for commit in commits}

"""vLLM versions: parse them, read them off image tags, and decide which rule set applies.

The semantics researched in ``docs/vllm-cli-semantics.md`` come from five releases
(:data:`RESEARCHED`). A version between two of them uses the rules of the newest release at
or below it; where the two neighbouring researched releases disagree, the answer for the
version in between is *not verified* and every consumer says so (:func:`span_status`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Version = tuple[int, int, int]

# Releases whose wheels were read for the semantics doc (docs/spec/vllm-cli-semantics.md §0),
# oldest first.
RESEARCHED: tuple[Version, ...] = ((0, 12, 0), (0, 17, 0), (0, 22, 0), (0, 27, 1), (0, 33, 0))
OLDEST: Version = RESEARCHED[0]
NEWEST: Version = RESEARCHED[-1]

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.\d+)*(?:(?:rc|a|b|\.post|\.dev)\d*)?$")
_RELEASE_TAG = re.compile(
    r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.\d+)*(?:rc\d+)?(?:[-_+][A-Za-z0-9_.-]*)?$"
)
# Any tag that starts with "nightly" is a nightly build: nightly, nightly-<sha>, nightly-aarch64,
# nightly-dev-x86_64-cu13.0.1-<sha> (the dev builds name the vLLM commit last).
_NIGHTLY_TAG = re.compile(r"^nightly(?:[-_.][A-Za-z0-9_.-]*?)??(?:-(?P<sha>[0-9a-f]{7,40}))?$")
_LATEST_TAG = re.compile(r"^latest(?:-[A-Za-z0-9_.-]+)?$")


def parse_version(text: str) -> Version | None:
    """``"0.25.0"``, ``"v0.27.1"``, ``"0.33"`` → a version tuple; anything else → None."""
    match = _VERSION.match(text.strip())
    if not match:
        return None
    return (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))


def names_a_version(text: str) -> bool:
    """Whether a user-given ``--vllm-version`` is one :func:`resolve_version` takes: a
    release (``0.27.1``, ``v0.33``) or a nightly / ``latest`` tag."""
    given = text.strip()
    return bool(
        parse_version(given) is not None or _NIGHTLY_TAG.match(given) or _LATEST_TAG.match(given)
    )


def fmt_version(version: Version) -> str:
    return ".".join(str(part) for part in version)


def short_version(version: Version) -> str:
    """``(0, 33, 0)`` → ``"0.33"``; ``(0, 27, 1)`` → ``"0.27.1"`` (how the doc names them)."""
    return f"{version[0]}.{version[1]}" if version[2] == 0 else fmt_version(version)


# --- researched-range arithmetic ------------------------------------------------------------


def neighbours(version: Version) -> tuple[Version | None, Version | None]:
    """The researched releases at-or-below and at-or-above ``version``."""
    below = [r for r in RESEARCHED if r <= version]
    above = [r for r in RESEARCHED if r >= version]
    return (below[-1] if below else None, above[0] if above else None)


def in_span(version: Version, since: Version, until: Version | None) -> bool:
    return since <= version and (until is None or version <= until)


Availability = Literal["yes", "no", "unverified"]


def span_status(version: Version, since: Version, until: Version | None) -> Availability:
    """Whether something present in ``[since, until]`` exists in ``version``.

    "unverified" when ``version`` lies strictly between two researched releases that
    disagree (the change happened somewhere in between; the exact release is not known).
    """
    present = in_span(version, since, until)
    if version in RESEARCHED:
        return "yes" if present else "no"
    below, above = neighbours(version)
    if below is None or above is None:  # outside the researched range: nearest one decides
        nearest = below or above
        assert nearest is not None
        return "yes" if in_span(nearest, since, until) else "no"
    if in_span(below, since, until) != in_span(above, since, until):
        return "unverified"
    return "yes" if present else "no"


def rules_version(version: Version) -> Version:
    """Clamp into the researched range: older → 0.12 rules, newer → 0.33 rules."""
    return max(OLDEST, min(NEWEST, version))


# --- images -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageRef:
    """``repo:tag@digest`` split apart, with what the tag says about the vLLM version."""

    text: str
    repo: str
    tag: str | None
    digest: str | None
    release: Version | None  # the tag names a release (v0.25.0, 0.27.1, v0.22.1-cu130)
    nightly: bool  # nightly, nightly-<sha>, latest, latest-<arch>
    nightly_sha: str | None

    def describe(self) -> str:
        if self.release is not None:
            return f"release {fmt_version(self.release)}"
        if self.nightly_sha:
            return f"nightly build of vLLM commit {self.nightly_sha[:12]}"
        if self.nightly:
            return f"rolling tag '{self.tag}' (newest build)"
        if self.tag is None:
            return "no tag (implicitly 'latest')"
        return f"custom tag '{self.tag}' (version unknown)"


def parse_image(text: str) -> ImageRef:
    """Parse a docker image reference. A missing tag means ``latest`` to docker."""
    ref = text.strip().split()[-1] if text.strip() else ""
    digest: str | None = None
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    tag: str | None = None
    repo = ref
    if colon > slash:
        repo, tag = ref[:colon], ref[colon + 1 :]
    effective = tag if tag is not None else "latest"
    release_match = _RELEASE_TAG.match(effective)
    nightly_match = _NIGHTLY_TAG.match(effective)
    release = (
        (int(release_match.group(1)), int(release_match.group(2)), int(release_match.group(3) or 0))
        if release_match
        else None
    )
    nightly = bool(nightly_match) or bool(_LATEST_TAG.match(effective))
    sha = nightly_match.group("sha") if nightly_match else None
    return ImageRef(text, repo, tag, digest, release, nightly, sha)


# --- which rules apply ----------------------------------------------------------------------

VersionSource = Literal[
    "given", "benchmark image", "recipe image", "recipe min_vllm_version", "nightly", "unknown"
]


@dataclass(frozen=True)
class VersionResolution:
    """The vLLM version whose rules a comparison uses, and why."""

    version: Version  # the version as named (may lie outside the researched range)
    rules: Version  # the researched-range version the rules are taken from
    source: VersionSource
    reason: str  # one sentence, quoted in reports
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return fmt_version(self.version)

    @property
    def may_be_newer(self) -> bool:
        """Can the build that ran know arguments the newest researched release does not (a
        nightly, an unknown version, a release past the catalogue)?"""
        return self.source in ("nightly", "unknown") or self.version > NEWEST


def _named(
    version: Version, source: VersionSource, reason: str, notes: Sequence[str] = ()
) -> VersionResolution:
    extra = list(notes)
    rules = rules_version(version)
    if version > NEWEST:
        extra.append(
            f"{fmt_version(version)} is newer than the newest researched release "
            f"{fmt_version(NEWEST)}: its rules are assumed"
        )
    elif version < OLDEST:
        extra.append(
            f"{fmt_version(version)} is older than the oldest researched release "
            f"{fmt_version(OLDEST)}: its rules are assumed (pre-0.12 -O and V0 defaults differ)"
        )
    return VersionResolution(version, rules, source, reason, tuple(extra))


def _nightly(image: ImageRef) -> VersionResolution:
    newest = short_version(NEWEST)
    return VersionResolution(
        NEWEST,
        NEWEST,
        "nightly",
        f"nightly image: assumed {newest} rules ({image.text} is a {image.describe()}, "
        f"newer than any researched release)",
    )


def resolve_version(
    *,
    given: str | None = None,
    bench_image: str | None = None,
    recipe_image: str | None = None,
    recipe_min_version: str | None = None,
) -> VersionResolution:
    """Pick the vLLM version for a comparison.

    Order: an explicit version; the benchmark image when its tag names a release or a
    nightly (it is the build that ran, so it outranks the recipe's floor); the recipe image
    when it names a release; the recipe's ``min_vllm_version``; a nightly recipe image;
    otherwise the newest rules with an explicit "version unknown". Nightly and ``latest``
    tags mean the newest researched release, and the reason says so.
    """
    notes: list[str] = []
    if given:
        parsed = parse_version(given)
        if parsed is not None:
            return _named(parsed, "given", f"vLLM {fmt_version(parsed)} given explicitly")
        if _NIGHTLY_TAG.match(given) or _LATEST_TAG.match(given):
            return _nightly(parse_image(f"vllm:{given}"))
        notes.append(f"given version '{given}' is not a version; ignored")

    bench = parse_image(bench_image) if bench_image else None
    recipe = parse_image(recipe_image) if recipe_image else None
    if bench is not None and bench.release is not None:
        if recipe is not None and recipe.release not in (None, bench.release):
            assert recipe.release is not None
            notes.append(
                f"the recipe image names {fmt_version(recipe.release)}; compared under the "
                "benchmark's release"
            )
        return _named(
            bench.release, "benchmark image", f"benchmark image {bench.text} names a release", notes
        )
    if bench is not None and bench.nightly:
        if recipe_min_version:
            notes.append(
                f"the benchmark's nightly build outranks the recipe's min_vllm_version "
                f"{recipe_min_version} (a floor, not the build that ran)"
            )
        nightly = _nightly(bench)
        return VersionResolution(
            nightly.version, nightly.rules, nightly.source, nightly.reason, tuple(notes)
        )
    if recipe is not None and recipe.release is not None:
        return _named(
            recipe.release, "recipe image", f"recipe image {recipe.text} names a release", notes
        )
    if recipe_min_version:
        parsed = parse_version(recipe_min_version)
        if parsed is not None:
            if recipe is not None and recipe.nightly:
                notes.append(
                    f"the recipe image {recipe.text} is a nightly build, newer than "
                    "min_vllm_version; pass an explicit version to compare under the newest rules"
                )
            unknown = [ref.describe() for ref in (bench, recipe) if ref is not None]
            what = f" ({'; '.join(unknown)})" if unknown else ""
            return _named(
                parsed,
                "recipe min_vllm_version",
                f"no image names a release{what}; the recipe's min_vllm_version is "
                f"{recipe_min_version}",
                notes,
            )
        if _NIGHTLY_TAG.match(recipe_min_version):
            return _nightly(parse_image(f"vllm:{recipe_min_version}"))
    if recipe is not None and recipe.nightly:
        nightly = _nightly(recipe)
        return VersionResolution(
            nightly.version, nightly.rules, nightly.source, nightly.reason, tuple(notes)
        )

    described = (
        "; ".join(ref.describe() for ref in (bench, recipe) if ref is not None) or "no image"
    )
    newest = short_version(NEWEST)
    return VersionResolution(
        NEWEST,
        NEWEST,
        "unknown",
        f"version unknown ({described}; no min_vllm_version): assumed {newest} rules",
        tuple(notes),
    )

"""FlagDiffs → demands on recipe nodes (docs/alignment.md §5)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bot.align.compare import DRIFT, PARALLELISM_KEYS, Comparison
from bot.align.delta import moves_launch
from bot.align.demands.flags import FlagDemands
from bot.align.demands.image import ImageDemands
from bot.align.demands.ledger import Ledger
from bot.align.demands.model import Collected, SetDemand, flag_note
from bot.align.demands.placement import Placement
from bot.align.demands.variables import EnvDemands
from bot.align.model import OfferMode, Setting, Target
from bot.align.nodes import (
    MISSING,
    has_placeholder,
    lookup,
    text_value,
)
from bot.argv import option_name
from bot.benchmarks import LaunchLine
from bot.recipes.edit import NodePath, format_path
from bot.vllm import FlagDiff, Verdict, canonical_flag
from bot.vllm.versions import NEWEST, VersionResolution, fmt_version


class Collector:
    """Every difference of every representative comparison of one recipe → demands and notes
    (``out``); the flag, env and image rules are collaborators sharing one placement and
    one ledger."""

    def __init__(self, place: Placement) -> None:
        self.place = place
        self.recipe = place.recipe
        self.rules = place.rules
        self.out = Collected()
        self.ledger = Ledger(place.recipe, place.rules, self.out)
        self.flags = FlagDemands(place, self.ledger)
        self.env = EnvDemands(place, self.ledger)
        self.image = ImageDemands(place, self.ledger)

    def tp(self, target: Target) -> None:
        """The variant's tp on the benchmarked hardware (only under the stated evidence)."""
        if target.tp is None:
            return
        profile = target.profile
        path: NodePath = ("variants", profile.variant, "tp", profile.hardware)
        current = lookup(self.recipe.data, path[:-1])
        if current is not MISSING and not isinstance(current, Mapping):
            self.out.skipped.append(
                f"{profile.label}: variants.{profile.variant}.tp is one number for every GPU; "
                f"TP{target.tp} on {profile.hardware} is not written there"
            )
            return
        before = lookup(self.recipe.data, path)
        self.out.demands.append(
            SetDemand(
                node=format_path(path),
                value=str(target.tp),
                kind="tp",
                subject="--tensor-parallel-size",
                before=text_value(before) if before is not MISSING else None,
                path=path,
                create=before is MISSING,
                reason=f"every benchmarked point of variant {profile.variant} on "
                f"{profile.hardware} runs TP{target.tp} and its eval passed",
                placement="the variant's tp, keyed by the benchmarked hardware",
                target=profile.label,
            )
        )

    def collect(self, target: Target, comparison: Comparison) -> None:
        label = target.profile.label
        for note in comparison.notes:
            self.out.notes.append(f"{label}: {note}")
        self._findings(target, comparison, label)
        patch = patch_words(comparison.launch)
        if patch is not None:
            self.out.notes.append(
                f"{label}: {patch}: a recipe runs its image as published, so the settings this "
                "PR gives the lane are offered, not proposed, and its image is not pinned"
            )
        for diff in comparison.report.diffs:
            if diff.key in PARALLELISM_KEYS:
                continue  # representatives run the recipe's parallelism
            if diff.verdict is Verdict.UNKNOWN and self._offer_unknown(
                target, comparison, diff, label
            ):
                continue
            if self._older(target, comparison, diff):
                if not self._offer_older(target, comparison, diff, label):
                    self.out.preexisting.append(flag_note(diff, label))
                continue
            if patch is not None and diff.verdict is Verdict.DIFFERS:
                self._patched(target, comparison, diff, label, patch)
                continue
            mark = self.out.mark()
            self._rule(target, comparison, diff, label)
            self.ledger.settle_offer(diff, mark)

    def _rule(self, target: Target, comparison: Comparison, diff: FlagDiff, label: str) -> None:
        if diff.kind == "flag":
            self.flags.collect(target, comparison, diff, label)
        elif diff.kind == "env":
            self.env.collect(target, comparison, diff, label)
        else:
            self.image.collect(target, comparison, diff, label)

    def _offer_older(
        self, target: Target, comparison: Comparison, diff: FlagDiff, label: str
    ) -> bool:
        """Drift the benchmark PR did not introduce, planned like the PR's own and offered to
        tick, never proposed (maintainers answering a benchmark PR also closed older
        differences of its lanes: July's linked commits, 2 of the later half's 36 leaves).
        Only a differing value of a whole flag or variable the policy edits; False (nothing
        recorded) when it is not one; one that does not plan cleanly is listed as older drift."""
        if diff.verdict is not Verdict.DIFFERS or diff.kind not in ("flag", "env"):
            return False
        if "." in diff.flag:
            return False  # a field of a JSON flag: the PR's own fields of it would wait too
        launch = comparison.launch
        if not moves_launch(target.delta, launch.point, launch.arm, self.rules):
            return False  # the PR moved nothing of this lane's launch (#2323: metrics files)
        return self._offer(target, comparison, diff, label, "older")

    def _patched(
        self, target: Target, comparison: Comparison, diff: FlagDiff, label: str, patch: str
    ) -> None:
        """A setting of a lane that patched the installed engine before it launched: what the
        lane ran is the image plus that patch, which no recipe runs, so nothing of it is
        proposed. A flag or variable the policy edits is offered to tick (a maintainer may
        know the setting also works unpatched); the rest, the image with it, is listed as not
        carried. Support: a semantic guard, not a fitted rule: it changes no replay of June or
        July (no proposal there came from a patched lane; July's later half: no hit, no miss);
        on InferenceX main at 08-21 one of the 53 vLLM keys patches its engine (``git apply``
        of an MLA kernel diff, #2508)."""
        if diff.kind == "image":
            wanted = diff.bench_value if isinstance(diff.bench_value, str) else None
            current = comparison.rendering.image or None
            self.out.settings.append(
                Setting("image", "image", "image", wanted, current,
                        f"{patch}: the image alone is not what ran, so the recipe's is kept",
                        label)
            )  # fmt: skip
            return
        self.ledger.mode_what = patch
        try:
            offered = self._offer(target, comparison, diff, label, "patched")
        finally:
            self.ledger.mode_what = None
        cls = comparison.knob(diff)
        if not offered and cls is not None:
            self.out.settings.append(self.ledger.from_patched(diff, label, cls))

    def _offer_unknown(
        self, target: Target, comparison: Comparison, diff: FlagDiff, label: str
    ) -> bool:
        """A setting the benchmark PR sets where the recipe leaves vLLM a default recipe-sync
        cannot resolve (``--kv-cache-dtype fp8`` against ``auto``, which follows the
        checkpoint): planned like a differing value and offered to tick, never proposed, when
        the policy edits its class. The bot cannot tell whether the recipe already runs it;
        a maintainer can. False (nothing recorded) when it is not offered."""
        if diff.kind not in ("flag", "env") or not diff.bench_tokens:
            return False
        launch = comparison.launch
        name = diff.flag
        if target.delta is not None and not target.delta.touches(
            launch.point, launch.arm, diff.kind, name
        ):
            return False  # drift the PR did not introduce stays listed
        return self._offer(target, comparison, diff, label, "unknown")

    def _offer(
        self, target: Target, comparison: Comparison, diff: FlagDiff, label: str, mode: OfferMode
    ) -> bool:
        """Collect one difference only to offer it: planned like the PR's own settings, offered
        to tick, never proposed; one that does not plan cleanly is recorded as it was before
        the offer (Ledger.settle_offer). False, with nothing recorded, when nothing was
        planned for it (its class is not one the policy edits)."""
        mark = self.out.mark()
        self.ledger.mode = mode
        try:
            self._rule(target, comparison, replace(diff, verdict=Verdict.DIFFERS), label)
        finally:
            self.ledger.mode = None
        grew = self.out.grew(mark, "demands") or self.out.grew(mark, "skipped")
        if grew and self.ledger.settle_offer(diff, mark):
            return True
        self.ledger.forget_offer()
        self.out.rollback(mark)
        return False

    @staticmethod
    def _older(target: Target, comparison: Comparison, diff: FlagDiff) -> bool:
        """Drift the benchmark PR did not introduce: the recipe differs from a setting the
        PR left as its base launched it (docs/alignment.md §1b). Agreement (a ``same``
        verdict, which pins a node) and notes are planned as before. A variant the plan adds
        has no earlier state: its lane's settings are its content, not older drift."""
        if target.delta is None or target.new_variant or diff.verdict not in DRIFT:
            return False
        launch = comparison.launch
        name = "image" if diff.kind == "image" else diff.flag
        return not target.delta.touches(launch.point, launch.arm, diff.kind, name)

    @staticmethod
    def _older_finding(target: Target, comparison: Comparison, side: str, flag: str) -> bool:
        if target.delta is None:
            return False
        if side == "recipe" or not flag.startswith("--"):
            return True  # the recipe's own, or a token the parser could not place
        launch = comparison.launch
        return not target.delta.touches(launch.point, launch.arm, "flag", canonical_flag(flag))

    def _findings(self, target: Target, comparison: Comparison, label: str) -> None:
        """Flags the parser rejects drop out of the diff; an unknown value (a placeholder
        for something only known at run time) must not pass for agreement. A rejected flag
        the benchmark PR did not change (or one of the recipe's own) is older: noted, not
        blocking this PR."""
        ignored = {r.flag for r in (*self.rules.flags.front_end, *self.rules.flags.benchmark_only)}
        report = comparison.report
        for side, findings in (
            ("benchmark", report.bench_findings),
            ("recipe", report.recipe_findings),
        ):
            for finding in findings:
                if finding.severity != "error":
                    continue
                flag = option_name(finding.tokens[0]) if finding.tokens else ""
                if flag in ignored:
                    continue
                unknown_to_catalogue = (
                    side == "benchmark"
                    and finding.code == "unknown-flag"
                    and report.version.may_be_newer
                )
                # a config key outside its releases, judged on a version only assumed for the
                # build that ran (a nightly of any date): the lane launched with it
                assumed_version = (
                    side == "benchmark"
                    and finding.code == "unknown-config-key"
                    and report.version.source in ("nightly", "unknown")
                )
                run_time = has_placeholder(*finding.tokens)
                if run_time:
                    why = "its value is only known at run time, so it is not compared"
                elif unknown_to_catalogue:
                    # the build that ran may be newer than what recipe-sync knows of vLLM: the
                    # lane launched with it, so nothing says vLLM rejects it
                    why = (
                        f"recipe-sync knows vLLM's arguments to {fmt_version(NEWEST)} and "
                        f"{_build_words(report.version)}, so it is neither compared nor carried"
                    )
                elif assumed_version:
                    why = (
                        f"{_assumed_build_words(report.version)}, so whether it accepts the key "
                        "is not known; it is neither compared nor carried"
                    )
                else:
                    why = "vLLM would reject it"
                text = f"{label}: the {side}'s {finding.message}: {why}"
                # the lane launched with it: nothing says vLLM rejects it, so a note
                if unknown_to_catalogue or (assumed_version and not run_time):
                    self.out.notes.append(text)
                elif self._older_finding(target, comparison, side, flag):
                    self.out.notes.append(f"{text} (older: not changed by this PR)")
                else:
                    self.out.skipped.append(text)


def patch_words(launch: LaunchLine) -> str | None:
    """What the lane did to its engine, in words ("the lane patched vLLM before it launched
    (git apply … at file:line)"); None when it ran its image as published."""
    patch = launch.engine_patch
    if patch is None:
        return None
    where = patch.file if patch.line is None else f"{patch.file}:{patch.line}"
    return f"the lane patched vLLM before it launched ({patch.what.strip('`')} at {where})"


def _assumed_build_words(version: VersionResolution) -> str:
    """Why the version a finding was judged on is only assumed for the build a lane ran."""
    build = "a nightly build" if version.source == "nightly" else "a build"
    return (
        f"the lane's image is {build} of a vLLM version not known (recipe-sync assumed "
        f"{version.label})"
    )


def _build_words(version: VersionResolution) -> str:
    """Why the build a lane ran may know arguments the catalogue does not."""
    if version.source == "nightly":
        return "the lane's image is a nightly build, which may be newer"
    if version.source == "unknown":
        return "the lane's vLLM version is not known"
    return f"the lane runs vLLM {version.label}, newer than that"

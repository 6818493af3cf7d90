"""The planner's ledger: notes, settings not carried, and kept nodes (docs/alignment.md §5a)."""

from __future__ import annotations

from bot.align.compare import Comparison
from bot.align.demands.model import Collected, Fallback, KeepDemand, flag_note
from bot.align.model import EditKind, OfferMode, Setting, Target, WaitReason
from bot.align.nodes import (
    bench_field_tokens,
    bench_value_text,
    has_placeholder,
    host_local,
    lookup,
    text_value,
)
from bot.recipes.edit import NodePath, format_path
from bot.recipes.repo import Recipe
from bot.rules import KnobClass, Rules
from bot.vllm import FlagDiff, Verdict

# the knob policy's actions that carry a setting into the recipe (an edit or a feature)
_CARRIES = ("recipe", "recipe-with-eval", "feature")


class Ledger:
    """What the planner records besides demands, and the policy that decides it: differences
    listed and never edited, points that pin a node as it is, benchmark settings not carried
    (rules/policy.yaml knob_policy), and values known only at run time."""

    def __init__(self, recipe: Recipe, rules: Rules, out: Collected) -> None:
        self.recipe = recipe
        self.rules = rules
        self.out = out
        # (label, class, why, reason) of the difference being collected when carry() offers it
        self._offering: tuple[str, KnobClass, str, WaitReason] | None = None
        # collecting only to offer (Collector._offer): drift the benchmark PR did not
        # introduce ("older"), a setting whose vLLM default is not resolved ("unknown"), or
        # one of a lane that ran a patched engine ("patched")
        self.mode: OfferMode | None = None
        # what the offer says the setting waits on, when not its class's reason (the patch)
        self.mode_what: str | None = None

    def carry(
        self, target: Target, comparison: Comparison, diff: FlagDiff, label: str
    ) -> str | None:
        """How a differing benchmark setting is carried: ``edit``, ``pin`` or ``feature``;
        None when it is not (then it is recorded as a benchmark setting with its reason)."""
        cls = comparison.knob(diff)
        if cls is None:
            return "edit"  # the image: its own policy (_image)
        local = host_local(diff.bench_value) or host_local(bench_value_text(diff))
        if local is not None:
            # a staged draft model, a cache directory, a loopback address: another machine
            # has none of these (issue #24: /lustre/… and /data/models/… drafts never adopted)
            self.setting(diff, label, cls, f"{local}: the benchmark host's, not a recipe's")
            return None
        action = self.rules.policy.knob_policy.action(cls)
        why = self._knob_reason(diff)
        per_point = target.per_point.get((diff.kind, diff.key))
        if per_point is not None and action in ("recipe", "recipe-with-eval"):
            # the lane launched several values at this profile's parallelism: none of them
            # is the benchmark's, so a maintainer picks (bot/align/targets.py)
            self._offering = (label, cls, per_point, "per-point")
            return "edit"
        if self.mode is not None:
            # drift the PR did not introduce, or a default recipe-sync cannot resolve: offered
            # when the policy edits its class, and then only as a recipe edit (no pin, no
            # feature; nothing recorded otherwise)
            if action not in ("recipe", "recipe-with-eval"):
                return None
            self._offering = (label, cls, why, self.mode)
            return "edit"
        if action is None:
            self.out.to_classify.append(diff.flag)
            self.setting(diff, label, cls, "rules/knobs.yaml does not classify it; not edited")
            return None
        if action == "recipe":
            return "edit"
        if action == "pin":
            return "pin"
        if action == "recipe-with-eval":
            if target.evidence is not None or target.new_variant:
                return "edit"
            # planned like an edit, then offered to tick and never proposed (settle_offer):
            # without an eval a maintainer decides, and may run one
            self._offering = (label, cls, why, "eval")
            return "edit"
        if action == "reproduction" and "." not in diff.flag:
            # tuning chosen for the benchmark's sweep: offered to tick, never proposed, and
            # documented for reproduction either way. Linked leaves: 07-01…07-15 maintainers
            # carried 3 of one lane into the recipe, 07-16…07-31 2 (both in the checklist);
            # of the distinct tuning candidates offered, 8 of 46 and 0 of 23 were adopted.
            # Not a field of a JSON flag: it would hold the flag's other fields back with it
            self._offering = (label, cls, why, "tuning")
            return "edit"
        if action == "feature":
            scenario = comparison.launch.point.scenario
            workload = self.rules.policy.workload_feature(scenario)
            features = self.recipe.data.get("features")
            if workload is None:
                self.setting(diff, label, cls, f"{why}; no workload feature for {scenario}")
            elif not isinstance(features, dict) or workload.feature not in features:
                # maintainers map settings to the structure a recipe has; a feature, variant
                # or strategy the bot made up was never adopted (issue #24: 0 of 51 edits)
                self.setting(
                    diff, label, cls,
                    f"{why}; the recipe has no {workload.feature} feature and recipe-sync "
                    "does not add recipe structure: documented for reproduction",
                )  # fmt: skip
            elif diff.kind != "flag":
                self.setting(diff, label, cls, f"{why}; a recipe feature carries args, not env")
            else:
                return "feature"
            return None
        self.setting(diff, label, cls, why)
        return None

    def settle_offer(self, diff: FlagDiff, mark: dict[str, int]) -> bool:
        """After a difference carry() offered is collected: its demands are kept, marked to be
        offered, when they were planned cleanly; else they are taken back (a candidate that
        cannot be written is not worth a blocking line) and it is recorded as it would have
        been without the offer. False when carry() offered nothing."""
        offering, self._offering = self._offering, None
        if offering is None:
            return False
        label, cls, why, reason = offering
        fallback: Fallback
        if reason in ("older", "unknown"):
            fallback = flag_note(diff, label)  # older drift, an unknown comparison
        elif reason == "eval":
            fallback = self._not_carried(
                diff, label, cls, f"{why}; no passing eval at these settings"
            )
        elif reason == "patched":
            fallback = self.from_patched(diff, label, cls)
        else:
            fallback = self._not_carried(diff, label, cls, why)
        if self.out.grew(mark, "skipped"):
            self.out.rollback(mark)
            self.out.fall_back(fallback)
            return True
        self.out.offer_only.setdefault(diff.flag, (reason, self.mode_what or why))
        self.out.offer_fallback.setdefault(diff.flag, []).append(fallback)
        return True

    def forget_offer(self) -> None:
        """carry() offered a difference nothing was planned for: there is nothing to settle."""
        self._offering = None

    def from_patched(self, diff: FlagDiff, label: str, cls: KnobClass) -> Setting:
        """A setting of a lane that patched its engine, as not carried: its class's reason,
        and, where the policy would carry it from an unpatched lane, that the patch is why."""
        why = self._knob_reason(diff)
        if self.rules.policy.knob_policy.action(cls) in _CARRIES:
            why += "; not carried from a lane that patched vLLM"
        return self._not_carried(diff, label, cls, why)

    def _knob_reason(self, diff: FlagDiff) -> str:
        """What the setting is, as rules/knobs.yaml says."""
        return self.rules.knobs.reason("env" if diff.kind == "env" else "flag", diff.flag)

    def setting(self, diff: FlagDiff, label: str, cls: KnobClass, why: str) -> None:
        self.out.settings.append(self._not_carried(diff, label, cls, why))

    @staticmethod
    def _not_carried(diff: FlagDiff, label: str, cls: KnobClass, why: str) -> Setting:
        return Setting(
            knob=cls.value,
            kind=diff.kind,
            subject=diff.flag,
            bench=" ".join(bench_field_tokens(diff)) or None,
            recipe=" ".join(diff.recipe_tokens) or None,
            reason=why,
            target=label,
        )

    def listed(self, diff: FlagDiff, label: str, node: str | None = None) -> bool:
        """Differences that are reported, never edited; True when ``diff`` is one."""
        verdict = diff.verdict
        if verdict is Verdict.EQUIVALENT:
            self.out.defaults.append(flag_note(diff, label, node))
        elif verdict is Verdict.BENCHMARK_ONLY:
            self.out.benchmark_only.append(flag_note(diff, label, node))
        elif verdict is Verdict.FRONT_END_ONLY:
            self.out.front_end.append(flag_note(diff, label, node))
        elif verdict is Verdict.UNKNOWN:
            self.out.unknown.append(flag_note(diff, label, node))
        else:
            return False
        return True

    def keep(self, path: NodePath, kind: EditKind, diff: FlagDiff, label: str) -> None:
        value = text_value(lookup(self.recipe.data, path))
        self.out.demands.append(
            KeepDemand(node=format_path(path), value=value, kind=kind, subject=diff.flag,
                       path=path, reason=diff.reason, placement="", target=label)
        )  # fmt: skip

    def run_time_value(self, diff: FlagDiff, label: str) -> bool:
        """True (and said) when the benchmark's value is known only at run time."""
        if not has_placeholder(bench_value_text(diff), *diff.bench_tokens):
            return False
        self.out.skipped.append(
            f"{label}: {diff.flag} is not statically known in the launch line "
            f"({' '.join(diff.bench_tokens)}); not copied"
        )
        return True

"""Demands of image differences (docs/alignment.md §5a: images)."""

from __future__ import annotations

from bot.align.compare import DRIFT, Comparison
from bot.align.demands.model import SetDemand, flag_note
from bot.align.demands.rule import Rule
from bot.align.model import Setting, Target
from bot.align.nodes import (
    has_placeholder,
    in_recipe,
    lookup,
    text_value,
)
from bot.recipes.edit import NodePath, format_path, parse_path
from bot.vllm import FlagDiff, Verdict


class ImageDemands(Rule):
    """An image difference → a re-pin where the recipe pins it, for the benchmarked hardware
    when the pin is shared; a floating tag keeps floating (docs/alignment.md §5a)."""

    def collect(self, target: Target, comparison: Comparison, diff: FlagDiff, label: str) -> None:
        """A floating recipe image (``latest``, ``nightly``, none) keeps floating: the
        benchmark's tag is cited, not pinned. A pinned tag gets the newer pin when the
        benchmark ran it and its eval passed, at the narrowest layer that covers what was
        verified."""
        origin = comparison.rendering.image_origin
        if diff.verdict is Verdict.SAME or diff.verdict not in DRIFT:
            if diff.verdict is Verdict.SAME and origin and in_recipe(origin):
                self.ledger.keep(parse_path(origin), "image", diff, label)
            elif diff.verdict is not Verdict.SAME:
                self.out.unknown.append(flag_note(diff, label, origin))
            return
        wanted = diff.bench_value if isinstance(diff.bench_value, str) else None
        current = comparison.rendering.image or ""
        if comparison.floating_image or floating_tag(current):
            self.out.settings.append(
                Setting("image", "image", "image", wanted, current or None,
                        f"the recipe floats on {current or 'the default image'}: it keeps "
                        "floating; the benchmark's tag is cited, not pinned", label)
            )  # fmt: skip
            return
        if not origin or not in_recipe(origin) or wanted is None or has_placeholder(wanted):
            self.out.skipped.append(f"{label}: image {wanted} has no recipe node to pin it at")
            return
        if target.evidence is None:
            self.out.settings.append(
                Setting("image", "image", "image", wanted, current or None,
                        "no passing eval on that image: the recipe's pin is kept", label)
            )  # fmt: skip
            return
        path = parse_path(origin)
        users = self.place.others(path, origin, target.profile)
        placement = "the image's provenance in the rendering; every rendering drawing from it "
        placement += "was benchmarked"
        create = False
        shadows: NodePath | None = None
        if users:
            create = True
            placement = (
                f"overrides {origin} for {target.profile.hardware} only: it is "
                + self.place.scope_note(users)
            )
            shadows = path
            path = ("variants", target.profile.variant, "hardware_overrides",
                    target.profile.hardware, "docker_image")  # fmt: skip
        self.out.demands.append(
            SetDemand(
                node=format_path(path),
                value=wanted,
                kind="image",
                subject="image",
                before=text_value(lookup(self.recipe.data, path)) if not create else None,
                path=path,
                create=create,
                reason=diff.reason,
                placement=placement,
                target=label,
                shadows=shadows,
            )
        )


def floating_tag(image: str) -> bool:
    """``repo``, ``repo:latest``, ``repo:nightly``: a tag that moves with releases."""
    tail = image.rsplit("/", 1)[-1]
    if "@" in tail:
        return False
    tag = tail.split(":", 1)[1] if ":" in tail else ""
    return tag in ("", "latest", "nightly")

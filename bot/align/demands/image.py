"""Demands of image differences (docs/alignment.md §5a: images)."""

from __future__ import annotations

import re

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
        channel = nightly_channel(wanted)
        if target.evidence is None and channel is not None and channel != current:
            self._channel(target, diff, label, wanted, channel)
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

    def _channel(
        self, target: Target, diff: FlagDiff, label: str, build: str, channel: str
    ) -> None:
        """A lane on a nightly build gets the nightly channel for its variant x GPU: the
        settings it carries need that vLLM, and a transient build tag is not a recipe's pin
        (MiniMax-M3 #581 and #619 wrote ``…-rocm:nightly`` for lanes on ``nightly-<sha>``;
        "don't hard-code a transient tag", #635)."""
        profile = target.profile
        path: NodePath = (
            "variants", profile.variant, "hardware_overrides", profile.hardware, "docker_image"
        )  # fmt: skip
        before = lookup(self.recipe.data, path)
        self.out.demands.append(
            SetDemand(
                node=format_path(path),
                value=channel,
                kind="image",
                subject="image",
                before=text_value(before) if isinstance(before, str) else None,
                path=path,
                create=not isinstance(before, str),
                reason=f"the benchmark runs the nightly build {build}; the recipe follows its "
                f"channel ({channel}), not the transient build tag",
                placement=f"the image of {profile.variant} on {profile.hardware} "
                "(variant x GPU): the lane's other renderings keep their image",
                target=label,
            )
        )


NIGHTLY_BUILD = re.compile(r"^(?P<channel>nightly)-[0-9a-f]{7,40}$|^(?P<dated>nightly)-\d{8}$")


def nightly_channel(image: str | None) -> str | None:
    """``repo:nightly-<sha>`` (a build of the nightly channel) → ``repo:nightly``."""
    if not image or "@" in image:
        return None
    repo, _, tag = image.rpartition(":")
    if not repo or "/" in tag or not NIGHTLY_BUILD.match(tag):
        return None
    return f"{repo}:nightly"


def floating_tag(image: str) -> bool:
    """``repo``, ``repo:latest``, ``repo:nightly``: a tag that moves with releases."""
    tail = image.rsplit("/", 1)[-1]
    if "@" in tail:
        return False
    tag = tail.split(":", 1)[1] if ":" in tail else ""
    return tag in ("", "latest", "nightly")

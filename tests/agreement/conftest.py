"""Small synthetic histories for the linker and the scorer."""

from __future__ import annotations

from bot.agreement.recipes_history import GuideAddition, MaintainerCommit
from bot.agreement.taxonomy import Gpu, Taxonomy
from bot.backtest.model import LaunchDigest
from bot.recipes.leaves import LeafChange, diff_leaves, recipe_leaves

DAY = 86400
RECIPE = "models/x/M.yaml"
TAXONOMY = Taxonomy(
    {
        "mi300x": Gpu("mi300x", "amd", ("amd",), "MI300X"),
        "mi355x": Gpu("mi355x", "amd", ("amd",), "MI355X"),
        "b200": Gpu("b200", "nvidia", ("blackwell",), "B200"),
    }
)


def commit(
    sha: str,
    day: int,
    before: dict[str, object],
    after: dict[str, object],
    *,
    guide: str = "",
    subject: str = "Update the recipe",
) -> MaintainerCommit:
    changes: tuple[LeafChange, ...] = diff_leaves(
        recipe_leaves(RECIPE, before), recipe_leaves(RECIPE, after)
    )
    additions = (GuideAddition(RECIPE, guide),) if guide else ()
    return MaintainerCommit(sha, day * DAY, subject, "", changes, additions, (), (RECIPE,))


def digest(
    hardware: str,
    env: dict[str, str],
    args: dict[str, str] | None = None,
    *,
    changed: tuple[str, ...] | None = None,
    variant: str = "mxfp8",
    key: str = "m-fp8-mi300x-vllm",
) -> LaunchDigest:
    return LaunchDigest(
        key=key,
        recipe=RECIPE,
        variant=variant,
        hardware=hardware,
        strategy="single_node_tp",
        status="represents",
        tp=8,
        scenario="fixed-seq-len",
        image="vllm/vllm-openai-rocm:nightly-abc",
        args=tuple((args or {}).items()),
        env=tuple(env.items()),
        changed=changed or (),
        new=changed is None,
    )

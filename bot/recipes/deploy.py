"""Render one resolved profile into upstream's JSON shape, per deploy type
(docs/spec/recipe-rendering.md §3–§4).

A *profile* is fully resolved (recipe, variant key, hardware, strategy, node count, enabled
features, mode picks, PD node shapes, Mooncake serving strategy). The JSON API's choices of
those live in ``select.py``; here we only turn a profile into commands:

* single node (also a multi-node strategy asked for with one node),
* multi-node head + one command per follower rank,
* pd_cluster prefill / decode pools and the router,
* Mooncake KV-store composition around a serving strategy.

Each deploy type has its module (``nodes.py`` single and multi-node, ``pd.py``, ``mooncake.py``)
over ``rendering.py``: the profile and result types, the image and a command's pip/Docker forms.
"""

from __future__ import annotations

from typing import Any

from bot.recipes.mooncake import render_kv
from bot.recipes.nodes import HEAD_ADDR, render_multi, render_single
from bot.recipes.pd import render_pd
from bot.recipes.rendering import Rendered, ResolvedRendering, variant_image
from bot.recipes.repo import RecipesRepo


def render_profile(
    repo: RecipesRepo, profile: ResolvedRendering, provenance: bool = False
) -> Rendered:
    """Render ``profile``; raises :class:`RenderError` where upstream's renderer throws.

    With ``provenance`` every command also carries the origin of each unit and env var.
    """
    recipe, variant_key, hw = profile.recipe, profile.variant_key, profile.hw
    image, image_origin = variant_image(recipe, variant_key, hw)
    common: dict[str, Any] = {
        "hardware": profile.hw.id,
        "strategy": profile.strategy.name,
        "variant": profile.variant_key,
        "node_count": profile.nodes,
        "deploy_type": profile.strategy.deploy_type,
        "env": {},
    }
    if image is not None:
        common["docker_image"] = image
    strategy = profile.strategy
    if strategy.is_kv:
        body, commands = render_kv(profile, image, provenance)
    elif strategy.is_pd:
        body, commands = render_pd(profile, image, provenance)
    elif strategy.is_multi_node and profile.nodes > 1:
        body, commands = render_multi(profile, strategy, image, HEAD_ADDR, None, provenance)
    else:
        body, commands = render_single(profile, strategy, image, None, provenance)
    common.update(body)  # keys already present keep their position, as in JS
    return Rendered(common, tuple(commands), image, image_origin)

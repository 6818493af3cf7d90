"""The recipes repository model: load, render with upstream parity, provenance, JSON API.

Public API (what other modules call):

* :func:`load_recipes` (``FileSource`` → :class:`RecipesRepo`): parse a recipes checkout with
  the builder's YAML semantics; bad input raises ``InputError`` naming file, key and line.
* :func:`render` (``RecipesRepo``, :class:`RenderRequest` → :class:`Rendering`): one profile,
  with every argv unit, env var and the image traced to its YAML path.
* :func:`build_api` (→ ``{"<org>/<repo>/hw/<hw>.json" | ".../hw/<hw>/strategies/<s>.json":
  JSON}``): exactly the rendering files the upstream builder writes under ``public/**/hw/**``;
  ``only_recipes={"models/x/y.yaml"}`` re-renders a subset.
* :func:`write_api` (→ :class:`ApiSummary`): write every file the builder writes.

The layering order lives in ``layers.py``, the deploy-type shapes in ``deploy.py``, the
JSON API's choices (hardware, strategies, nodes) in ``select.py``.
"""

from __future__ import annotations

from bot.recipes.api import ApiSummary, build_api, write_api
from bot.recipes.layers import ArgOrigin, EnvOrigin, RenderError
from bot.recipes.render import (
    Coordinates,
    Rendering,
    RenderRequest,
    api_coordinates,
    render,
    rendering_as_json,
)
from bot.recipes.rendering import CommandRendering
from bot.recipes.repo import HardwareProfile, Recipe, RecipesRepo, Strategy, load_recipes

__all__ = [
    "ApiSummary",
    "ArgOrigin",
    "CommandRendering",
    "Coordinates",
    "EnvOrigin",
    "HardwareProfile",
    "Recipe",
    "RecipesRepo",
    "RenderError",
    "RenderRequest",
    "Rendering",
    "Strategy",
    "api_coordinates",
    "build_api",
    "load_recipes",
    "render",
    "rendering_as_json",
    "write_api",
]

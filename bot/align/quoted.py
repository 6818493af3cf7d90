"""What the texts quote from the recipes repository, read here so that :mod:`bot.present`
reads none: the hardware's names, each aligned recipe's title and feature labels, and the
command the edited recipe renders for the benchmarked profile. Plain frozen values: no
repository, no rendering."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.align.nodes import hw_label
from bot.recipes import RecipesRepo, Rendering
from bot.recipes.command_text import quote_value
from bot.recipes.jsvalues import as_dict, js_str
from bot.recipes.repo import Recipe


@dataclass(frozen=True)
class HardwareName:
    label: str  # its display name (:func:`bot.align.nodes.hw_label`)
    brand: str  # the key its images are chosen by: "amd", "nvidia", "tpu", …


@dataclass(frozen=True)
class RecipeName:
    title: str  # ``meta.title``, or the file's name without ``.yaml``
    variants: int  # how many variants the recipe serves
    opt_in: tuple[str, ...]  # ``opt_in_features``
    modes: Mapping[str, Mapping[str, str]]  # feature → mode → its label (where it has one)


@dataclass(frozen=True)
class RecipesNames:
    """How the texts name the recipes repository's hardware and the run's recipe files."""

    hardware: Mapping[str, HardwareName]  # taxonomy order
    recipes: Mapping[str, RecipeName]  # recipe path → its names (the run's outcomes)

    def hw_label(self, hw_id: str) -> str:
        """The hardware's display name; an id the taxonomy does not know, upper-case (as
        :func:`bot.align.nodes.hw_label`)."""
        found = self.hardware.get(hw_id)
        return found.label if found is not None else hw_id.upper()


def _recipe_name(recipe: Recipe) -> RecipeName:
    title = as_dict(recipe.data.get("meta")).get("title")
    opt_in = recipe.data.get("opt_in_features") or []
    modes = {
        feature: {
            mode: str(label)
            for mode, data in as_dict(as_dict(value).get("modes")).items()
            if (label := as_dict(data).get("label"))
        }
        for feature, value in as_dict(recipe.data.get("features")).items()
    }
    return RecipeName(
        title=str(title) if title else recipe.path.rsplit("/", 1)[-1].removesuffix(".yaml"),
        variants=len(recipe.variants),
        opt_in=tuple(opt_in) if isinstance(opt_in, list) else (),
        modes=modes,
    )


def recipes_names(recipes: RecipesRepo, paths: Iterable[str]) -> RecipesNames:
    """The names of every hardware profile and of the recipe files at ``paths``."""
    return RecipesNames(
        hardware={
            hw_id: HardwareName(hw_label(recipes, hw_id), hw.docker_brand)
            for hw_id, hw in recipes.hardware.items()
        },
        recipes={
            path: _recipe_name(recipes.by_path[path])
            for path in dict.fromkeys(paths)
            if path in recipes.by_path
        },
    )


@dataclass(frozen=True)
class GeneratedCommand:
    """The benchmarked profile's command as the edited recipe renders it: the PR body's
    ``### Generated`` block and what the body says of it."""

    env: tuple[str, ...]  # ``NAME=value``, the value quoted as the recipes site quotes it
    command: str  # the command line as the recipes site prints it
    argv: tuple[str, ...]
    image: str | None
    paths: tuple[str, ...]  # the YAML path each argument unit came from, argv order


def generated_command(rendering: Rendering) -> GeneratedCommand:
    first = rendering.commands[0]
    return GeneratedCommand(
        env=tuple(f"{name}={quote_value(js_str(value))}" for name, value in first.env.items()),
        command=str(rendering.json.get("command") or " ".join(first.argv)),
        argv=first.argv,
        image=rendering.image,
        paths=tuple(unit.path for unit in first.args),
    )

"""The generated command of the benchmarked profile, as the edited recipe renders it."""

from __future__ import annotations

from bot import markdown as md
from bot.align.plan import Target
from bot.align.quoted import GeneratedCommand, RecipesNames

ENV_WIDTH = 100  # the env prefix line is wrapped like the seed's


def command_block(generated: GeneratedCommand) -> str:
    lines: list[str] = []
    current = ""
    for item in generated.env:
        if current and len(current) + 1 + len(item) > ENV_WIDTH:
            lines.append(current)
            current = item
        else:
            current = f"{current} {item}".strip()
    if current:
        lines.append(current)
    body = "\n".join(lines) + ("\n\n" if lines else "") + generated.command
    return md.fenced(body, "bash")


def features_label(target: Target, names: RecipesNames) -> str:
    recipe = names.recipes[target.profile.recipe_path]
    labels: list[str] = []
    for name in target.profile.features:
        if name not in recipe.opt_in:
            continue
        label = name.replace("_", " ")
        mode = target.profile.modes.get(name)
        if mode:
            label += f" ({recipe.modes.get(name, {}).get(mode) or mode})"
        labels.append(label)
    return " + ".join(labels) or "default features"

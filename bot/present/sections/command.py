"""The generated command of the benchmarked profile, as the edited recipe renders it."""

from __future__ import annotations

from bot import markdown as md
from bot.align.plan import Target
from bot.recipes import RecipesRepo, Rendering
from bot.recipes.command_text import quote_value
from bot.recipes.jsvalues import as_dict, js_str

ENV_WIDTH = 100  # the env prefix line is wrapped like the seed's


def command_block(rendering: Rendering) -> str:
    env = [
        f"{name}={quote_value(js_str(value))}" for name, value in rendering.commands[0].env.items()
    ]
    lines: list[str] = []
    current = ""
    for item in env:
        if current and len(current) + 1 + len(item) > ENV_WIDTH:
            lines.append(current)
            current = item
        else:
            current = f"{current} {item}".strip()
    if current:
        lines.append(current)
    command = str(rendering.json.get("command") or " ".join(rendering.commands[0].argv))
    body = "\n".join(lines) + ("\n\n" if lines else "") + command
    return md.fenced(body, "bash")


def features_label(target: Target, recipes: RecipesRepo) -> str:
    recipe = recipes.by_path[target.profile.recipe_path]
    opt_in = recipe.data.get("opt_in_features") or []
    features = as_dict(recipe.data.get("features"))
    names: list[str] = []
    for name in target.profile.features:
        if name not in opt_in:
            continue
        label = name.replace("_", " ")
        mode = target.profile.modes.get(name)
        if mode:
            mode_label = as_dict(as_dict(as_dict(features.get(name)).get("modes")).get(mode))
            label += f" ({mode_label.get('label') or mode})"
        names.append(label)
    return " + ".join(names) or "default features"

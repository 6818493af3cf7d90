"""The audit page's heat map: recipe × hardware, the share of compared launch lines that
drift, and its legend (read off the map's own cells); text widths for every chart's labels."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from bot.audit.groups import RecipeGroup
from bot.audit.model import AuditRow


def _e(text: str) -> str:
    return escape(text, quote=True)


def recipe_name(recipe: str) -> str:
    return recipe.rsplit("/", 1)[-1].removesuffix(".yaml")


def heatmap_svg(groups: Sequence[RecipeGroup]) -> str:
    """Recipe × hardware: the share of compared launch lines that drift, with counts."""
    recipes = [g for g in groups if g.has_recipe]
    hardware = sorted({row.hardware for g in recipes for row in g.rows})
    names = [recipe_name(g.recipe) for g in recipes]
    label_w = max(120, text_width(max(names, key=len, default="")) + 16)
    cell_w = max(64, text_width(max(hardware, key=len, default="")) + 10)
    cell_h, top = 24, 28
    width = label_w + max(1, len(hardware)) * cell_w + 10
    height = top + max(1, len(recipes)) * cell_h + 10
    parts = [
        f"<svg id=heatmap xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' aria-label='serving drift by recipe and "
        "hardware'><title>Serving drift: drifted / compared launch lines</title>"
    ]
    for col, hw in enumerate(hardware):
        x = label_w + col * cell_w + cell_w / 2
        parts.append(f"<text x='{x:.0f}' y='18' text-anchor='middle'>{_e(hw)}</text>")
    if not recipes:
        parts.append(f"<text x='10' y='{top + 16}'>no launch line maps to a recipe</text>")
    for index, group in enumerate(recipes):
        y = top + index * cell_h
        name = recipe_name(group.recipe)
        parts.append(f"<text x='{label_w - 8}' y='{y + 16}' text-anchor='end'>{_e(name)}</text>")
        for col, hw in enumerate(hardware):
            rows, compared, drifted = _cell(group, hw)
            if not rows:
                continue
            x = label_w + col * cell_w
            if compared:
                share = drifted / len(compared)
                fill = heat_color(share)
                text = f"{drifted}/{len(compared)}"
            else:  # nothing compared here: unmapped / unresolved only
                fill, text = "#eaeef2", "–"
            model = rows[0].model
            parts.append(
                f"<g class=cell data-filter='model={_e(model)}&amp;hardware={_e(hw)}' "
                f"data-recipe='{_e(name)}' data-hardware='{_e(hw)}' data-drifted='{drifted}' "
                f"data-compared='{len(compared)}'><rect x='{x + 1}' y='{y + 1}' "
                f"width='{cell_w - 2}' height='{cell_h - 2}' rx='3' fill='{fill}'/>"
                f"<text x='{x + cell_w / 2:.0f}' y='{y + 16}' text-anchor='middle'>{text}</text>"
                f"<title>{_e(name)} on {_e(hw)}: {drifted} of {len(compared)} compared launch "
                f"lines drift ({len(rows) - len(compared)} not comparable)</title></g>"
            )
    parts.append("</svg>")
    return "".join(parts)


CHAR_W = 7.2  # px per character of 12 px system-ui, generous: a label must never be cut


def text_width(text: str) -> int:
    """An upper estimate of ``text``'s width in the charts' font (SVG text does not wrap)."""
    return round(len(text) * CHAR_W)


def _cell(group: RecipeGroup, hardware: str) -> tuple[list[AuditRow], list[AuditRow], int]:
    """One heat-map cell: its launch lines, those compared with the recipe, how many drift."""
    rows = [r for r in group.rows if r.hardware == hardware]
    compared = [r for r in rows if r.status in ("drifted", "aligned")]
    return rows, compared, sum(1 for r in compared if r.status == "drifted")


def heatmap_legend(groups: Sequence[RecipeGroup]) -> str:
    """What a cell says, visible under the map (the tooltips repeat it per cell), read off
    the map's own busiest cell (the most drifted of those) so the example is one to find."""
    ramp = "".join(
        f"<span class=swatch style='background:{heat_color(share)}'></span>"
        for share in (0, 0.25, 0.5, 0.75, 1)
    )
    cells = [
        (len(compared), drifted, recipe_name(group.recipe), hw)
        for group in groups
        if group.has_recipe
        for hw in sorted({row.hardware for row in group.rows})
        for _, compared, drifted in [_cell(group, hw)]
        if compared
    ]
    example = ""
    if cells:
        compared, drifted, name, hw = max(cells, key=lambda c: (c[0], c[1]))
        example = (
            f"<span><b>{drifted}/{compared}</b> {_e(name)} on {_e(hw)}: {drifted} of the "
            f"{compared} launch lines compared with the recipe drift (counted differences "
            "only)</span>"
        )
    return (
        "<div class=legend id=heatmap-legend>"
        f"{example}"
        f"<span>{ramp} none drift → all drift</span>"
        "<span><span class=swatch style='background:#eaeef2'></span><b>–</b> launch lines "
        "exist but none could be compared (unmapped or unresolved)</span>"
        "<span>empty: no launch line of this recipe on this hardware</span>"
        "<span>click a cell to filter the table</span></div>"
    )


def heat_color(share: float) -> str:
    """Pale green (nothing drifts) to the drifted red (everything drifts)."""
    low, high = (0xDA, 0xFB, 0xE1), (0xCF, 0x22, 0x2E)
    return "#" + "".join(
        f"{round(x + (y - x) * share):02x}" for x, y in zip(low, high, strict=True)
    )

"""``rules/practice.yaml``: what the recipes history says maintainers do, per knob class.

Written by ``recipe-sync score --practice`` (never by hand) and quoted by the PR text, so the
practice behind an edit is a computed number, not a claim.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ClassPractice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    linked: int = Field(ge=0, description="leaves of linked maintainer changes of this class")
    placements: dict[str, int] = Field(default_factory=dict)
    proposed: int = Field(ge=0, description="the bot's proposals of this class, scored")
    adopted: int = Field(ge=0, description="of which maintainers made the same value")


class KindPractice(BaseModel):
    """The bot's scored proposals of one kind (knob class / change / vendor) and how many
    maintainers adopted, in how many distinct maintainers' commits."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    proposed: int = Field(ge=0)
    adopted: int = Field(ge=0)
    authors: int = Field(default=0, ge=0, description="distinct authors of the adoptions")


class PracticeRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    source: str = ""
    classes: dict[str, ClassPractice] = Field(default_factory=dict)
    # "<knob class>/<change>/<vendor or any>" → counts (bot.align.confidence reads them)
    kinds: dict[str, KindPractice] = Field(default_factory=dict)

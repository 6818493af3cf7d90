"""README.md stays true: its CLI reference is the parser's (regenerate with
`recipe-sync help --markdown --update README.md`), its links stay inside the repository and
the screenshots it shows exist and stay small."""

from __future__ import annotations

import re
from pathlib import Path

from bot.commands.main import build_parser
from bot.commands.reference import END, START, markdown_reference

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def test_cli_reference_is_generated_from_the_parser() -> None:
    text = README.read_text(encoding="utf-8")
    block = text.split(START, 1)[1].split(END, 1)[0]
    assert block == "\n" + markdown_reference(build_parser()), (
        "README.md's CLI reference is stale: run `recipe-sync help --markdown --update README.md`"
    )
    for option in ("--bench-ref", "--recipes-ref", "--jobs", "--format", "--history"):
        assert f"`{option}`" in block


def test_every_command_is_in_the_reference() -> None:
    text = README.read_text(encoding="utf-8")
    for name in (
        "align",
        "audit",
        "backtest",
        "render",
        "extract",
        "diff",
        "evidence",
        "serve",
        "worker",
        "rules",
        "fixtures",
        "demo",
        "help",
    ):
        assert f"#### `recipe-sync {name}`" in text


def test_links_stay_inside_the_repository() -> None:
    text = README.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "#")):
            continue
        path = (ROOT / target.split("#", 1)[0]).resolve()
        assert path.is_relative_to(ROOT), f"README links outside the repository: {target}"
        assert path.exists(), f"README links a missing file: {target}"


def test_screenshots_are_small() -> None:
    text = README.read_text(encoding="utf-8")
    images = [t for t in LINK.findall(text) if t.endswith(".png")]
    assert "docs/dashboard-real.png" in images
    for image in images:
        assert (ROOT / image).stat().st_size < 400_000, image


def test_statuses_and_exit_codes_are_defined() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("### Statuses", 1)[1].split("### Exit codes", 1)[0]
    for status in (
        "`aligned`",
        "`drifted (n)`",
        "`unmapped (why)`",
        "`unresolved (what)`",
        "context",
        "out of scope",
    ):
        assert f"| {status} |" in section
    codes = text.split("### Exit codes", 1)[1].split("###", 1)[0]
    assert all(f"| {code} |" in codes for code in (0, 1, 2))

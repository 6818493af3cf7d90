"""`make docs-check`: the README is a short map and what the documents say stays true.

- README.md is at most 250 lines, quotes no figure it does not re-run, and names no path that
  only exists on a developer's machine (`../shared` is dead on a GitHub clone).
- Every relative link of README.md, docs/ and the module READMEs resolves, anchors included.
- No developer-machine path anywhere in them; `/tmp/…` only inside fenced blocks (scratch
  directories of example commands), never in prose or links.
- A block marked `<!-- docs-check: NAME -->` is re-produced here and compared: each line of
  the block (but `…`) is a line of what NAME produces, in order. The expensive figures over
  real histories are in docs/measurements.md with their command and date instead.
- docs/cli.md's reference is the parser's (`recipe-sync help --markdown --update docs/cli.md`).
"""

from __future__ import annotations

import contextlib
import io
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.commands.main import build_parser, main
from bot.commands.reference import END, START, markdown_reference

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CLI = ROOT / "docs" / "cli.md"
DOCUMENTS = [
    README,
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "bot").glob("*/README.md")),
    ROOT / "fixtures" / "README.md",
]
MAX_README_LINES = 250
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
MARKER = re.compile(r"^<!-- docs-check: ([a-z-]+) -->$")
# Directories only a developer's machine has; /tmp is allowed in example commands only.
MACHINE_PATH = re.compile(r"(?<![\w.~])/(?:work|home|Users)/")
# The specifications quote the benchmark repository's own runner and container paths.
QUOTED_ENVIRONMENT = ROOT / "docs" / "spec"
TMP_PATH = re.compile(r"(?<![\w.~])/tmp/")
# A count or a measurement: a number followed by what it counts or its unit. Issue and PR
# numbers (#3058), versions and dates are not figures.
FIGURE = re.compile(
    r"(?<![#\w.\-/])\d[\d,.]*\s*(?:%|×|ms\b|s\b|min\b|MiB\b|KB\b|MB\b|GiB\b|"
    r"(?:aligned|drifted|unmapped|unresolved|edits?|renderings?|launch lines?|PRs?|keys?|"
    r"points?|words?|lines?|files?|commands?|rows?|tests?|flags?|models?|recipes?)\b)"
)
ELLIPSIS = {"…", "...", "+…"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of ``text`` outside fenced blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for _, line in _prose_lines(path.read_text(encoding="utf-8")):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = _slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _broken_links(document: Path, text: str | None = None) -> list[str]:
    broken = []
    if text is None:
        text = document.read_text(encoding="utf-8")
    for number, line in _prose_lines(text):
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            where = f"{_rel(document)}:{number}: {target}"
            name, _, anchor = target.partition("#")
            path = (document.parent / name).resolve() if name else document
            if not path.is_relative_to(ROOT):
                broken.append(f"{where} (outside the repository)")
            elif not path.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{where} (no heading with that anchor)")
    return broken


def _checked_blocks(text: str) -> Iterator[tuple[str, int, list[str]]]:
    """(producer name, line number, lines) of each block marked ``<!-- docs-check: NAME -->``:
    the fenced block or table right below the marker."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        marker = MARKER.match(line)
        if not marker:
            continue
        start = index + 1
        if FENCE.match(lines[start]):
            end = next(i for i in range(start + 1, len(lines)) if FENCE.match(lines[i]))
            yield marker.group(1), start + 1, lines[start + 1 : end]
        else:
            end = start
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            assert end > start, f"line {index + 1}: a docs-check marker above no block"
            yield marker.group(1), start + 1, lines[start:end]


def _missing(quoted: list[str], produced: str) -> list[str]:
    """Lines of ``quoted`` (an excerpt: ``…`` skips) not found, in order, in ``produced``."""
    output = [line.rstrip() for line in produced.splitlines()]
    missing, at = [], 0
    for line in (q.rstrip() for q in quoted):
        if line.strip() in ELLIPSIS or not line:
            continue
        try:
            at = output.index(line, at) + 1
        except ValueError:
            missing.append(line)
    return missing


@pytest.fixture(scope="module")
def produced(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    """What each docs-check producer prints, run the way the documents say (`make demo`
    runs `recipe-sync demo --out .demo` in the checkout; here in a scratch directory)."""
    work = tmp_path_factory.mktemp("docs-check")
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
        patch.chdir(work)
        status = main(["demo", "--out", ".demo"])
    assert status == 0, out.getvalue()
    subparsers = next(a for a in build_parser()._actions if hasattr(a, "_choices_actions"))
    commands = "\n".join(
        f"| `recipe-sync {choice.dest}` | {choice.help} |" for choice in subparsers._choices_actions
    )
    return {
        # the demo prints absolute paths; the documents show them relative to the checkout
        "demo": out.getvalue().replace(f"{work.resolve()}/", ""),
        "demo-patch": (work / ".demo" / "align" / "recipe.patch").read_text(encoding="utf-8"),
        "commands": "| command | what it does |\n|---|---|\n" + commands,
    }


def test_the_readme_is_a_short_map() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"
    text = "\n".join(lines)
    for target in ("docs/deploy.md", "docs/cli.md", "docs/measurements.md"):
        assert f"]({target})" in text, f"README.md does not link {target}"
    for command in ("make demo", "make test"):
        assert command in text


def test_every_relative_link_resolves() -> None:
    broken = [b for document in DOCUMENTS for b in _broken_links(document)]
    assert not broken, "\n".join(broken)


def test_the_link_check_finds_a_broken_link() -> None:
    # The check itself can fail: a missing file, a missing anchor, a path outside the repo
    # (a page in docs/ that is not written: its own anchors are looked up in its text only).
    text = "[a](missing.md) [b](cli.md#no-such-heading) [c](../../x.md) [d](#statuses) `[e](f.md)`"
    page = ROOT / "docs" / "cli.md"
    broken = _broken_links(page, text)
    assert [b.split(": ", 1)[1] for b in broken] == [
        "missing.md (no such file)",
        "cli.md#no-such-heading (no heading with that anchor)",
        "../../x.md (outside the repository)",
    ]


def test_github_anchors() -> None:
    assert _slug("A 5-minute tour on the real repositories") == (
        "a-5-minute-tour-on-the-real-repositories"
    )
    assert _slug("A benchmark repository's own policy: `.github/recipe-sync.yml`") == (
        "a-benchmark-repositorys-own-policy-githubrecipe-syncyml"
    )
    assert _slug("`recipe-sync align`") == "recipe-sync-align"
    assert _slug("5a. Knob classes, `single_node_tp`") == "5a-knob-classes-single_node_tp"


def test_no_machine_paths() -> None:
    found = []
    for document in DOCUMENTS:
        if document.is_relative_to(QUOTED_ENVIRONMENT):
            continue
        text = document.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if MACHINE_PATH.search(line):
                found.append(f"{_rel(document)}:{number}: {line.strip()}")
        for number, line in _prose_lines(text):
            if TMP_PATH.search(line):
                found.append(f"{_rel(document)}:{number}: /tmp outside a command: {line.strip()}")
    readme = README.read_text(encoding="utf-8")
    found += [
        f"README.md:{n}: {line.strip()}"
        for n, line in enumerate(readme.splitlines(), 1)
        if "../shared" in line or "RECIPE_SYNC_SHARED=" in line
    ]
    assert not found, "\n".join(found)


def test_readme_figures_are_all_rechecked() -> None:
    """A figure in the README is inside a docs-check block, else it goes to measurements.md."""
    text = README.read_text(encoding="utf-8")
    checked: set[int] = set()
    for _, start, lines in _checked_blocks(text):
        checked.update(range(start - 1, start + len(lines) + 1))
    outputs = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            if line.strip() in ("```text", "~~~text") and number - 1 not in checked:
                outputs.append(f"README.md:{number}: a quoted output without a docs-check marker")
            continue
        if number in checked or fenced:
            continue
        for figure in FIGURE.findall(re.sub(r"\]\([^)]*\)", "]", line)):
            outputs.append(f"README.md:{number}: {figure!r} is not re-checked: {line.strip()}")
    assert not outputs, "\n".join(outputs)


def test_the_figure_rule_catches_a_count() -> None:
    assert FIGURE.findall("the audit gives 29 aligned, 7 drifted on 40 launch lines")
    assert FIGURE.findall("in 5:08, 12 ms p99, 0.74× wall, 44 %")
    assert not FIGURE.findall("PR #3058 on Python ≥ 3.11, pull/2707/head, a 5-minute tour")


@pytest.mark.parametrize("document", [README, ROOT / "docs" / "demo.md"], ids=_rel)
def test_quoted_output_is_what_the_command_prints(document: Path, produced: dict[str, str]) -> None:
    blocks = list(_checked_blocks(document.read_text(encoding="utf-8")))
    assert blocks, f"{_rel(document)} has no docs-check block"
    for name, start, lines in blocks:
        assert name in produced, f"{_rel(document)}:{start}: no docs-check producer {name!r}"
        missing = _missing(lines, produced[name])
        assert not missing, (
            f"{_rel(document)}:{start}: {name} no longer prints (in this order):\n"
            + "\n".join(missing)
            + f"\n--- it prints:\n{produced[name]}"
        )


def test_an_excerpt_must_keep_the_order() -> None:
    assert _missing(["a", "…", "c"], "a\nb\nc\n") == []
    assert _missing(["c", "a"], "a\nb\nc\n") == ["a"]
    assert _missing(["a: 4 edits"], "a: 3 edits\n") == ["a: 4 edits"]


def test_the_command_table_is_every_subcommand(produced: dict[str, str]) -> None:
    blocks = {n: lines for n, _, lines in _checked_blocks(README.read_text(encoding="utf-8"))}
    # exactly the parser's subcommands, in its order: none missing, none stale
    assert blocks["commands"] == produced["commands"].splitlines()


def test_cli_reference_is_generated_from_the_parser() -> None:
    text = CLI.read_text(encoding="utf-8")
    block = text.split(START, 1)[1].split(END, 1)[0]
    assert block == "\n" + markdown_reference(build_parser()), (
        "docs/cli.md's CLI reference is stale: run "
        "`recipe-sync help --markdown --update docs/cli.md`"
    )
    for option in ("--bench-ref", "--recipes-ref", "--jobs", "--format", "--history"):
        assert f"`{option}`" in block
    for name in ("align", "audit", "backtest", "render", "serve", "fixtures", "demo", "help"):
        assert f"#### `recipe-sync {name}`" in block


def test_screenshots_are_small() -> None:
    text = (ROOT / "docs" / "dashboard.md").read_text(encoding="utf-8")
    images = [t for t in LINK.findall(text) if t.endswith(".png")]
    assert "dashboard-real.png" in images
    for image in images:
        assert (ROOT / "docs" / image).stat().st_size < 400_000, image


def test_statuses_and_exit_codes_are_defined() -> None:
    text = CLI.read_text(encoding="utf-8")
    section = text.split("## Statuses", 1)[1].split("## Exit codes", 1)[0]
    for status in (
        "`aligned`",
        "`drifted (n)`",
        "`unmapped (why)`",
        "`unresolved (what)`",
        "context",
        "out of scope",
    ):
        assert f"| {status} |" in section
    codes = text.split("## Exit codes", 1)[1]
    assert all(f"| {code} |" in codes for code in (0, 1, 2, 3))

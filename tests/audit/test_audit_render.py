"""Report formats on synthetic reports: the Markdown length limit, neutralised untrusted text,
the HTML page's structure, the CLI and the progress bar."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bot.audit import AuditReport, AuditRow, FlagRow, OutOfScope, render_html, render_markdown
from bot.audit.groups import group_report
from bot.audit.html import HistoryPoint
from bot.audit.model import Introduced
from bot.benchmarks import Point
from bot.commands.main import main
from bot.fixtures import SeedFixtures


def point(conc: int) -> Point:
    return Point(4, 1, False, conc, "none", "fixed-seq-len", 1024, 1024, None, None)


def row(key: str, status: str, conc: int = 4, **extra: object) -> AuditRow:
    values: dict[str, object] = {
        "config_key": key,
        "config_file": "configs/amd-master.yaml",
        "config_line": 3,
        "model": "acme/Acme-7B",
        "runner": "mi355x",
        "hardware": "mi355x",
        "image": "vllm/vllm-openai-rocm:v0.33.0",
        "point": point(conc),
        "arm": "throughput",
        "status": status,
    }
    values.update(extra)
    return AuditRow(**values)  # type: ignore[arg-type]


DRIFT = FlagRow("flag", "--max-num-seqs", "128", "", "differs", "omitting it is 1024", True)


def big_report(rows: int) -> AuditReport:
    made = [row(f"acme-fp8-mi355x-vllm-{i % 7}", "drifted", i, flags=(DRIFT,)) for i in range(rows)]
    made += [row("acme-fp8-h200-vllm", "aligned", i, hardware="h200") for i in range(rows)]
    return AuditReport("bench@abc", "recipes@def", tuple(made))


def many_recipes(recipes: int) -> AuditReport:
    rows = [
        row(f"key-{i}", "drifted", c, flags=(DRIFT,), recipe_file=f"models/o/M{i}.yaml")
        for i in range(recipes)
        for c in (4, 8, 16)
    ]
    return AuditReport("bench@abc", "recipes@def", tuple(rows))


def test_markdown_is_one_line_per_distinct_difference() -> None:
    text = render_markdown(big_report(400))  # 800 launch lines of 8 config keys
    assert len(text) < 20_000 and max(len(line) for line in text.splitlines()) < 1000
    assert text.count("- `acme-") == 8
    assert "conc 0, 1, 2, 3, 4, 5, …, 398, 399 (400 values)" in text


def test_markdown_limit_cuts_at_a_recipe_and_says_so() -> None:
    report = many_recipes(200)
    full = render_markdown(report)
    cut = render_markdown(report, limit=20_000)
    assert len(full) > 20_000 >= len(cut)
    assert cut.count("| `models/o/M") == 200  # the one-line-per-recipe table always survives
    shown = cut.count("### `models/o/M")
    assert 0 < shown < 200
    assert f"… the details of {200 - shown} more recipes are not shown (length limit)" in cut
    assert cut.count("<details>") == cut.count("</details>")  # never cut inside a block


def test_markdown_safe_mode_neutralises_untrusted_text() -> None:
    evil = row(
        "x-vllm",
        "unmapped",
        reason="no recipe for model @octocat/x <!-- recipe-sync:dashboard --> fixes #12",
        model="@octocat/x",
    )
    text = render_markdown(AuditReport("bench", "recipes", (evil,)), safe=True)
    assert "@octocat" not in text.replace("`@octocat/x`", "")  # mentions outside code defused
    assert "<!--" not in text
    assert "fixes #12" not in text
    plain = render_markdown(AuditReport("bench", "recipes", (evil,)))
    assert "fixes #12" in plain


def test_markdown_escapes_table_breaking_values() -> None:
    nasty = FlagRow("flag", "--x|y", "a|b", "c\nd", "differs", "r", True)
    report = AuditReport("b", "r", (row("k", "drifted", flags=(nasty,), recipe_file="m|n.yaml"),))
    text = render_markdown(report)
    (line,) = [line for line in text.splitlines() if line.startswith("| `m")]
    assert line.startswith("| `m\\|n.yaml` |") and "`--x\\|y`" in line
    assert line.count(" | ") == 5  # 6 cells
    (entry,) = [line for line in text.splitlines() if line.startswith("- `k`")]
    assert "`a|b` → `c d`" in entry  # a list line: no escape


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str | None]] = []
        self.scripts = 0
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and "data-status" in found:
            self.rows.append(found)
        if tag == "script":
            self.scripts += 1
            assert "src" not in found
        if tag in ("link", "img", "iframe"):
            self.links.append(tag)


def test_html_is_self_contained_and_escapes() -> None:
    evil = row("<script>alert(1)</script>", "unmapped", reason="<b>x</b>", model="a'b")
    report = AuditReport(
        "bench",
        "recipes",
        (evil, row("k", "drifted", flags=(DRIFT,), recipe_file="models/acme/Acme-7B.yaml")),
        (OutOfScope("s", "f", 1, "sglang", "framework", "not rendered"),),
    )
    page = render_html(report)
    parsed = _Collect()
    parsed.feed(page)
    assert [r["data-status"] for r in parsed.rows] == ["drifted", "unmapped"]  # drift first
    assert parsed.scripts == 1 and parsed.links == []
    offline = page.replace("xmlns='http://www.w3.org/2000/svg'", "")
    assert "http://" not in offline and "https://" not in offline
    assert "<script>alert(1)</script>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "id=heatmap" in page and "data-flag='--max-num-seqs' data-count='1'" in page
    assert "data-drifted='1' data-compared='1'" in page  # the heat-map cell of the drifted row


def test_grouping_collapses_identical_differences_across_points() -> None:
    recipe = "models/acme/Acme-7B.yaml"
    other = FlagRow("flag", "--max-num-seqs", "256", "", "differs", "omitting it is 1024", True)
    rows = [row("k", "drifted", c, flags=(DRIFT,), recipe_file=recipe) for c in (4, 8, 64)]
    rows += [row("k", "drifted", 128, flags=(other,), recipe_file=recipe)]
    rows += [row("k", "aligned", c, arm="eval", recipe_file=recipe) for c in (4, 8)]
    rows += [row("z", "unmapped", 4, reason="no recipe for model z/Z", model="z/Z")]
    groups = group_report(AuditReport("b", "r", tuple(rows)))
    assert [g.recipe for g in groups] == [recipe, "(no recipe) z/Z"]
    (profile,) = groups[0].profiles
    (key,) = profile.keys
    # --max-num-seqs 128 at three points and 256 at the fourth: one difference whose
    # benchmark value varies by point, not two entries
    assert [(e.status, len(e.rows)) for e in key.entries] == [("drifted", 4), ("aligned", 2)]
    assert key.entries[0].bench_values(0) == ["128", "256"]
    assert key.entries[0].points_text() == "TP4 · 1024/1024 · conc 4, 8, 64, 128 · throughput"
    assert groups[0].top_flags() == [("--max-num-seqs", 1)]  # counted per config key
    page = render_html(AuditReport("b", "r", tuple(rows)))
    assert page.count("<tr class=entry") == 3
    assert "4 launch lines: TP4 · 1024/1024 · conc 4, 8, 64, 128 · throughput" in page
    assert "(varies by point)" in page


def test_dashboard_links_at_the_audited_commits() -> None:
    flag = FlagRow(
        "flag",
        "--max-num-seqs",
        "128",
        "512",
        "differs",
        "r",
        True,
        category="engine",
        recipe_at="models/acme/Acme-7B.yaml:12",
        bench_at="benchmarks/acme.sh:40",
    )
    report = AuditReport(
        "b",
        "r",
        (row("k", "drifted", flags=(flag,), recipe_file="models/acme/Acme-7B.yaml"),),
        bench_name="o/bench",
        bench_commit="a" * 40,
        recipes_name="",  # a local recipes repository: no link, the path (and a warning)
    )
    page = render_html(report)
    assert f"href='https://github.com/o/bench/blob/{'a' * 40}/benchmarks/acme.sh#L40'" in page
    assert "href='models/" not in page and "title='models/acme/Acme-7B.yaml:12'" in page
    assert "--recipes-url URL" in page.split("id=links-warning>", 1)[1]
    assert f"href='https://github.com/o/bench/blob/{'a' * 40}/configs/amd-master.yaml#L3'" in page


def test_history_chart_counts_drift_per_period() -> None:
    history = [
        HistoryPoint("2026-06-02", "alignment PR"),
        HistoryPoint("2026-06-03", "blocked"),
        HistoryPoint("2026-06-20", "aligned"),
        HistoryPoint("2026-07-01", "alignment PR"),
    ]
    weeks = render_html(big_report(2), history)  # a 29-day span: one bar per day
    assert "data-period='06-02' data-drift='1' data-blocked='0' data-other='0'" in weeks
    assert "data-period='06-03' data-drift='0' data-blocked='1' data-other='0'" in weeks
    history.append(HistoryPoint("2027-01-15", "out of scope"))
    months = render_html(big_report(2), history)
    assert "data-period='2026-06' data-drift='1' data-blocked='1' data-other='1'" in months
    assert "data-period='2027-01' data-drift='0' data-blocked='0' data-other='1'" in months
    assert "id=history-chart" not in render_html(big_report(2))


def test_cli_writes_each_format(
    seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = [
        "audit",
        "--bench-repo",
        str(seed.bench_repo),
        "--bench-ref",
        seed.bench_pr_head,
        "--recipes",
        str(seed.recipes_repo),
        "--recipes-ref",
        seed.recipes_base,
    ]
    assert main([*common, "--format", "json", "--out", str(tmp_path / "a.json")]) == 1  # drift
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["summary"]["by_status"]["drifted"] == 7
    err = capsys.readouterr().err
    assert "audit: 40 launch lines (29 aligned, 7 drifted, 2 unmapped, 2 unresolved)" in err
    assert "\r" not in err  # not a terminal: no progress bar
    assert main([*common, "--format", "html", "--out", str(tmp_path / "a.html")]) == 1
    assert (tmp_path / "a.html").read_text().startswith("<!DOCTYPE html>")
    assert main(common) == 1
    assert capsys.readouterr().out.startswith("# recipe-sync drift audit")
    assert main([*common, "--jobs", "-1"]) == 2
    assert "--jobs: must be 0" in capsys.readouterr().err
    assert main([*common[:-2], "--recipes-ref", "no-such-ref"]) == 2
    assert "--recipes-ref: 'no-such-ref' is not a commit, branch or tag" in capsys.readouterr().err


def test_cli_links_recipes_under_a_base_url_and_names_the_fix_with_its_repositories(
    seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = [
        "audit",
        "--bench-repo",
        str(seed.bench_repo),
        "--bench-ref",
        seed.bench_pr_head,
        "--recipes",
        str(seed.recipes_repo),
        "--recipes-ref",
        seed.recipes_base,
    ]
    url = "https://example.org/recipes/blob/main"  # the missing "/" is added
    assert main([*common, "--recipes-url", url, "--out", str(tmp_path / "a.html")]) == 1
    page = (tmp_path / "a.html").read_text()
    assert f"href='{url}/models/" in page and "href='models/" not in page
    assert main([*common, "--out", str(tmp_path / "a.md")]) == 1
    text = (tmp_path / "a.md").read_text()
    # the seed's drift was introduced by a benchmark commit: the command to fix it names the
    # repositories as given, the audited commit and the recipes ref
    fix = next(line for line in text.splitlines() if line.startswith("  - fix: `"))
    assert f"recipe-sync align --bench-repo {seed.bench_repo} --bench-ref " in fix
    assert f"--bench-ref {seed.bench_pr_head[:12]} " in fix
    assert f"--recipes {seed.recipes_repo} --recipes-ref {seed.recipes_base}" in fix
    capsys.readouterr()
    assert main([*common, "--recipes-url", "github.com/x"]) == 2
    assert "--recipes-url: 'github.com/x' is not an http(s) URL" in capsys.readouterr().err


def test_the_heatmap_legend_reads_its_example_off_the_busiest_cell() -> None:
    recipe = "models/acme/Acme-7B.yaml"
    rows = [row("acme-mi355x", "drifted", c, flags=(DRIFT,), recipe_file=recipe) for c in (4, 8)]
    rows += [row("acme-mi355x", "aligned", 16, recipe_file=recipe)]  # mi355x: 2 of 3 drift
    rows += [row("acme-h200", "aligned", c, hardware="h200", recipe_file=recipe) for c in (4, 8)]
    page = render_html(AuditReport("b", "r", tuple(rows)))
    assert "27/45" not in page
    assert "<b>2/3</b> Acme-7B on mi355x: 2 of the 3 launch lines compared with the recipe" in page
    nothing = AuditReport("b", "r", (row("k", "unmapped"),))
    assert "launch lines compared with the recipe drift" not in render_html(nothing)


def _introduced_drift(flag: str, pr: int, at: int) -> FlagRow:
    intro = Introduced(f"{pr:040d}", f"bump {flag} (#{pr})", pr, "benchmarks/acme.sh:9", at)
    return FlagRow("flag", flag, "128", "", "differs", "r", True, introduced=intro)


def test_start_here_names_the_entry_with_the_most_impact_and_its_fix() -> None:
    """Issue #35: above the fold, the one drifted entry whose fix closes the most drift
    (counted differences × launch lines) with its fix command."""
    small = _introduced_drift("--max-num-seqs", 11, 1)
    wide = (_introduced_drift("--block-size", 12, 2), _introduced_drift("--max-num-seqs", 12, 2))
    rows = [row("acme-small", "drifted", 4, flags=(small,))]
    rows += [row("acme-wide", "drifted", c, flags=wide, hardware="h200") for c in (4, 8, 16)]
    report = AuditReport(
        "b", "r", tuple(rows), bench_name="o/bench", bench_commit="a" * 40, bench_path="ix"
    )
    page = render_html(report)
    start = page.split("id=start-here>", 1)[1].split("</p>", 1)[0]
    assert page.index("id=start-here") < page.index("id=summary")  # above the cards
    assert "acme-wide" in start and "acme-small" not in start
    assert "2 flags drift on 3 launch lines" in start
    assert "recipe-sync align --bench-repo ix --bench-ref aaaaaaaaaaaa" in start
    assert "--config-key acme-wide --bench-pr 12" in start
    text = render_markdown(report)
    line = next(x for x in text.splitlines() if x.startswith("**Start here**"))
    assert "`acme-wide`" in line and "--config-key acme-wide" in line
    assert text.index("**Start here**") < text.index("## Recipes with drift")
    assert "start-here" not in render_html(big_report(0))  # nothing drifts: no line


def test_links_that_cannot_work_are_not_links_and_a_warning_names_the_flag() -> None:
    """A repository whose origin is not GitHub (a bundle clone, a plain directory): its
    file:line references were relative hrefs, broken from the saved HTML file."""
    flag = FlagRow("flag", "--max-num-seqs", "128", "512", "differs", "r", True,
                   recipe_at="models/acme/Acme-7B.yaml:12", bench_at="b/a.sh:4")  # fmt: skip
    rows = (row("k", "drifted", flags=(flag,), recipe_file="models/acme/Acme-7B.yaml"),)
    page = render_html(AuditReport("b", "r", rows))
    assert "href='models/" not in page and "href='benchmarks/" not in page
    assert "href='configs/" not in page
    warning = page.split("id=links-warning>", 1)[1].split("</p>", 1)[0]
    assert "--bench-name OWNER/NAME" in warning and "--recipes-url URL" in warning
    named = AuditReport("b", "r", rows, bench_name="o/bench", bench_commit="a" * 40,
                        recipes_url="https://example.org/recipes/")  # fmt: skip
    assert "links-warning" not in render_html(named)

"""The backtest HTML report (bot/backtest/formats.py): the audit dashboard's style, links to
the PRs and commits, an inline SVG chart, nothing fetched from elsewhere."""

from __future__ import annotations

from dataclasses import replace

from bot.backtest.formats import to_html
from bot.backtest.model import BacktestReport
from bot.present.page import CSS
from tests.backtest.test_backtest_browser import ROWS


def test_the_report_has_the_dashboard_style_a_chart_and_links() -> None:
    report = BacktestReport("bench", "recipes", ROWS, "o/bench", "o/recipes")
    page = to_html(report)
    assert CSS in page  # the audit dashboard's style sheet
    assert "<svg id=history-chart" in page  # merged PRs per day, by outcome
    assert "data-period='01-02' data-drift='1' data-blocked='0' data-other='0'" in page
    assert "<div class=cards id=counts>" in page
    assert "href='https://github.com/o/bench/pull/2'" in page
    assert f"href='https://github.com/o/bench/commit/{'b' * 40}'" in page
    assert f"href='https://github.com/o/recipes/blob/{'c' * 40}/models/o/m.yaml'" in page
    offline = page.replace("xmlns='http://www.w3.org/2000/svg'", "")
    assert "<script src" not in page and "<link" not in page
    assert offline.count("https://") == offline.count("href='https://")  # only links
    assert "links-warning" not in page


def test_without_repository_names_the_page_says_which_flag_links_it() -> None:
    page = to_html(replace(BacktestReport("bench", "recipes", ROWS)))
    assert "href='https://" not in page
    warning = page.split("id=links-warning>", 1)[1].split("</p>", 1)[0]
    assert "--bench-name OWNER/NAME" in warning

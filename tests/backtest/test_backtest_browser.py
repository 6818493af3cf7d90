"""The backtest HTML report in headless Chromium (helpers of the audit's browser tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.backtest.formats import to_html
from bot.backtest.model import BacktestReport, EditRow, PRRow
from tests.audit.test_audit_browser import browse, chromium, with_script  # noqa: F401

pytestmark = pytest.mark.slow

ROWS = (
    PRRow(
        2,
        "b" * 40,
        "a" * 40,
        "2030-01-02",
        "Tune <b>x</b>",
        "c" * 40,
        "alignment PR",
        "1 edit to models/o/m.yaml",
        files=("models/o/m.yaml",),
        edits=(
            EditRow("models/o/m.yaml", "flag", "--max-num-seqs", "x.extra_args[1]", "64", "128"),
        ),
    ),
    PRRow(
        1,
        "a" * 40,
        "9" * 40,
        "2030-01-01",
        "Docs",
        "c" * 40,
        "no vLLM change",
        "no benchmark config, script or runner file changed (1 files)",
    ),
)


def test_html_renders_filters_and_sorts(chromium: str, tmp_path: Path) -> None:  # noqa: F811
    page = tmp_path / "backtest.html"
    page.write_text(to_html(BacktestReport("bench", "recipes", ROWS)), encoding="utf-8")
    dom = browse(chromium, tmp_path, page.as_uri(), "--dump-dom")
    assert "2 merged PRs: 1 alignment PR, 1 no vLLM change; 0 errors" in dom
    assert "Tune &lt;b&gt;x&lt;/b&gt;" in dom  # escaped
    sort = "document.querySelectorAll('#prs th')[0].click();"
    dom = browse(chromium, tmp_path, with_script(page, sort, "s.html").as_uri(), "--dump-dom")
    assert dom.index('data-pr="1"') < dom.index('data-pr="2"')
    filt = (
        "var f=document.getElementById('filter');f.value='docs';"
        "f.dispatchEvent(new Event('input'));"
    )
    dom = browse(chromium, tmp_path, with_script(page, filt, "f.html").as_uri(), "--dump-dom")
    tags = {m.group(1): m.group(0) for m in re.finditer(r'<tr[^>]*data-pr="(\d+)"[^>]*>', dom)}
    assert "display: none" in tags["2"] and "display" not in tags["1"]

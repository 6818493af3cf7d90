"""Every alignment PR of a backtest through the consistency check (bot/present/consistency.py).

    python -m bench.check_texts --bench-repo DIR --recipes DIR [--since DATE] [--until DATE]
        [--pr N]... [--jobs J]

Replays the merged benchmark PRs as ``recipe-sync backtest`` does (the recipes main current
at each merge), renders each alignment PR's texts as the App would post them and prints one
line per alignment PR (title, visible words, findings), then the totals, with the visible
words of the comment each replayed benchmark PR would get, and what a comment or its check
run shows that it must not (an evaluator's placeholder). Exit status 1 when any text
contradicts itself, shows what it must not, or a replay failed. The suite checks three PRs
and a sample (tests/present/test_consistency_real_prs.py); this checks them all.

Measured 2026-12-05 on the shared 2-CPU machine, ``--since 2026-06-01 --jobs 2`` with the
recipes history up to 2026-07-31: 581 merged PRs, 100 alignment PRs, 0 with findings,
0 replay errors, 661 s (before the fixes of this check's commits: 9 with findings).
Measured 2026-12-07, same command, idle machine: 581 merged PRs, 30 alignment PRs, 0 with
findings, 0 replay errors, 93 s; 399 benchmark-PR comments, visible words median 57, 90th
percentile 422, max 1,345, 3 over 800 (before the comment's table folded: median 58, 90th
percentile 1,771, max 6,497, 44 over 800). Third session of 2026-12-07: 0 alignment PRs and
0 comments or check runs with findings (before its fixes: 2 PRs, and the comments or check
runs of 7 benchmark PRs showed a placeholder), comments median 57, 90th percentile 406, max
1,258, 2 over 800 (#1970, #1571: whole now, each cut at 60 KB before); 138 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from bot.backtest.run import plan_jobs, settings_for
from bot.backtest.texts import checked_prs

MAX_VISIBLE = 800  # a PR body's budget (issue #35): a comment past it asks too much reading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bench-repo", type=Path, required=True)
    parser.add_argument("--recipes", type=Path, required=True)
    parser.add_argument("--since")
    parser.add_argument("--until")
    parser.add_argument("--pr", type=int, action="append", default=[])
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    settings = settings_for(args.bench_repo, args.recipes)
    jobs, _ = plan_jobs(settings, since=args.since, until=args.until, only=args.pr)
    started = time.perf_counter()
    texts = failed = errors = 0
    comments: list[int] = []
    comments_wrong = 0
    for checked in checked_prs(settings, jobs, args.jobs):
        if checked.comment_words is not None:
            comments.append(checked.comment_words)
            if checked.comment_words > MAX_VISIBLE:
                print(f"#{checked.number} comment: {checked.comment_words} visible words")
        comments_wrong += bool(checked.comment_findings)
        for finding in checked.comment_findings:
            print(f"#{checked.number} comment: {finding}")
        if checked.error:
            errors += 1
            print(f"#{checked.number}: replay error: {checked.error}")
        for pr in checked.prs:
            texts += 1
            failed += bool(pr.findings)
            state = f"{len(pr.findings)} finding(s)" if pr.findings else "consistent"
            print(f"#{checked.number} {pr.title} ({pr.visible_words} visible words): {state}")
            for finding in pr.findings:
                print(f"    {finding.check}: {finding.message}")
    print(
        f"{len(jobs)} merged PRs, {texts} alignment PRs: {failed} with findings, "
        f"{errors} replay errors ({time.perf_counter() - started:.0f} s)"
    )
    if comments:
        words = sorted(comments)
        print(
            f"{len(words)} benchmark-PR comments, visible words: median "
            f"{statistics.median(words):.0f}, 90th percentile {words[len(words) * 9 // 10]}, "
            f"max {words[-1]}, {sum(w > MAX_VISIBLE for w in words)} over {MAX_VISIBLE}; "
            f"{comments_wrong} with findings"
        )
    return 1 if failed or errors or comments_wrong else 0


if __name__ == "__main__":
    sys.exit(main())

"""The drift-over-time series of the HTML audit, read from a backtest JSON report
(``recipe-sync audit --history``)."""

from __future__ import annotations

import json
from pathlib import Path

from bot.errors import InputError, Location
from bot.present.page import HistoryPoint


def load_history(path: Path) -> list[HistoryPoint]:
    """(day, outcome) of each PR of a backtest JSON report."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["prs"] if "prs" in data else data["rows"]
        return [HistoryPoint(str(row["day"]), str(row["outcome"])) for row in rows]
    except FileNotFoundError as err:
        raise InputError(Location("--history"), f"{path} does not exist") from err
    except (ValueError, KeyError, TypeError) as err:
        raise InputError(
            Location(str(path)), f"not a backtest JSON report (prs with day and outcome): {err}"
        ) from err

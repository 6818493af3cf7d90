"""Every event type intake can produce has a handler, and dispatch reaches that handler."""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path
from typing import Any, get_args, get_type_hints

import pytest

from bot.service import dispatch as dispatch_module
from bot.service.events import EVENT_TYPES, Event, event_from_json, event_json


def sample(cls: type[Event]) -> Event:
    """An instance of ``cls`` with a placeholder for every field."""
    placeholders: dict[Any, Any] = {str: "x", int: 1, bool: False, tuple[int, ...]: (1,)}
    hints = get_type_hints(cls)
    values = {f.name: placeholders[hints[f.name]] for f in dataclasses.fields(cls) if f.init}
    return cls(**values)


def test_the_event_union_and_its_tuple_agree() -> None:
    assert set(EVENT_TYPES) == set(get_args(Event))
    assert len({cls.kind for cls in EVENT_TYPES}) == len(EVENT_TYPES)  # kinds are unique


def test_every_event_type_has_a_handler() -> None:
    missing = [cls.__name__ for cls in EVENT_TYPES if cls not in dispatch_module.HANDLERS]
    assert not missing, f"no handler for {missing}"


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda cls: cls.__name__)
def test_dispatch_reaches_the_handler_of_the_table(
    cls: type[Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    reached: list[str] = []
    for handler in set(dispatch_module.HANDLERS.values()):
        name = handler.__name__
        monkeypatch.setattr(
            dispatch_module, name, lambda _rt, _event, name=name: reached.append(name)
        )
    store = types.SimpleNamespace(names=types.SimpleNamespace(known=lambda name: name))
    dispatch_module.dispatch(types.SimpleNamespace(store=store), sample(cls))  # type: ignore[arg-type]
    assert reached == [dispatch_module.HANDLERS[cls].__name__]


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda cls: cls.__name__)
def test_events_survive_the_delivery_row(cls: type[Event]) -> None:
    event = sample(cls)
    assert event_from_json(event_json(event)) == event


def test_the_architecture_page_lists_every_event_and_its_handler() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "ARCHITECTURE.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    for cls, handler in dispatch_module.HANDLERS.items():
        assert any(f"`{cls.__name__}`" in row and f"`{handler.__name__}`" in row for row in rows), (
            f"docs/ARCHITECTURE.md: no row for {cls.__name__} → {handler.__name__}"
        )

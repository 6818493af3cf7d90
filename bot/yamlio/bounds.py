"""Bounds on untrusted YAML after alias expansion (billion-laughs documents).

A YAML parser builds an alias as a *shared reference*, so ten lines parse instantly into a
graph whose expansion has billions of nodes; the first consumer that walks it as a tree
(``to_plain``, pydantic, JSON output) then allocates gigabytes. :func:`check_expansion`
measures the expanded tree over the shared graph (each container once, memoised), so it costs
as much as the document as written, and raises one located :class:`InputError` when the
expansion would exceed :data:`MAX_NODES` nodes, :data:`MAX_BYTES` bytes of scalars or
:data:`MAX_DEPTH` levels, or when an alias refers to its own ancestor (a cycle). Every loader
of untrusted YAML calls it right after parsing; messages never echo the data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.errors import InputError, Location

MAX_NODES = 1_000_000  # the largest real master config expands to ~10^4 nodes
MAX_BYTES = 32 * 1024 * 1024  # scalar text after expansion
MAX_DEPTH = 200

LineOf = Callable[[Sequence[str | int]], int | None]


class _TooLarge(Exception):
    def __init__(self, path: list[str | int], reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


def expanded_size(data: object) -> tuple[int, int]:
    """(nodes, scalar bytes) of ``data`` as a tree; raises ``_TooLarge`` past the limits."""
    memo: dict[int, tuple[int, int]] = {}
    active: set[int] = set()

    def walk(node: object, path: list[str | int]) -> tuple[int, int]:
        if isinstance(node, str):
            return 1, len(node)
        if not isinstance(node, dict | list | tuple):
            return 1, 8
        key = id(node)
        done = memo.get(key)
        if done is not None:
            return done
        if key in active:
            raise _TooLarge(path, "an alias refers to its own ancestor (a cycle)")
        if len(path) >= MAX_DEPTH:
            raise _TooLarge(path, f"nested deeper than {MAX_DEPTH} levels")
        active.add(key)
        nodes, size = 1, 0
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for name, value in items:
            here = [*path, name if isinstance(name, str | int) else str(type(name).__name__)]
            sub_nodes, sub_bytes = walk(value, here)
            nodes += sub_nodes + (1 if isinstance(node, dict) else 0)
            size += sub_bytes + (len(name) if isinstance(name, str) else 8)
            if nodes > MAX_NODES:
                raise _TooLarge(here, f"aliases expand to more than {MAX_NODES:,} nodes")
            if size > MAX_BYTES:
                raise _TooLarge(here, f"aliases expand to more than {MAX_BYTES:,} bytes")
        active.discard(key)
        memo[key] = (nodes, size)
        return nodes, size

    return walk(data, [])


def check_expansion(data: object, name: str, line_of: LineOf | None = None) -> None:
    """Raise a one-line :class:`InputError` (file, key path, line) when ``data`` expanded as
    a tree is too large, too deep or cyclic."""
    try:
        expanded_size(data)
    except _TooLarge as err:
        key = ".".join(str(p) for p in err.path[:8])
        line = line_of(err.path) if line_of is not None else None
        raise InputError(Location(name, key, line), err.reason) from None
    except RecursionError:
        raise InputError(Location(name), f"nested deeper than {MAX_DEPTH} levels") from None

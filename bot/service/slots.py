"""Connection slots of one server process: a bound per client address, and room for a
newcomer when full.

Before its request is complete a connection is unauthenticated: anyone can open hundreds
and say nothing. Counting those against the capacity (as uvicorn's ``limit_concurrency``
does) lets idle connections turn every signed delivery away with 503. Here a client address
holds at most ``per_ip`` connections, and at ``capacity`` a new connection displaces the
oldest one that has no complete request in progress (waiting for headers or still sending
its body), so a delivery always gets in; only when every connection is busy with a complete
request is the newcomer refused.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol


class Connection(Protocol):
    def evictable(self) -> bool:
        """No complete request in progress: idle, or its headers or body still arriving."""
        ...

    def evict(self) -> None: ...


@dataclass
class ConnectionSlots:
    capacity: int
    per_ip: int  # 0: no per-address bound (behind a reverse proxy every client is the proxy)
    _open: dict[Connection, str] = field(default_factory=dict)  # insertion order: oldest first
    _by_ip: Counter[str] = field(default_factory=Counter)

    def admit(self, conn: Connection, ip: str) -> bool:
        """Take a slot for ``conn`` (displacing the oldest evictable connection when full),
        or False: refuse it."""
        if self.per_ip and self._by_ip[ip] >= self.per_ip:
            return False
        if len(self._open) >= self.capacity:
            victim = next((c for c in self._open if c.evictable()), None)
            if victim is None:
                return False
            self.release(victim)
            victim.evict()
        self._open[conn] = ip
        self._by_ip[ip] += 1
        return True

    def release(self, conn: Connection) -> None:
        ip = self._open.pop(conn, None)
        if ip is not None:
            self._by_ip[ip] -= 1
            if not self._by_ip[ip]:
                del self._by_ip[ip]

    def __len__(self) -> int:
        return len(self._open)

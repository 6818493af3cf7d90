"""Connection slots of one server process: who gets in when the server is full.

Before its request is complete a connection is anyone's. Two earlier policies failed under a
flood (``bench/abuse.py``): uvicorn's ``limit_concurrency`` counted idle connections, so 300
silent ones made every delivery a 503; then "a newcomer displaces the oldest half-open
connection" at 256 turned 1,000 idle connections into a reconnect storm (each displaced
flooder came back and displaced another, ~3,000/s) in which half the signed deliveries and
every ``/healthz`` were lost, and a bound of 64 connections per address refused GitHub's own
bursts (and, behind a proxy, every delivery shares one address).

Here admission goes by what a connection has shown (its :class:`Standing`), and by address
only when the server is full:

- every connection is admitted while fewer than ``capacity`` are open (the header timeout,
  not eviction, reclaims idle ones: a flooder's connection lives its full timeout, so its
  reconnects are paced by it);
- when full, a newcomer from an address already holding its fair share
  (``capacity // (addresses + 1)``) of connections that have shown nothing for over a second
  is refused: a flooder reconnecting displaces nobody, so there is no cascade, while a burst
  of deliveries that just connected is not held against its address;
- any other newcomer displaces the connection that has shown the least (silent before
  partial headers, before complete headers without a signature, before a signed body still
  arriving; at each, one connected over a second ago before a newcomer), from the address
  holding the most connections, oldest first; a connection busy with a complete request is
  never displaced;
- GitHub's hook ranges and trusted proxies (:class:`AddressPolicy`) never count as holding
  their share, and their connections are displaced last at equal standing. A connection
  from a trusted proxy is accounted to the client its ``X-Forwarded-For`` names once its
  headers are in; ``X-Forwarded-For`` from anyone else is ignored.

IPv6 clients are accounted per /64 (one host usually holds a whole /64).
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# GitHub's published webhook source ranges (``GET https://api.github.com/meta``, "hooks");
# --hook-ranges replaces them when GitHub publishes others.
GITHUB_HOOK_RANGES = (
    "192.30.252.0/22",
    "185.199.108.0/22",
    "140.82.112.0/20",
    "143.55.64.0/20",
    "2a0a:a440::/29",
    "2606:50c0::/32",
)


class Standing(IntEnum):
    """What a connection has shown, lowest first: the order of displacement."""

    SILENT = 0  # nothing yet (or idle between keep-alive requests)
    PARTIAL = 1  # its request line or headers are arriving
    UNSIGNED = 2  # complete headers without a signature header; the body is arriving
    SIGNED = 3  # complete headers with X-Hub-Signature-256; the body is arriving
    BUSY = 4  # a complete request being answered: never displaced


class Connection(Protocol):
    def standing(self) -> Standing: ...

    def evict(self) -> None: ...


def parse_networks(values: Iterable[str], what: str) -> tuple[Network, ...]:
    """CIDRs (or single addresses); ValueError naming ``what`` and the bad value."""
    networks = []
    for value in values:
        text = value.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"{what}: {text!r} is not an IP address or CIDR range") from None
    return tuple(networks)


@dataclass(frozen=True)
class AddressPolicy:
    trusted_proxies: tuple[Network, ...] = ()
    hook_ranges: tuple[Network, ...] = ()

    @classmethod
    def of(cls, trusted_proxies: Sequence[str], hook_ranges: Sequence[str]) -> AddressPolicy:
        return cls(
            parse_networks(trusted_proxies, "--trusted-proxies"),
            parse_networks(hook_ranges, "--hook-ranges"),
        )

    @staticmethod
    def _address(ip: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        try:
            return ipaddress.ip_address(ip)
        except ValueError:
            return None

    def is_proxy(self, ip: str) -> bool:
        address = self._address(ip)
        return address is not None and any(address in net for net in self.trusted_proxies)

    def exempt(self, ip: str) -> bool:
        """A trusted proxy (every client behind it shares its address) or a GitHub hook
        address: never refused for holding its share."""
        address = self._address(ip)
        if address is None:
            return False
        return any(address in net for net in (*self.trusted_proxies, *self.hook_ranges))

    def account(self, ip: str) -> str:
        """What connections are counted per: the IPv4 address, or the IPv6 /64."""
        address = self._address(ip)
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
            return str(ipaddress.IPv6Network((int(address) >> 64 << 64, 64)))
        return str(address.ipv4_mapped) if isinstance(address, ipaddress.IPv6Address) else ip

    def client(self, peer: str, forwarded_for: str | None) -> str:
        """The client of a request: the peer, or when the peer is a trusted proxy the
        right-most ``X-Forwarded-For`` address that is not itself a trusted proxy (the
        left-most entries are whatever the client wrote)."""
        if not forwarded_for or not self.is_proxy(peer):
            return peer
        for hop in reversed(forwarded_for.split(",")):
            candidate = hop.strip()
            if self._address(candidate) is None:
                return peer  # unreadable: keep the proxy's own address
            if not self.is_proxy(candidate):
                return candidate
        return peer


PATIENCE = 1.0  # seconds a connection may show nothing before it counts against its address


@dataclass(frozen=True)
class _Seat:
    account: str  # the address it is counted to (AddressPolicy.account)
    exempt: bool  # a trusted proxy or a GitHub hook address
    since: float  # when it was admitted (monotonic)


@dataclass
class ConnectionSlots:
    capacity: int
    policy: AddressPolicy = field(default_factory=AddressPolicy)
    clock: Callable[[], float] = time.monotonic
    _open: dict[Connection, _Seat] = field(default_factory=dict)  # insertion order: oldest first
    _by_account: dict[str, dict[Connection, None]] = field(default_factory=dict)
    refused: int = 0
    displaced: int = 0

    def admit(self, conn: Connection, ip: str) -> bool:
        """Take a slot for ``conn`` from ``ip``, displacing another when full; or False:
        refuse it."""
        seat = _Seat(self.policy.account(ip), self.policy.exempt(ip), self.clock())
        if len(self._open) >= self.capacity and not self._make_room(seat):
            self.refused += 1
            return False
        self._take(conn, seat)
        return True

    def fair_share(self) -> int:
        return max(1, self.capacity // (len(self._by_account) + 1))

    def held(self, account: str) -> int:
        return len(self._by_account.get(account, ()))

    def _stalling(self, account: str) -> int:
        """Connections of ``account`` that have shown nothing for longer than ``PATIENCE``
        (a burst of deliveries that just connected does not count: it is about to show)."""
        cutoff = self.clock() - PATIENCE
        count = 0
        for conn in self._by_account.get(account, ()):  # oldest first
            if self._open[conn].since > cutoff:
                break
            count += conn.standing() <= Standing.PARTIAL
        return count

    def _make_room(self, seat: _Seat) -> bool:
        if not seat.exempt and self._stalling(seat.account) >= self.fair_share():
            return False  # a flooder's reconnect displaces nobody: no cascade
        most = max(map(len, self._by_account.values()), default=0)
        cutoff = self.clock() - PATIENCE
        victim = None
        best: tuple[int, bool, bool, int] | None = None
        for conn, held in self._open.items():  # oldest first: ties keep the oldest
            standing = conn.standing()
            if standing >= Standing.BUSY:
                continue
            young = held.since > cutoff  # just connected: about to show its request
            rank = (int(standing), young, held.exempt, -self.held(held.account))
            if best is None or rank < best:
                victim, best = conn, rank
                if rank == (Standing.SILENT, False, False, -most):
                    break  # nothing ranks lower than the biggest holder's oldest silent one
        if victim is None:
            return False
        self.release(victim)
        victim.evict()
        self.displaced += 1
        return True

    def move(self, conn: Connection, ip: str) -> None:
        """Account ``conn`` to another address (the client behind a trusted proxy)."""
        seat = self._open.get(conn)
        if seat is not None:
            self.release(conn)
            moved = _Seat(self.policy.account(ip), self.policy.exempt(ip), seat.since)
            self._take(conn, moved)

    def _take(self, conn: Connection, seat: _Seat) -> None:
        self._open[conn] = seat
        self._by_account.setdefault(seat.account, {})[conn] = None

    def release(self, conn: Connection) -> None:
        seat = self._open.pop(conn, None)
        if seat is not None:
            same = self._by_account[seat.account]
            del same[conn]
            if not same:
                del self._by_account[seat.account]

    def __len__(self) -> int:
        return len(self._open)

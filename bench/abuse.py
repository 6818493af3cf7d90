"""Unauthenticated abuse against the real server, loopback only, bounded.

Starts ``recipe-sync serve --no-consumer`` (SQLite, one process, the default limits) as a
subprocess for each attack and, while the attack runs, from 127.0.0.1 (another address than
the attackers'):

- one signed ``pull_request.labeled`` delivery every ``--every`` seconds, a fresh connection
  each as GitHub does, every other one sent in three segments 50 ms apart;
- a burst of ``--burst`` (128) signed deliveries at once, one second into the attack (GitHub's
  own bursts, or every delivery behind a reverse proxy, share one address);
- ``GET /healthz`` every ``--every`` seconds.

A signed delivery counts when it is answered 2xx within 10 s (GitHub's budget), a probe when
it is answered 200 within 5 s. Memory: ``/proc/<pid>/status`` VmRSS before, VmHWM (peak) and
VmRSS after ``--idle`` seconds of quiet.

Attacks, from other loopback addresses (127.0.0.2 and up):

- ``headers``: ``--header-conns`` (8) connections from 2 addresses send a request line and
  then header lines without end (half short lines, half one endless value), reconnecting
  when closed, for ``--hold`` seconds;
- ``bodies``: ``--flooders`` (8) connections each send an unsigned chunked body of 26 MiB
  (over GitHub's 25 MB cap), read the answer and start again, ``--rounds`` times;
- ``idle``: ``--holders`` (1,000) connections from ``--holder-ips`` (16) addresses that send
  nothing, reopened as soon as the server closes one, for ``--hold`` seconds.

    python -m bench.abuse [--attacks headers,bodies,idle] [--serve-args "--header-timeout 5"]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bot.github.signature import sign
from bot.shared_data import github_data_dir

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-secret"
HOST = "127.0.0.1"
MiB = 1024 * 1024
SIGNED_TIMEOUT = 10.0  # GitHub gives a delivery 10 s
PROBE_TIMEOUT = 5.0


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak RSS) of a process, KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


@dataclass
class Tally:
    signed: Counter[str] = field(default_factory=Counter)
    burst: Counter[str] = field(default_factory=Counter)
    probes: Counter[str] = field(default_factory=Counter)
    attack: Counter[str] = field(default_factory=Counter)

    @staticmethod
    def ok(counts: Counter[str]) -> int:
        return sum(n for status, n in counts.items() if status.startswith("2"))


async def read_status(reader: asyncio.StreamReader) -> str:
    head = await reader.readuntil(b"\r\n\r\n")
    return head[9:12].decode()


def signed_request(port: int) -> bytes:
    payload = json.loads((github_data_dir() / "pull_request.labeled.json").read_text())
    payload["label"]["name"] = "recipe-sync"
    body = json.dumps(payload).encode()
    head = (
        f"POST /webhooks/github HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
        f"Content-Length: {len(body)}\r\nContent-Type: application/json\r\n"
        f"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: {uuid.uuid4()}\r\n"
        f"X-Hub-Signature-256: {sign(SECRET, body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


async def exchange(port: int, request: bytes, segments: int, limit: float) -> str:
    """One request on a fresh connection: its status, or why there was none."""

    async def run() -> str:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            step = -(-len(request) // segments)
            for start in range(0, len(request), step):
                if start:
                    await asyncio.sleep(0.05)
                writer.write(request[start : start + step])
                await writer.drain()
            return await read_status(reader)
        finally:
            writer.close()

    try:
        return await asyncio.wait_for(run(), limit)
    except TimeoutError:
        return "timeout"
    except (OSError, asyncio.IncompleteReadError) as err:
        return type(err).__name__


async def alongside(port: int, every: float, running: asyncio.Event, tally: Tally) -> None:
    """Signed deliveries (whole, then in segments, in turn) and health probes."""
    pending: set[asyncio.Task[None]] = set()
    probe = f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode()

    async def signed(segments: int) -> None:
        status = await exchange(port, signed_request(port), segments, SIGNED_TIMEOUT)
        tally.signed[status] += 1

    async def health() -> None:
        tally.probes[await exchange(port, probe, 1, PROBE_TIMEOUT)] += 1

    turn = 0
    while running.is_set():
        for job in (signed(3 if turn % 2 else 1), health()):
            task = asyncio.create_task(job)
            pending.add(task)
            task.add_done_callback(pending.discard)
        turn += 1
        await asyncio.sleep(every)
    await asyncio.gather(*pending)


async def burst(port: int, size: int, tally: Tally) -> None:
    """``size`` signed deliveries at once from one address."""
    requests = [signed_request(port) for _ in range(size)]

    async def one(request: bytes) -> None:
        tally.burst[await exchange(port, request, 1, SIGNED_TIMEOUT)] += 1

    await asyncio.gather(*(one(r) for r in requests))


async def attacker_connection(
    port: int, source: str, tally: Tally
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    """A connection from ``source`` (counted), or None after a short pause if refused."""
    try:
        opened = await asyncio.open_connection(HOST, port, local_addr=(source, 0))
    except OSError as err:
        tally.attack[type(err).__name__] += 1
        await asyncio.sleep(0.1)
        return None
    tally.attack["opened"] += 1
    return opened


async def endless_headers(port: int, args: argparse.Namespace, tally: Tally) -> None:
    ends = time.monotonic() + args.hold
    sources = ["127.0.0.2", "127.0.0.3"]
    lines = b"X-Padding: a\r\n" * 4096  # short header lines, without end
    value = b"a" * 65536  # or one header value without end

    async def sender(index: int) -> None:
        source = sources[index % len(sources)]
        chunk = lines if index % 4 < 2 else value
        while time.monotonic() < ends:
            opened = await attacker_connection(port, source, tally)
            if opened is None:
                continue
            reader, writer = opened
            closed = asyncio.ensure_future(reader.read())  # done when the server closes it
            try:
                writer.write(b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\n")
                if chunk is value:
                    writer.write(b"X-Endless: ")
                while time.monotonic() < ends and not closed.done():
                    writer.write(chunk)
                    await asyncio.wait_for(writer.drain(), max(0.01, ends - time.monotonic()))
                tally.attack["closed by server" if closed.done() else "held to the end"] += 1
            except (OSError, TimeoutError) as err:
                tally.attack[type(err).__name__] += 1
            finally:
                closed.cancel()
                writer.close()
            await asyncio.sleep(0.05)

    await asyncio.gather(*(sender(i) for i in range(args.header_conns)))


async def flood_body(port: int, source: str, size: int, tally: Tally) -> None:
    """One unsigned chunked body of ``size`` bytes; the answer, read after sending it all."""
    chunk = b"x" * (64 * 1024)
    frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    try:
        reader, writer = await asyncio.open_connection(HOST, port, local_addr=(source, 0))
    except OSError as err:
        tally.attack[type(err).__name__] += 1
        return
    try:
        writer.write(
            f"POST /webhooks/github HTTP/1.1\r\nHost: {HOST}\r\nTransfer-Encoding: chunked\r\n"
            "Content-Type: application/json\r\nX-GitHub-Event: pull_request\r\n"
            "X-GitHub-Delivery: flood\r\n\r\n".encode()
        )
        for _ in range(size // len(chunk)):
            writer.write(frame)
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        tally.attack[await asyncio.wait_for(read_status(reader), 60)] += 1
    except (OSError, asyncio.IncompleteReadError, TimeoutError) as err:
        tally.attack[type(err).__name__] += 1
    finally:
        writer.close()


async def bodies(port: int, args: argparse.Namespace, tally: Tally) -> None:
    async def flooder(index: int) -> None:
        for _ in range(args.rounds):
            await flood_body(port, "127.0.0.2", args.body_mib * MiB, tally)

    await asyncio.gather(*(flooder(i) for i in range(args.flooders)))


async def idle(port: int, args: argparse.Namespace, tally: Tally) -> None:
    ends = time.monotonic() + args.hold
    sources = [f"127.0.0.{2 + i}" for i in range(args.holder_ips)]

    async def holder(index: int) -> None:
        source = sources[index % len(sources)]
        while time.monotonic() < ends:
            opened = await attacker_connection(port, source, tally)
            if opened is None:
                continue
            reader, writer = opened
            try:  # hold it, silent, until the server closes it or the attack ends
                await asyncio.wait_for(reader.read(), max(0.0, ends - time.monotonic()))
                tally.attack["closed by server"] += 1
            except TimeoutError:
                pass
            except OSError as err:
                tally.attack[type(err).__name__] += 1
            finally:
                writer.close()
            await asyncio.sleep(0.05)

    await asyncio.gather(*(holder(i) for i in range(args.holders)))


ATTACKS = {"headers": endless_headers, "bodies": bodies, "idle": idle}


async def attack_with_signed(port: int, name: str, args: argparse.Namespace) -> Tally:
    tally = Tally()
    running = asyncio.Event()
    running.set()
    attack = asyncio.create_task(ATTACKS[name](port, args, tally))
    await asyncio.sleep(0.5)  # the attack is under way before the first signed delivery
    signed = asyncio.create_task(alongside(port, args.every, running, tally))
    await asyncio.sleep(0.5)
    if args.burst:
        await burst(port, args.burst, tally)
    await attack
    running.clear()
    await signed
    return tally


def start_server(data: Path, port: int, extra: list[str]) -> subprocess.Popen[bytes]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(data),
        "PYTHONPATH": str(ROOT),
        "RECIPE_SYNC_WEBHOOK_SECRET": SECRET,
        "RECIPE_SYNC_DATA_DIR": str(data),
    }
    command = [sys.executable, "-m", "bot", "serve", "--no-consumer", "--port", str(port)]
    server = subprocess.Popen(
        [*command, "--log-level", "warning", *extra],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and server.poll() is None:
        with contextlib.suppress(httpx.HTTPError):
            # /healthz: the process is up (/readyz wants GitHub credentials, unused here)
            if httpx.get(f"http://{HOST}:{port}/healthz", timeout=1).status_code == 200:
                return server
        time.sleep(0.2)
    server.kill()
    raise RuntimeError("server did not start")


def share(counts: Counter[str]) -> str:
    total = sum(counts.values())
    return f"{Tally.ok(counts)}/{total}" + (
        f" ({100 * Tally.ok(counts) / total:.0f} %)" if total else ""
    )


def run(name: str, args: argparse.Namespace) -> None:
    data = Path(tempfile.mkdtemp(prefix="rs-abuse-"))
    port = free_port()
    server = start_server(data, port, shlex.split(args.serve_args))
    try:
        before = memory_kib(server.pid)["VmRSS"]
        started = time.monotonic()
        tally = asyncio.run(attack_with_signed(port, name, args))
        elapsed = time.monotonic() - started
        time.sleep(args.idle)
        after = memory_kib(server.pid)
        alive = server.poll() is None
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(data, ignore_errors=True)
    delivered = tally.signed + tally.burst
    print(
        f"{name:7} {elapsed:5.1f}s  RSS before {before / 1024:5.0f} MiB  "
        f"peak {after['VmHWM'] / 1024:6.0f} MiB  after {args.idle:.0f}s idle "
        f"{after['VmRSS'] / 1024:5.0f} MiB  signed 2xx in 10 s {share(delivered)}  "
        f"/healthz 200 {share(tally.probes)}{'' if alive else '  SERVER DIED'}"
    )
    print(
        f"{'':7} alone {dict(tally.signed)}; burst of {args.burst} {dict(tally.burst)}; "
        f"/healthz {dict(tally.probes)}; attack {dict(tally.attack)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.abuse", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--attacks", default="headers,bodies,idle")
    parser.add_argument("--header-conns", type=int, default=8)
    parser.add_argument("--flooders", type=int, default=8)
    parser.add_argument("--body-mib", type=int, default=26)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--holders", type=int, default=1000)
    parser.add_argument("--holder-ips", type=int, default=16)
    parser.add_argument("--hold", type=float, default=15.0)
    parser.add_argument("--burst", type=int, default=128)
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument("--serve-args", default="", help="extra `serve` options")
    args = parser.parse_args(argv)
    if not (
        1 <= args.header_conns <= 64
        and 1 <= args.flooders <= 64
        and 1 <= args.rounds <= 50
        and 1 <= args.holders <= 2000
        and 1 <= args.holder_ips <= 200
        and 0 <= args.burst <= 512
        and args.body_mib <= 64
        and args.hold <= 120
    ):
        parser.error(
            "bounded run: header-conns 1-64, flooders 1-64, rounds 1-50, holders 1-2000, "
            "burst 0-512, hold <= 120 s"
        )
    unknown = set(args.attacks.split(",")) - set(ATTACKS)
    if unknown:
        parser.error(f"unknown attack(s): {', '.join(sorted(unknown))}")
    print(
        f"abuse: {args.header_conns} endless-header connections; {args.flooders} x "
        f"{args.rounds} unsigned chunked {args.body_mib} MiB bodies; {args.holders} idle "
        f"connections from {args.holder_ips} address(es); {args.hold:.0f} s each; a signed "
        f"delivery and a /healthz probe every {args.every} s and a burst of {args.burst} "
        f"signed deliveries from 127.0.0.1; loopback, {os.cpu_count()} CPUs"
    )
    for name in args.attacks.split(","):
        run(name, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

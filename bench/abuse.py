"""Unauthenticated abuse against the real server, loopback only, bounded.

Starts ``recipe-sync serve --no-consumer`` (SQLite, one process) as a subprocess for each
attack, sends one signed ``pull_request.labeled`` delivery every ``--every`` seconds from
127.0.0.1 during the attack (a fresh connection each, as GitHub does, 10 s budget as GitHub's)
and reports the server's memory (``/proc/<pid>/status``: VmRSS before, VmHWM peak, VmRSS
after ``--idle`` seconds of quiet) and how many signed deliveries were answered 2xx.

Attacks, from other loopback addresses (127.0.0.2 and up: another "client IP"):

- ``bodies``: ``--flooders`` (8) connections each send an unsigned chunked body of 26 MiB
  (over GitHub's 25 MB cap), read the answer and start again, ``--rounds`` times;
- ``idle``: ``--holders`` (300) connections that send nothing, reopened as soon as the
  server closes one, for ``--hold`` seconds, from ``--holder-ips`` source addresses.

    python -m bench.abuse [--attacks bodies,idle] [--serve-args "--header-timeout 5"]
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
    attack: Counter[str] = field(default_factory=Counter)

    def signed_ok(self) -> int:
        return sum(n for status, n in self.signed.items() if status.startswith("2"))


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


async def one_signed(port: int, tally: Tally) -> None:
    async def exchange() -> str:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            writer.write(signed_request(port))
            await writer.drain()
            return await read_status(reader)
        finally:
            writer.close()

    try:
        status = await asyncio.wait_for(exchange(), SIGNED_TIMEOUT)
    except TimeoutError:
        status = "timeout"
    except (OSError, asyncio.IncompleteReadError) as err:
        status = type(err).__name__
    tally.signed[status] += 1


async def signed_while(port: int, every: float, running: asyncio.Event, tally: Tally) -> None:
    pending: set[asyncio.Task[None]] = set()
    while running.is_set():
        task = asyncio.create_task(one_signed(port, tally))
        pending.add(task)
        task.add_done_callback(pending.discard)
        await asyncio.sleep(every)
    await asyncio.gather(*pending)


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
            try:
                reader, writer = await asyncio.open_connection(HOST, port, local_addr=(source, 0))
            except OSError as err:
                tally.attack[type(err).__name__] += 1
                await asyncio.sleep(0.1)
                continue
            tally.attack["opened"] += 1
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


async def attack_with_signed(port: int, name: str, args: argparse.Namespace) -> Tally:
    tally = Tally()
    running = asyncio.Event()
    running.set()
    signed = asyncio.create_task(signed_while(port, args.every, running, tally))
    await asyncio.sleep(0.5)  # the attack is under way before the first signed delivery
    await (bodies if name == "bodies" else idle)(port, args, tally)
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
    total = sum(tally.signed.values())
    print(
        f"{name:7} {elapsed:6.1f}s  RSS before {before / 1024:6.0f} MiB  "
        f"peak {after['VmHWM'] / 1024:6.0f} MiB  after {args.idle:.0f}s idle "
        f"{after['VmRSS'] / 1024:6.0f} MiB  signed 2xx {tally.signed_ok()}/{total}"
        f"{'' if alive else '  SERVER DIED'}"
    )
    print(f"{'':7} signed answers {dict(tally.signed)}; attack {dict(tally.attack)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.abuse", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--attacks", default="bodies,idle")
    parser.add_argument("--flooders", type=int, default=8)
    parser.add_argument("--body-mib", type=int, default=26)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--holders", type=int, default=300)
    parser.add_argument("--holder-ips", type=int, default=1)
    parser.add_argument("--hold", type=float, default=15.0)
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument("--serve-args", default="", help="extra `serve` options")
    args = parser.parse_args(argv)
    if not (
        1 <= args.flooders <= 64
        and 1 <= args.rounds <= 50
        and 1 <= args.holders <= 2000
        and 1 <= args.holder_ips <= 200
        and args.body_mib <= 64
        and args.hold <= 120
    ):
        parser.error("bounded run: flooders 1-64, rounds 1-50, holders 1-2000, hold <= 120 s")
    print(
        f"abuse: {args.flooders} x {args.rounds} unsigned chunked {args.body_mib} MiB bodies; "
        f"{args.holders} idle connections from {args.holder_ips} address(es) for {args.hold:.0f}s; "
        f"a signed delivery every {args.every}s; loopback, {os.cpu_count()} CPUs"
    )
    for name in args.attacks.split(","):
        run(name, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

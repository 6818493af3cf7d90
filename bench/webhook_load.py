"""Webhook acknowledgement under load, loopback only, bounded.

Starts ``recipe-sync serve --no-consumer`` in a subprocess (real HTTP) for each queue
backend (embedded SQLite, one server process; Redis when 127.0.0.1:6379 answers, with
``--web-processes`` server processes, default one per CPU, as deployed), sends
``--deliveries`` signed ``pull_request.labeled`` deliveries with distinct ids at a fixed
``--concurrency``, and reports ack latency p50/p99/max and throughput. The reference,
measured in the same run against the same server, is ``GET /healthz`` at the same
concurrency: the ratio shows what verification + dedupe claim + enqueue cost on top of
the HTTP stack. Every accepted delivery is one unique-insert claim and one enqueue, the
deliveries that arrive together committed as one group (``bot.service.ack``).

    python -m bench.webhook_load [--deliveries 2000] [--concurrency 64] [--backends sqlite,redis]
        [--web-processes N]

"redis" runs with PostgreSQL as the store when 127.0.0.1:5432 answers (db ``test``, a
fresh schema per run; ``RECIPE_SYNC_BENCH_POSTGRES`` overrides the URL), as deployed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx

from bot.github.signature import sign
from bot.shared_data import github_data_dir

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD = github_data_dir() / "pull_request.labeled.json"
SECRET = "bench-secret"
REDIS = "redis://127.0.0.1:6379/0"
POSTGRES = os.environ.get("RECIPE_SYNC_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_reachable() -> bool:
    try:
        import redis

        redis.Redis.from_url(REDIS, socket_connect_timeout=1).ping()
    except Exception:
        return False
    return True


def postgres_reachable() -> bool:
    try:
        import psycopg

        psycopg.connect(POSTGRES, connect_timeout=2).close()
    except Exception:
        return False
    return True


def cpu_seconds(pid: int) -> float:
    """User + system CPU so far of a process and its live children (Linux /proc): the
    server processes of ``serve --processes N`` are children of the one started."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return own + sum(cpu_seconds(int(child)) for child in children)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> int:
    """One request on a keep-alive connection; the response's status code."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    await reader.readexactly(length)
    return status


def _request(method: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def fire(
    base: str, requests: list[tuple[str, bytes, dict[str, str]]], concurrency: int
) -> tuple[list[float], Counter[int], float]:
    """Send every request over ``concurrency`` keep-alive connections, one request in
    flight on each. A minimal HTTP/1.1 client on asyncio streams: the load generator shares
    the 2 CPUs with the server, and a full client library (~1 ms of CPU per request) would
    measure itself."""
    host, port = base.removeprefix("http://").split(":")
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    wire = [
        _request(method, "/healthz" if method == "GET" else "/webhooks/github", body, headers)
        for method, body, headers in requests
    ]
    pending = iter(wire)

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            for request in pending:
                started = time.perf_counter()
                try:
                    status = await _exchange(reader, writer, request)
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    statuses[0] += 1  # a transport error counts as an error, not a crash
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, int(port))
                    continue
                latencies.append(time.perf_counter() - started)
                statuses[status] += 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    return latencies, statuses, elapsed


def deliveries(count: int) -> list[tuple[str, bytes, dict[str, str]]]:
    payload = json.loads(PAYLOAD.read_text())
    payload["label"]["name"] = "recipe-sync"
    body = json.dumps(payload).encode()
    signature = sign(SECRET, body)
    return [
        (
            "POST",
            body,
            {
                "X-GitHub-Event": "pull_request",
                "X-GitHub-Delivery": str(uuid.uuid4()),
                "X-Hub-Signature-256": signature,
                "Content-Type": "application/json",
            },
        )
        for _ in range(count)
    ]


def postgres_schema(create: bool, schema: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRES, autocommit=True, connect_timeout=3) as admin:
        if create:
            admin.execute(f'CREATE SCHEMA "{schema}"')
        else:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def run_backend(
    name: str,
    count: int,
    concurrency: int,
    database_url: str | None = None,
    processes: int = 1,
) -> dict[str, float] | None:
    """One server, one backend ("sqlite": SQLite store + queue; "redis": Redis queue +
    PostgreSQL store when reachable, in a fresh schema dropped afterwards)."""
    data = Path(tempfile.mkdtemp(prefix=f"rs-bench-{name}-"))
    queue = f"rs_bench_{uuid.uuid4().hex[:8]}"  # Huey keeps only [A-Za-z0-9_] of the name
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(data),
        "PYTHONPATH": str(ROOT),
        "RECIPE_SYNC_WEBHOOK_SECRET": SECRET,
        "RECIPE_SYNC_DATA_DIR": str(data),
        "RECIPE_SYNC_QUEUE_NAME": queue,
    }
    schema = None
    if name == "redis":
        env["REDIS_URL"] = REDIS
        if database_url is None and postgres_reachable():
            # the scaled-out deployment: Redis queue + PostgreSQL state (a fresh schema)
            schema = f"rs_bench_{uuid.uuid4().hex[:8]}"
            postgres_schema(True, schema)
            database_url = f"{POSTGRES}?options=-csearch_path%3D{schema}"
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    else:
        processes = 1  # SQLite admits one writer: one web process (serve refuses more)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot",
            "serve",
            "--no-consumer",
            "--processes",
            str(processes),
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                # /healthz: the process is up (/readyz wants GitHub credentials, unused here)
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                print(f"{name}: server did not start", file=sys.stderr)
                return None
            time.sleep(0.2)
        # warm-up, then the reference and the measurement against the same server
        asyncio.run(fire(base, deliveries(50), concurrency))
        health: list[tuple[str, bytes, dict[str, str]]] = [("GET", b"", {})] * count
        ref, _, ref_elapsed = asyncio.run(fire(base, health, concurrency))
        batch = deliveries(count)
        cpu_before = cpu_seconds(server.pid)
        lat, statuses, elapsed = asyncio.run(fire(base, batch, concurrency))
        server_cpu = cpu_seconds(server.pid) - cpu_before
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        if name == "redis":
            import redis

            client = redis.Redis.from_url(REDIS)
            for key in client.scan_iter(f"huey.*.{queue}*"):
                client.delete(key)
            client.close()
        shutil.rmtree(data, ignore_errors=True)
        if schema is not None:
            postgres_schema(False, schema)
    accepted = statuses.get(202, 0)
    return {
        "accepted": accepted,
        "other": sum(statuses.values()) - accepted,
        "p50_ms": percentile(lat, 0.50) * 1000,
        "p99_ms": percentile(lat, 0.99) * 1000,
        "max_ms": max(lat) * 1000,
        "mean_ms": statistics.fmean(lat) * 1000,
        "rps": len(lat) / elapsed,
        "ref_p50_ms": percentile(ref, 0.50) * 1000,
        "ref_p99_ms": percentile(ref, 0.99) * 1000,
        "ref_rps": len(ref) / ref_elapsed,
        "server_cpu_ms": server_cpu * 1000 / count,
    }


def ack_work(name: str, count: int = 320, group: int = 32) -> dict[int, tuple[float, float]] | None:
    """The ack path's durable work (record + enqueue, then the queued mark, which the answer
    does not wait for: ``bot.service.ack.accept_group``) in
    process, without HTTP: group size → (ms, CPU ms) per delivery, for deliveries one at a
    time and in groups of ``group`` (what a burst commits together)."""
    from bot.service.ack import accept_group
    from bot.service.boot import boot
    from bot.settings import Settings
    from bot.state.store import DeliveryClaim

    data = Path(tempfile.mkdtemp(prefix=f"rs-ack-{name}-"))
    queue = f"rs_ack_{uuid.uuid4().hex[:8]}"
    settings = Settings(webhook_secret=SECRET, data_dir=data, queue_name=queue)
    schema = None
    if name == "redis":
        if not postgres_reachable():
            return None
        schema = f"rs_ack_{uuid.uuid4().hex[:8]}"
        postgres_schema(True, schema)
        database = f"{POSTGRES}?options=-csearch_path%3D{schema}"
        settings = dataclasses.replace(settings, redis_url=REDIS, database_url=database)
    rt = boot(settings)
    figures: dict[int, tuple[float, float]] = {}
    try:
        for size in (1, group):
            claims = [
                DeliveryClaim(str(uuid.uuid4()), "pull_request", "labeled", "o/r", "{}")
                for _ in range(count)
            ]
            wall, cpu = time.perf_counter(), time.process_time()
            for start in range(0, count, size):
                accept_group(rt, claims[start : start + size])
            figures[size] = (
                (time.perf_counter() - wall) * 1000 / count,
                (time.process_time() - cpu) * 1000 / count,
            )
        rt.huey.storage.flush_queue()
    finally:
        rt.close()
        shutil.rmtree(data, ignore_errors=True)
        if schema is not None:
            postgres_schema(False, schema)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.webhook_load", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--deliveries", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--backends", default="sqlite,redis")
    parser.add_argument(
        "--web-processes",
        type=int,
        default=os.cpu_count() or 1,
        help="serve --processes for Redis + PostgreSQL (default: one per CPU, as deployed)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.deliveries <= 20000 or not 1 <= args.concurrency <= 256:
        parser.error("bounded run: 1-20000 deliveries, concurrency 1-256")
    print(
        f"webhook ack load: {args.deliveries} signed deliveries, concurrency {args.concurrency}, "
        f"loopback, {os.cpu_count()} CPUs"
    )
    print("reference: GET /healthz on the same server, same concurrency")
    print(
        f"web processes: sqlite 1 (one writer), redis {args.web_processes} "
        "(Redis queue + PostgreSQL store; serve --processes)\n"
    )
    header = (
        f"{'backend':8} {'accepted':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
        f"{'req/s':>8} {'ref p50':>8} {'ref p99':>8} {'ref req/s':>9} {'p50 x':>6} {'p99 x':>6}"
    )
    print(header)
    for backend in args.backends.split(","):
        if backend == "redis" and not redis_reachable():
            print(f"{backend:8} skipped: Redis at 127.0.0.1:6379 is not reachable")
            continue
        processes = args.web_processes if backend == "redis" else 1
        result = run_backend(backend, args.deliveries, args.concurrency, processes=processes)
        if result is None:
            continue
        r = result
        print(
            f"{backend:8} {r['accepted']:8.0f} {r['p50_ms']:8.1f} {r['p99_ms']:8.1f} "
            f"{r['max_ms']:8.1f} {r['rps']:8.0f} {r['ref_p50_ms']:8.1f} "
            f"{r['ref_p99_ms']:8.1f} {r['ref_rps']:9.0f} "
            f"{r['p50_ms'] / r['ref_p50_ms']:6.1f} {r['p99_ms'] / r['ref_p99_ms']:6.1f}"
        )
        if result["other"]:
            print(f"{'':8} {result['other']:.0f} deliveries were not answered 202")
        print(
            f"{'':8} server CPU {result['server_cpu_ms']:.2f} ms per delivery; "
            f"p99 is {10_000 / result['p99_ms']:.0f}x under GitHub's 10 s ack budget"
        )
    print(
        "\nack-path work per delivery (in process, one thread): record + enqueue "
        "(+ the queued mark, after the answer)"
    )
    for backend in args.backends.split(","):
        if backend == "redis" and not redis_reachable():
            continue
        work = ack_work(backend)
        if work is not None:
            shown = [
                f"{'alone' if size == 1 else f'in groups of {size}'}: {ms:.2f} ms (CPU {cpu:.2f})"
                for size, (ms, cpu) in work.items()
            ]
            print(f"{backend:8} " + ", ".join(shown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

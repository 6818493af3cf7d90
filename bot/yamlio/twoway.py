"""Parse many YAML documents on two CPUs: a forked child parses every other one.

Loading the recipes corpus is the serial part of ``render --api-out`` (libyaml composes
node objects one scalar at a time, ~0.06 s for 186 files); split over two processes it
takes a little over half. The child runs the same :func:`~bot.yamlio.yaml12.load_yaml` (every
guard on untrusted YAML included) and hands back plain data with :mod:`marshal`, which
carries only dicts, lists, strings, numbers, booleans and None, and costs ~1 ms for the
whole corpus. A document the child could not parse, or anything the child failed to send,
is left out of the answer: the caller parses it itself and reports its error as it would.

Forking is only sound in a process with no other threads, and the child reads its own
half (so neither process holds the other's texts) through the caller's reader, which must
share no channel with the parent (a `git cat-file` pipe would interleave): the CLI's
render of a directory asks for it, the service and the replays never do.
"""

from __future__ import annotations

import contextlib
import marshal
import os
from collections.abc import Callable, Sequence
from typing import Any

from bot.yamlio.yaml12 import load_yaml

MIN_DOCUMENTS = 16  # below this a fork costs more than it saves


def load_yaml_twoway(names: Sequence[str], read: Callable[[str], str]) -> dict[str, Any]:
    """``{name: load_yaml(read(name), name)}`` for the documents that read and parse,
    computed in this process and one forked child (each reads its own half, so neither
    holds the other's texts); a document that does not read or parse is absent."""
    if len(names) < MIN_DOCUMENTS or not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
        return _parse(names, read)
    ours, theirs = names[0::2], names[1::2]  # alternate: neighbours are alike in size
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: parse, send, exit without running the parent's cleanup
        status = 1
        try:
            os.close(read_end)
            payload = marshal.dumps(_parse(theirs, read))
            with os.fdopen(write_end, "wb") as sending:
                sending.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    receiving = os.fdopen(read_end, "rb")
    try:
        found = _parse(ours, read)
        payload = receiving.read()
    finally:  # closed first: a child still writing gets EPIPE and exits, never blocks
        receiving.close()
        os.waitpid(pid, 0)
    with contextlib.suppress(EOFError, ValueError, TypeError):  # the child failed: parse here
        sent = marshal.loads(payload)
        del payload  # the parent's peak memory is that of the pages the workers share
        if isinstance(sent, dict):
            found.update((name, sent[name]) for name in theirs if name in sent)
    return found


def _parse(names: Sequence[str], read: Callable[[str], str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in names:
        try:
            found[name] = load_yaml(read(name), name)
        except Exception:  # the caller reads and parses it again and says why
            continue
    return found

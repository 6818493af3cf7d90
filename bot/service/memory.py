"""Give memory freed by request bodies back to the system.

glibc serves an allocation over 128 KiB from its own mapping, returned when freed, but after
freeing one it raises that threshold to the freed size (up to 32 MiB): after a few 25 MB
bodies, the next bodies of a few hundred KiB come from the heap, which is not trimmed while
anything lives above them. 64 connections refused mid-body left the server 27-37 MiB larger
once idle again, 4-12 MiB with the threshold fixed (``bench/abuse.py --flooders 64``).
Setting it explicitly turns that adjustment off."""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
MMAP_THRESHOLD = 128 * 1024  # glibc's default, now fixed


def return_freed_memory() -> bool:
    """Fix glibc's mmap threshold; False without glibc's ``mallopt`` (or if it refused)."""
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c")).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


@dataclass
class ByteBudget:
    """Bytes that requests not yet verified may hold together (bodies, heads)."""

    total: int
    used: int = 0

    def take(self, size: int) -> bool:
        if self.used + size > self.total:
            return False
        self.used += size
        return True

    def give(self, size: int) -> None:
        self.used -= size

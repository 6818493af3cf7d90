"""GitHub webhook signatures: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>``.

Verified over the raw body, before anything parses it, with a constant-time comparison.
"""

from __future__ import annotations

import hashlib
import hmac


def sign(secret: str, body: bytes) -> str:
    """The header value GitHub sends for ``body``."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify(secret: str, body: bytes, header: str | None) -> bool:
    if not secret or not header or not header.startswith("sha256=") or len(header) > 200:
        return False
    try:
        given = header.strip().encode("ascii")
    except UnicodeEncodeError:  # a forged header with non-ASCII bytes: simply not ours
        return False
    return hmac.compare_digest(sign(secret, body).encode("ascii"), given)

"""Whether a text is a whole number as the inputs recipe-sync reads write one: ASCII digits.

``str.isdigit`` also takes "¹" and other digits ``int`` rejects; a hostile script, config or
header holding one must be refused where it is read, not crash a conversion later.
"""

from __future__ import annotations


def is_integer(text: str, *, signed: bool = False) -> bool:
    """ASCII digits only (bash counts no others), after one minus when ``signed``; "" is not."""
    digits = text.removeprefix("-") if signed else text
    return digits.isascii() and digits.isdigit()

"""recipe-sync: keep vLLM recipe renderings aligned with benchmark launch lines."""

__version__ = "0.1.0"

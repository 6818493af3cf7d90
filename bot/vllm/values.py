"""Canonical values (docs/spec/vllm-cli-semantics.md §5.4): what argparse and pydantic make of a
spelled value.

Every function here is total: bad input gives a :class:`BadValue` (reported as a finding),
never an exception.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.digits import is_integer
from bot.vllm.catalogue import ValueType


@dataclass(frozen=True)
class BadValue:
    """A value vLLM would reject; ``reason`` says why in the words of its error."""

    reason: str


# --- scalars ----------------------------------------------------------------------------------

_HUMAN = re.compile(r"^(\d+(?:\.\d+)?)([kKmMgGtT])$")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def human_int(text: str) -> int | None:
    """vLLM's ``human_readable_int``: ``16k`` = 16000, ``16K`` = 16384; plain ints too."""
    text = text.strip()
    match = _HUMAN.match(text)
    if match:
        number, suffix = match.groups()
        if suffix in _BINARY:
            if "." in number:  # "Decimals are not allowed with binary suffixes"
                return None
            return int(number) * _BINARY[suffix]
        value = float(number) * _DECIMAL[suffix]
        return int(value) if value.is_integer() else None
    return plain_int(text)


def plain_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def plain_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


_TRUE = {"true", "1", "yes", "on", "t", "y"}
_FALSE = {"false", "0", "no", "off", "f", "n"}


def lax_bool(value: Any) -> Any:
    """pydantic lax-mode bool: ``"True"``, ``"TRUE"``, ``"1"``, ``1`` → True. Else unchanged."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    return value


def lax_int(value: Any) -> Any:
    """pydantic lax-mode int: ``"3"`` → 3, ``3.0`` → 3. Else unchanged."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        parsed = plain_int(value.strip())
        return parsed if parsed is not None else value
    return value


def lower_us(value: Any) -> Any:
    """Backend names: ``lower()`` and ``-`` → ``_`` (how --moe-backend is normalised)."""
    return value.strip().lower().replace("-", "_") if isinstance(value, str) else value


def upper(value: Any) -> Any:
    """Enum-by-name fields (attention backends): matched case-insensitively."""
    return value.strip().upper() if isinstance(value, str) else value


_DTYPE_ALIASES = {"half": "float16", "float": "float32", "bf16": "bfloat16", "fp16": "float16"}


def scalar(vtype: ValueType, text: str) -> Any:
    """A single command-line value, canonicalised for ``vtype``; BadValue when invalid."""
    if vtype == "int":
        number = plain_int(text)
        return BadValue(f"invalid int value: '{text}'") if number is None else number
    if vtype == "hint":
        number = human_int(text)
        return BadValue(f"invalid human-readable int: '{text}'") if number is None else number
    if vtype == "max_model_len":
        if text.strip().lower() in ("auto", "-1"):
            return "auto"  # fit to memory: not the same as omitting it
        number = human_int(text)
        return BadValue(f"invalid human-readable int: '{text}'") if number is None else number
    if vtype == "float":
        number_f = plain_float(text)
        return BadValue(f"invalid float value: '{text}'") if number_f is None else number_f
    if vtype == "lower_us":
        return lower_us(text)
    if vtype == "upper":
        return upper(text)
    if vtype == "dtype":
        lowered = text.strip().lower()
        return _DTYPE_ALIASES.get(lowered, lowered)
    return text


# --- JSON -------------------------------------------------------------------------------------


def loads(text: str) -> Any:
    """``json.loads`` that reports failure as BadValue (deep nesting included)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as err:
        return BadValue(f"invalid JSON: {err}")


def dotted_value(text: str, *, human_ints: bool) -> Any:
    """A dotted argument's value (docs/spec/vllm-cli-semantics.md §1.7): JSON, else human-readable
    int (0.22+), else the string."""
    parsed = loads(text)
    if not isinstance(parsed, BadValue):
        return parsed
    if human_ints:
        number = human_int(text)
        if number is not None:
            return number
    return text


def compact(value: Any) -> str:
    """One-line rendering of a canonical value for reports."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return str(value)
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


# --- typed configs ------------------------------------------------------------------------------

_COMPILATION_MODES = {
    "none": 0,
    "stock_torch_compile": 1,
    "dynamo_trace_once": 2,
    "vllm_compile": 3,
}


def compilation_mode(value: Any) -> Any:
    """``3`` ≡ ``"3"`` ≡ ``"VLLM_COMPILE"`` ≡ ``"vllm_compile"`` (the mode validator)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if is_integer(text):  # not "¹": int() rejects it
            return int(text)
        return _COMPILATION_MODES.get(text.lower(), value)
    return value


def capture_sizes(value: Any) -> Any:
    """Capture sizes are de-duplicated and sorted by vLLM, so order and repeats don't matter."""
    if isinstance(value, list | tuple):
        ints = [lax_int(v) for v in value]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in ints):
            return sorted(set(ints))
    return value


def _bools(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: lax_bool(v) if isinstance(v, str | int) else v for k, v in mapping.items()}


# field → canonicaliser, per exploded config (fields not listed are compared as data)
_FIELD_RULES: Mapping[str, Mapping[str, Any]] = {
    "compilation": {
        "mode": compilation_mode,
        "level": compilation_mode,
        "cudagraph_mode": upper,
        "cudagraph_capture_sizes": capture_sizes,
        "max_cudagraph_capture_size": lax_int,
        "use_inductor_graph_partition": lax_bool,
        "use_inductor": lax_bool,
        "use_cudagraph": lax_bool,
        "full_cuda_graph": lax_bool,
        "cudagraph_copy_inputs": lax_bool,
        "pass_config": lambda v: _bools(v) if isinstance(v, dict) else v,
    },
    "attention": {
        "backend": upper,
        "use_fp4_indexer_cache": lax_bool,
        "use_trtllm_attention": lax_bool,
        "use_prefill_query_quantization": lax_bool,
        "indexer_kv_dtype": lower_us,
    },
    "kernel": {
        "moe_backend": lower_us,
        "linear_backend": lower_us,
        "enable_flashinfer_autotune": lax_bool,
    },
}


def config_field(config: str, name: str, value: Any) -> Any:
    rule = _FIELD_RULES.get(config, {}).get(name)
    return rule(value) if rule is not None else value


def config_fields(config: str, mapping: Mapping[str, Any]) -> dict[str, Any]:
    """Canonicalise a typed config's fields; the legacy ``level`` key becomes ``mode``."""
    out: dict[str, Any] = {}
    for name, value in mapping.items():
        target = "mode" if config == "compilation" and name == "level" else name
        out[target] = config_field(config, name, value)
    return out


# --- speculative config ----------------------------------------------------------------------

_SPEC_INTS = ("num_speculative_tokens", "draft_tensor_parallel_size", "max_model_len")
_SPEC_BOOLS = (
    "disable_padded_drafter_batch",
    "parallel_drafting",
    "disable_eagle_block_drop",
    "enable_adaptive_verification",
)


def speculative(mapping: Mapping[str, Any], mtp_suffix: str = "_mtp") -> dict[str, Any]:
    """``SpeculativeConfig(**d)`` as data: top-level ``-`` → ``_`` (arg_utils.py:2125),
    model-specific MTP names → ``mtp``, ``[ngram]`` → ``ngram``, lax ints and bools."""
    out: dict[str, Any] = {}
    for raw_key, value in mapping.items():
        key = str(raw_key).replace("-", "_")
        if key == "method" and isinstance(value, str):
            method = value.strip()
            if method.endswith(mtp_suffix):
                method = "mtp"
            elif method == "[ngram]":
                method = "ngram"
            value = method
        elif key in _SPEC_INTS:
            value = lax_int(value)
        elif key in _SPEC_BOOLS:
            value = lax_bool(value)
        elif key == "moe_backend":
            value = lower_us(value)
        elif key == "attention_backend":
            value = upper(value)
        elif key == "synthetic_acceptance_length" and isinstance(value, str):
            number = plain_float(value)
            value = number if number is not None else value
        out[key] = value
    return out

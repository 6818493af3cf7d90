"""InferenceX's benchmark library (``benchmarks/benchmark_lib.sh``) as shell handlers.

The library's top level is evaluated like any script (its exports, the agentic
``unset MAX_MODEL_LEN``, its KV-offload validation). Its functions are not: the ones that
decide the launch are modelled here semantically, any that may itself start a vLLM server is
inlined, and the rest are side-effect helpers (GPU monitors, waits, benchmark clients) treated
as no-ops, with the globals they could assign marked as possibly changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.benchmarks.launch_detector import LAUNCH_TEXT
from bot.shell.assigns import scan
from bot.shell.handlers import Handlers, LibraryCall, Model, Shell, SourceHandler
from bot.shell.parse import ParsedFile
from bot.shell.result import SourceSpan, Unresolved
from bot.shell.signals import ExitSignal
from bot.shell.state import FunctionDef
from bot.shell.text import EMPTY, Text, opaque
from bot.shell.usage import unrecorded, variable_read, variable_tested

if TYPE_CHECKING:
    from tree_sitter import Node

LIBRARY_NAMES = frozenset({"benchmark_lib.sh"})
LIBRARY_PATH = "benchmarks/benchmark_lib.sh"


def _value(ev: Shell, name: str, span: SourceSpan) -> Text:
    view = ev.param(name, None, span)
    return view.values[0] if view.values else EMPTY


def _exit(ev: Shell, span: SourceSpan, message: str) -> None:
    raise ExitSignal(1, span, message)


def _unset(ev: Shell, name: str, span: SourceSpan) -> bool:
    """Whether ``name`` is unset or empty (an unknown value counts as set). Of a variable the
    job gave and the script left as it was, only that counts as read: the evaluation cache
    reuses the result for another value that is (not) empty alike (the concurrency of a
    sweep's points, which the launch never reads otherwise)."""
    with unrecorded():
        value = _value(ev, name, span)
        var = ev.st.lookup(name)
    if var is not None and var is ev.input_vars.get(name):
        variable_tested(name)
    else:
        variable_read(name)
    return value.known and value.s == ""


def check_env_vars(ev: Shell, args: Sequence[Text], span: SourceSpan) -> None:
    """Exit 1 naming the variables that are unset or empty (unknown values count as set)."""
    missing = [a.s for a in args if _unset(ev, a.s, span)]
    if missing:
        _exit(ev, span, f"required environment variables are not set: {', '.join(missing)}")
    ev.st.status = 0


def _kv_mode(ev: Shell, span: SourceSpan) -> Text:
    mode = _value(ev, "KV_OFFLOADING", span)
    if mode.known and mode.s == "":
        _exit(ev, span, "KV_OFFLOADING must be set for agentic benchmarks")
    return mode


def agentic_kv_offload_enabled(ev: Shell, args: Sequence[Text], span: SourceSpan) -> None:
    mode = _kv_mode(ev, span)
    ev.st.status = None if not mode.known else int(mode.s == "none")


def require_agentic_kv_offload_none(ev: Shell, args: Sequence[Text], span: SourceSpan) -> None:
    mode = _kv_mode(ev, span)
    backend = _value(ev, "KV_OFFLOAD_BACKEND", span)
    if mode.known and mode.s != "none":
        _exit(ev, span, f"expected KV_OFFLOADING=none, got '{mode.s}'")
    if backend.known and backend.s != "":
        _exit(ev, span, "KV_OFFLOAD_BACKEND must be empty when KV_OFFLOADING=none")
    ev.st.status = 0 if mode.known and backend.known else None


def require_agentic_kv_offload_backend(ev: Shell, args: Sequence[Text], span: SourceSpan) -> None:
    """0 for dram with the expected backend, 1 for none; exits on any other combination."""
    expected = args[0] if args else EMPTY
    mode = _kv_mode(ev, span)
    backend = _value(ev, "KV_OFFLOAD_BACKEND", span)
    dram = _value(ev, "TOTAL_CPU_DRAM_GB", span)
    if not (mode.known and backend.known and expected.known):
        ev.st.status = None
        return
    if mode.s == "none":
        if backend.s:
            _exit(ev, span, "KV_OFFLOAD_BACKEND must be empty when KV_OFFLOADING=none")
        ev.st.status = 1
        return
    if mode.s == "dram":
        if backend.s != expected.s:
            _exit(
                ev,
                span,
                f"expected KV_OFFLOAD_BACKEND={expected.s} when KV_OFFLOADING=dram, "
                f"got '{backend.s}'",
            )
        if dram.known and not re.fullmatch(r"[1-9][0-9]*", dram.s):
            _exit(ev, span, "DRAM KV offloading requires a positive TOTAL_CPU_DRAM_GB capacity")
        ev.st.status = 0 if dram.known else None
        return
    _exit(ev, span, f"unsupported KV_OFFLOADING value '{mode.s}' (expected one of: none, dram)")


def _eval_context(ev: Shell, requested: Text, span: SourceSpan) -> Text:
    if not requested.known or not re.fullmatch(r"\d+", requested.s.strip()):
        return requested.computed() if requested.known is False else Text.lit(requested.s)
    if int(requested.s) == 0:
        item = Unresolved(
            "eval context length",
            "the model's native context length (read from its config at run time)",
            span.file,
            span.line,
        )
        return opaque("EVAL_MAX_MODEL_LEN", "host-probe", item)
    ev.assume(
        span,
        "eval-context",
        "eval context length",
        f"the model's native context is assumed to be at least {requested.s} tokens "
        "(the library caps the requested length at it)",
    )
    return Text.lit(str(int(requested.s)))


def compute_eval_context_length(ev: Shell, args: Sequence[Text], span: SourceSpan) -> None:
    requested = args[1] if len(args) > 1 else EMPTY
    value = _eval_context(ev, requested, span)
    ev.set_var("EVAL_MAX_MODEL_LEN", value, span)
    ev.write_out(value + Text.lit("\n"), span)
    ev.st.status = 0


def setup_eval_context(ev: Shell, args: Sequence[Text], span: SourceSpan) -> None:
    total = ev.arithmetic(Text.lit("ISL + OSL + 256"), span)
    value = _eval_context(ev, total, span)
    ev.set_var("EVAL_MAX_MODEL_LEN", value, span, export=True)
    ev.st.status = 0


def start_gpu_monitor(ev: Shell, args: Sequence[Text], span: SourceSpan) -> None:
    """The monitor's CSV path and interval follow its options; vendor and PID are host facts.

    Modelled rather than skipped because the library assigns (and exports) GPU_METRICS_CSV in
    it: a skipped helper would mark that env var as possibly changed on every launch line.
    """
    output = _value(ev, "GPU_METRICS_CSV", span)
    interval = Text.lit("1")
    index = 0
    while index < len(args):
        option = args[index]
        if option.known and option.s in ("--output", "--interval"):
            if index + 1 >= len(args):
                # `shift 2` with one argument left fails and the loop never ends in bash.
                _exit(ev, span, f"start_gpu_monitor: {option.s} without a value never returns")
            if option.s == "--output":
                output = args[index + 1]
            else:
                interval = args[index + 1]
            index += 2
        elif not option.known:
            item = ev.unresolved(span, "$GPU_METRICS_CSV", "start_gpu_monitor option not known")
            output = opaque("GPU_METRICS_CSV", "derived", item)
            index += 1
        else:
            index += 1
    ev.set_var("GPU_METRICS_CSV", output, span, export=True)
    ev.set_var("GPU_MONITOR_INTERVAL", interval, span)
    vendor = ev.unresolved(span, "$GPU_MONITOR_VENDOR", "which GPU tool the host has")
    pid = ev.unresolved(span, "$GPU_MONITOR_PID", "the monitor's process id")
    ev.set_var("GPU_MONITOR_VENDOR", opaque("GPU_MONITOR_VENDOR", "host-probe", vendor), span)
    ev.set_var("GPU_MONITOR_PID", opaque("GPU_MONITOR_PID", "process-id", pid), span)
    ev.st.status = 0


def stop_gpu_monitor(ev: Shell, args: Sequence[Text], span: SourceSpan) -> None:
    """Stops the monitor; the library clears its PID and vendor afterwards."""
    ev.set_var("GPU_MONITOR_PID", EMPTY, span)
    ev.set_var("GPU_MONITOR_VENDOR", EMPTY, span)
    ev.st.status = 0


MODELS: dict[str, Model] = {
    "check_env_vars": check_env_vars,
    "agentic_kv_offload_enabled": agentic_kv_offload_enabled,
    "require_agentic_kv_offload_none": require_agentic_kv_offload_none,
    "require_agentic_kv_offload_backend": require_agentic_kv_offload_backend,
    "compute_eval_context_length": compute_eval_context_length,
    "setup_eval_context": setup_eval_context,
    "start_gpu_monitor": start_gpu_monitor,
    "stop_gpu_monitor": stop_gpu_monitor,
}

# Models that stand for the library's definition only: a script calling one of these without a
# library that defines it runs an unknown command, not the model.
MODELLED_IF_DEFINED = frozenset({"start_gpu_monitor", "stop_gpu_monitor"})


# --- calls of library functions without a model ---------------------------------------------


@dataclass(frozen=True)
class Analysis:
    assigns: frozenset[str]  # globals the function (or helpers it calls) may assign
    may_launch: bool  # its text (or a helper's) starts a vLLM server
    calls: frozenset[str]


def analyse(fn: FunctionDef, functions: Mapping[str, FunctionDef]) -> Analysis:
    """What a library function may do, including the library helpers it calls (memoised)."""
    key = ("analysis", fn.name, fn.analysed_body.start_byte)
    cached = fn.pf.memo.get(key)
    if isinstance(cached, Analysis):
        return cached
    result = _analyse(fn, functions, set())
    fn.pf.memo[key] = result
    return result


def _analyse(fn: FunctionDef, functions: Mapping[str, FunctionDef], seen: set[str]) -> Analysis:
    seen.add(fn.name)
    assigned, local, calls, may_launch = _read(fn.analysed_body, fn.pf)
    globals_ = assigned - local
    for call in sorted(calls):
        callee = functions.get(call)
        if callee is None or not callee.library or call in seen or call in MODELS:
            continue
        inner = _analyse(callee, functions, seen)
        globals_ |= inner.assigns
        may_launch = may_launch or inner.may_launch
    return Analysis(frozenset(globals_), may_launch, frozenset(calls))


def _read(body: Node, pf: ParsedFile) -> tuple[set[str], set[str], set[str], bool]:
    """All the analysis reads of a body: what it assigns, declares local and calls, and
    whether its text starts a vLLM server."""
    assigned, local, calls = scan(body, pf)
    return (
        assigned,
        local,
        calls,
        LAUNCH_TEXT.search(pf.data[body.start_byte : body.end_byte]) is not None,
    )


def _signature(body: Node, pf: ParsedFile) -> object:
    assigned, local, calls, may_launch = _read(body, pf)
    return sorted(assigned), sorted(local), sorted(calls), may_launch


def _library_call(fn: FunctionDef, functions: Mapping[str, FunctionDef]) -> LibraryCall:
    analysis = analyse(fn, functions)
    return LibraryCall(inline=analysis.may_launch, assigns=analysis.assigns)


LIBRARY = SourceHandler(
    name="benchmark_lib",
    label="the benchmark library",
    basenames=LIBRARY_NAMES,
    fallback=LIBRARY_PATH,
    analyse=_library_call,
    signature=_signature,
)


def register(handlers: Handlers) -> None:
    """The benchmark library: its sourced file and the functions modelled semantically."""
    handlers.source(LIBRARY)
    for name, model in MODELS.items():
        handlers.command(name, model, defined_only=name in MODELLED_IF_DEFINED)

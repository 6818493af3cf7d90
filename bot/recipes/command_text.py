"""Command text exactly as the recipes site prints it: pip form, Docker form, routers.

Layout and quoting are part of the conformance target (same bytes as upstream), so each rule
lives here once: values are shell-quoted only when needed, flags and positionals never are,
continuation lines are ``" \\\\\\n  "``, and Docker ``-e`` values are never quoted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.recipes.jsvalues import js_str

CONTINUATION = " \\\n  "
HF_CACHE = "~/.cache/huggingface:/root/.cache/huggingface"

_BARE_VAR = re.compile(r"\$[A-Z_][A-Z0-9_]*\Z")
_BARE_TEXT = re.compile(r"[A-Za-z0-9_./=:@,+%-]+\Z")


_quoted: dict[str, str] = {}  # values repeat across renderings; quoting is pure


def quote_value(value: str) -> str:
    """Quote a flag value for a POSIX shell, leaving ``$VAR`` and plain words bare."""
    found = _quoted.get(value)
    if found is None:
        if _BARE_VAR.match(value) or _BARE_TEXT.match(value):
            found = value
        else:
            found = "'" + value.replace("'", "'\\''") + "'"
        if len(_quoted) < 100_000:
            _quoted[value] = found
    return found


def command_lines(tokens: Sequence[str]) -> list[str]:
    """Pair deduplicated tokens again: ``flag value`` on one line, anything else alone.

    A non-flag right after a flag is that flag's value (quoted as needed); any other token
    is a line of its own, written bare.
    """
    lines: list[str] = []
    previous_is_flag = False
    for token in tokens:
        if token[:1] == "-":
            lines.append(token)
            previous_is_flag = True
        elif previous_is_flag:
            lines[-1] = f"{lines[-1]} {_quoted.get(token) or quote_value(token)}"
            previous_is_flag = False
        else:
            lines.append(token)
    return lines


_tails: dict[tuple[str, ...], str] = {}  # ~6x fewer distinct token lists than commands


def pip_tail(tokens: Sequence[str]) -> str:
    """Everything after ``vllm serve <model>`` in the pip command."""
    if not tokens:
        return ""
    key = tuple(tokens)
    found = _tails.get(key)
    if found is None:
        found = CONTINUATION + CONTINUATION.join(command_lines(tokens))
        if len(_tails) < 50_000:
            _tails[key] = found
    return found


# brand key → (string form, argv form)
BRAND_DOCKER_FLAGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "nvidia": ("--gpus all", ("--gpus", "all")),
    "amd": (
        "--device=/dev/kfd --device=/dev/dri" + CONTINUATION + "--security-opt seccomp=unconfined "
        "--group-add video",
        (
            "--device=/dev/kfd",
            "--device=/dev/dri",
            "--security-opt",
            "seccomp=unconfined",
            "--group-add",
            "video",
        ),
    ),
    "tpu": (
        "--privileged --network host" + CONTINUATION + "-v /dev/shm:/dev/shm",
        ("--privileged", "--network", "host", "-v", "/dev/shm:/dev/shm"),
    ),
    "xpu": (
        "--device /dev/dri" + CONTINUATION + "-v /dev/dri/by-path:/dev/dri/by-path --shm-size=16g",
        ("--device", "/dev/dri", "-v", "/dev/dri/by-path:/dev/dri/by-path", "--shm-size", "16g"),
    ),
    "cpu": ("--shm-size=16g", ("--shm-size", "16g")),
}


def docker_flags_key(brand_key: str, generation: str) -> str:
    if brand_key == "intel":
        return "xpu" if generation == "xpu" else "cpu"
    return brand_key


@dataclass(frozen=True)
class DockerPrefix:
    """``docker run`` up to and including ``<image> <model>`` (shared by a run's nodes)."""

    text: str
    argv: tuple[str | None, ...]


_prefixes: dict[tuple[Any, ...], DockerPrefix] = {}  # ~6x fewer distinct prefixes than commands


def docker_prefix(
    flags_key: str, port: int, env: Mapping[str, Any], image: str | None, model: str
) -> DockerPrefix:
    # value types in the key: 1, 1.0 and True are equal in Python but print differently
    key = (flags_key, port, image, model, *[(k, v, v.__class__) for k, v in env.items()])
    try:
        found = _prefixes.get(key)
    except TypeError:  # an unhashable env value (a YAML list or mapping): not memoised
        return _docker_prefix(flags_key, port, env, image, model)
    if found is None:
        found = _docker_prefix(flags_key, port, env, image, model)
        if len(_prefixes) < 50_000:
            _prefixes[key] = found
    return found


def _docker_prefix(
    flags_key: str, port: int, env: Mapping[str, Any], image: str | None, model: str
) -> DockerPrefix:
    flag_text, flag_argv = BRAND_DOCKER_FLAGS[flags_key]
    mounts: list[str] = []
    if model.startswith("/"):
        mounts.append(f"{model}:{model}:ro")
    for key, value in env.items():
        if key.endswith("_CONFIG_PATH"):
            text = js_str(value)
            mounts.append(f"{text}:{text}:ro")
    env_pairs = [f"{key}={js_str(value)}" for key, value in env.items()]
    image_text = "undefined" if image is None else image
    pieces = [
        "docker run " + flag_text,
        f"--privileged --ipc=host -p {port}:{port}",
        "-v " + HF_CACHE,
    ]
    pieces.extend("-v " + mount for mount in mounts)
    pieces.extend("-e " + pair for pair in env_pairs)
    pieces.append(f"{image_text} {model}")
    text = CONTINUATION.join(pieces)
    if model.startswith("/"):
        text = f"# {model} must exist on the host (mounted read-only)\n" + text
    argv: list[str | None] = ["docker", "run", *flag_argv]
    argv += ["--privileged", "--ipc=host", "-p", f"{port}:{port}", "-v", HF_CACHE]
    for mount in mounts:
        argv += ["-v", mount]
    for pair in env_pairs:
        argv += ["-e", pair]
    argv.append(image)
    argv.append(model)
    return DockerPrefix(text, tuple(argv))


def docker_forms(
    prefix: DockerPrefix, argv_tail: Sequence[str], pip_tail_text: str
) -> tuple[str, list[str | None]]:
    """``docker run`` as text and as argv around an already rendered pip command."""
    return prefix.text + pip_tail_text, [*prefix.argv, *argv_tail]


def router_command(lines: Sequence[str]) -> str:
    """Router commands continue with four spaces, not two."""
    return " \\\n    ".join(lines)

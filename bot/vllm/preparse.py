"""The stages of :func:`bot.vllm.normalise.normalise` before argparse, on argv tokens
(docs/spec/vllm-cli-semantics.md §1): find the entrypoint, move ``--model`` to the
positional slot, splice ``--config FILE``, ``_`` → ``-`` before the first dot and ``-O`` →
``--optimization-level``, collect dotted arguments per spelled prefix and re-emit them last.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.vllm import values as V
from bot.vllm.serve_config import Findings
from bot.vllm.versions import Version, rules_version
from bot.yamlio.safe import load_safe

V0_17: Version = (0, 17, 0)
V0_22: Version = (0, 22, 0)
V0_27_1: Version = (0, 27, 1)
API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"


@dataclass(frozen=True)
class Tok:
    text: str
    raw: tuple[str, ...]  # the original argv tokens this token stands for
    data: Any = None  # a re-emitted dotted dict (already parsed)
    dotted: bool = False


ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_MODEL_OPTION = re.compile(r"^--model(=.+|$)")


def _dash_normalise(text: str) -> str:
    """``--max_num_seqs`` → ``--max-num-seqs``; only up to the first dot
    (docs/spec/vllm-cli-semantics.md §1.3)."""
    head, dot, tail = text[2:].partition(".")
    return "--" + head.replace("_", "-") + dot + tail


# --- stages 0-2: entrypoint, --model, --config --------------------------------------------------


def entrypoint(
    argv: Sequence[str], found: Findings
) -> tuple[Literal["vllm serve", "api_server"], list[str]]:
    args = list(argv)
    env_words = 0
    while env_words < len(args) and ENV_ASSIGNMENT.match(args[env_words]):
        env_words += 1
    if env_words:
        found.add(
            "note",
            "env-prefix",
            "leading NAME=value words are environment assignments, not arguments",
            args[:env_words],
        )
        args = args[env_words:]
    if args and args[0].rsplit("/", 1)[-1] == "vllm":
        if len(args) > 1 and args[1] == "serve":
            return "vllm serve", args[2:]
        sub = args[1] if len(args) > 1 else ""
        found.add(
            "error", "not-serve", f"not a `vllm serve` command (subcommand '{sub}')", args[:2]
        )
        return "vllm serve", args[2:]
    if args and args[0] == "serve":
        return "vllm serve", args[1:]
    if args and re.match(r"^python[0-9.]*$", args[0].rsplit("/", 1)[-1]):
        if len(args) > 2 and args[1] == "-m" and args[2] == API_SERVER_MODULE:
            return "api_server", args[3:]
        found.add("error", "not-serve", "not a vLLM server command", args[:3])
        return "api_server", args[3:] if len(args) > 2 else []
    return "vllm serve", args


def move_model(args: list[str], entry: str, found: Findings) -> tuple[list[str], Tok | None]:
    """§1.1: the first ``--model X`` / ``--model=X`` becomes the positional model."""
    if entry != "vllm serve":
        return args, None
    index = next((i for i, a in enumerate(args) if _MODEL_OPTION.match(a)), None)
    if index is None:
        return args, None
    if args[index] == "--model":
        if index + 1 >= len(args):
            found.add("error", "missing-value", "--model needs a value", ["--model"])
            return args[:index], None
        model = Tok(args[index + 1], (args[index], args[index + 1]))
        rest = args[:index] + args[index + 2 :]
    else:
        model = Tok(args[index].removeprefix("--model="), (args[index],))
        rest = args[:index] + args[index + 1 :]
    found.add(
        "note",
        "model-option",
        "--model is moved to the positional slot (deprecated spelling)",
        model.raw,
    )
    return rest, model


def _yaml_args(
    data: Any, path: str, entry: str, version: Version, found: Findings
) -> tuple[list[Tok], str | None]:
    """§1.2: a config file's mapping → argv tokens, as ``_pull_args_from_config`` emits them."""
    origin = ("--config", path)
    tokens: list[Tok] = []
    model: str | None = None
    if not isinstance(data, dict):
        found.add("error", "config-file", f"{path}: the config file must be a YAML mapping", origin)
        return tokens, None
    for raw_key, value in data.items():
        key = str(raw_key)
        if key == "model":
            model = str(value)
            continue
        flag = f"--{key}"
        if value is True:
            tokens.append(Tok(flag, origin))
        elif value is False:
            emits_no = entry == "api_server" and rules_version(version) > V0_27_1
            if emits_no:
                tokens.append(Tok(f"--no-{key}", origin))
            else:
                found.add(
                    "hazard",
                    "yaml-false",
                    f"{path}: `{key}: false` is dropped by `vllm serve`, the same as omitting it",
                    origin,
                )
        elif isinstance(value, list):
            if value:
                tokens.append(Tok(flag, origin))
                tokens.extend(Tok(str(v), origin) for v in value)
        elif isinstance(value, dict):
            if rules_version(version) < V0_17:
                found.add(
                    "error",
                    "config-file",
                    f"{path}: `{key}` is a mapping; before 0.17 it is passed as a Python repr "
                    "and fails to parse",
                    origin,
                )
            tokens.extend((Tok(flag, origin), Tok(json.dumps(value), origin)))
        else:
            tokens.extend((Tok(flag, origin), Tok(str(value), origin)))
    return tokens, model


def splice_config(
    args: list[str],
    entry: str,
    version: Version,
    config_files: Mapping[str, str] | None,
    found: Findings,
) -> tuple[list[Tok], str | None]:
    """Remove ``--config FILE`` and splice its arguments before the CLI ones (CLI > YAML)."""
    toks = [Tok(a, (a,)) for a in args]
    for tok in toks:
        if tok.text.startswith("--config="):
            found.add(
                "hazard",
                "config-equals",
                "--config=FILE is consumed but never read: its arguments are silently ignored",
                tok.raw,
            )
    indices = [i for i, t in enumerate(toks) if t.text == "--config"]
    if not indices:
        return toks, None
    if len(indices) > 1:
        found.add("error", "config-file", "only one --config file is allowed", ["--config"])
    index = indices[0]
    if index + 1 >= len(toks):
        found.add("error", "missing-value", "--config needs a file", ["--config"])
        return toks[:index], None
    path = toks[index + 1].text
    rest = toks[:index] + toks[index + 2 :]
    if not path.endswith((".yaml", ".yml")):
        found.add(
            "error",
            "config-file",
            f"config file {path} must end in .yaml or .yml",
            ("--config", path),
        )
        return rest, None
    text = (config_files or {}).get(path)
    if text is None:
        found.add(
            "hazard",
            "config-unread",
            f"--config {path}: file content not provided, its arguments are not compared",
            ("--config", path),
        )
        return rest, None
    try:
        data = load_safe(text, path)
    except Exception as err:  # ruamel raises many error types for malformed input
        found.add(
            "error",
            "config-file",
            f"{path}: malformed YAML ({type(err).__name__})",
            ("--config", path),
        )
        return rest, None
    spliced, yaml_model = _yaml_args(data, path, entry, version, found)
    return spliced + rest, yaml_model


# --- stage 3-4: dashes, -O, dotted arguments ---------------------------------------------------


def rewrite(toks: list[Tok], version: Version, found: Findings) -> list[Tok]:
    """§1.3 and §1.12, one pass like vLLM's."""
    out: list[Tok] = []
    old_o = rules_version(version) < V0_17
    for i, tok in enumerate(toks):
        text = tok.text
        if text.startswith("--"):
            if "=" in text:
                key, value = text.split("=", 1)
                text = f"{_dash_normalise(key)}={value}"
            else:
                text = _dash_normalise(text)
            out.append(Tok(text, tok.raw))
        elif text.startswith("-O") and text != "-O":
            if old_o and text[2] == ".":
                found.add(
                    "note",
                    "old-O",
                    f"{text}: -O.<k> is rewritten to -cc.<k> in 0.12 (deprecated)",
                    tok.raw,
                )
                out.append(Tok("-cc" + text[2:], tok.raw))
                continue
            level = text[3:] if text[2] == "=" else text[2:]
            out.append(Tok(f"--optimization-level={level}", tok.raw))
        elif text == "-O" and i + 1 < len(toks) and toks[i + 1].text in {"0", "1", "2", "3"}:
            out.append(Tok("--optimization-level", tok.raw))
        else:
            out.append(tok)
    return out


def _merge(original: dict[str, Any], update: dict[str, Any], prefix: str = "") -> set[str]:
    """vLLM's recursive_dict_update: nested dicts merge, lists extend, leaves overwrite."""
    duplicates: set[str] = set()
    for key, value in update.items():
        current = original.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            duplicates |= _merge(current, value, f"{prefix}{key}.")
        elif isinstance(value, list) and isinstance(current, list):
            current.extend(value)
        else:
            if key in original:
                duplicates.add(prefix + key)
            original[key] = value
    return duplicates


@dataclass
class Dotted:
    value: dict[str, Any] = field(default_factory=dict)
    raw: list[str] = field(default_factory=list)
    field_raw: dict[str, list[str]] = field(default_factory=dict)


def collect_dotted(toks: list[Tok], version: Version, found: Findings) -> list[Tok]:
    """§1.7: pull ``--x.k v`` / ``--x.k=v`` / ``-cc.k v`` out, merge per spelled prefix,
    re-emit each merged dict at the end."""
    human = rules_version(version) >= V0_22
    dotted: dict[str, Dotted] = {}
    delete: set[int] = set()
    for i, tok in enumerate(toks):
        if i in delete:
            continue
        text = tok.text
        if not (text.startswith("-") and "." in text):
            continue
        raw = list(tok.raw)
        if "=" in text:
            name, value_text = text.split("=", 1)
            if "." not in name:
                continue  # the dot was in the value
        else:
            name = text
            if i + 1 >= len(toks):
                found.add("error", "missing-value", f"{text} needs a value", tok.raw)
                delete.add(i)
                continue
            value_text = toks[i + 1].text
            raw.extend(toks[i + 1].raw)
            delete.add(i + 1)
        delete.add(i)
        value: Any
        if name.endswith("+"):
            name = name[:-1]
            value = value_text.split(",")
        else:
            value = V.dotted_value(value_text, human_ints=human)
        prefix, *keys = name.split(".")
        nested: Any = value
        for key in reversed(keys):
            nested = {key: nested}
        entry = dotted.setdefault(prefix, Dotted())
        duplicates = _merge(entry.value, nested if isinstance(nested, dict) else {})
        for dup in sorted(duplicates):
            found.add(
                "hazard",
                "duplicate-dotted-key",
                f"{prefix}.{dup} is set twice; the last value wins",
                raw,
            )
        entry.raw.extend(raw)
        if keys:
            entry.field_raw.setdefault(keys[0], []).extend(raw)
    kept = [t for i, t in enumerate(toks) if i not in delete]
    for prefix, entry in dotted.items():
        kept.append(Tok(prefix, tuple(entry.raw), data=entry, dotted=True))
    return kept

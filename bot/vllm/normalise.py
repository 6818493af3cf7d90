"""argv → canonical serve configuration, reproducing ``FlexibleArgumentParser``
(docs/spec/vllm-cli-semantics.md §1, §5.2).

The order is vLLM's: move ``--model`` to the positional slot; splice ``--config FILE``;
``_`` → ``-`` before the first dot and ``-O`` → ``--optimization-level``; collect dotted
arguments per spelled prefix and re-emit them last; then argparse: unique-prefix expansion,
short aliases, values, last-wins per destination. The result holds canonical values per
canonical key, the raw tokens each came from, and findings (errors vLLM would stop on,
hazards it would accept silently, notes). Nothing here raises on bad input.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.argv import looks_like_option
from bot.vllm import values as V
from bot.vllm.catalogue import CONFIG_FIELD_SPANS, FLAGS, FlagSpec, Option, flag_table
from bot.vllm.versions import NEWEST, Version, fmt_version, rules_version, span_status
from bot.yamlio.safe import load_safe

Severity = Literal["error", "hazard", "note"]
UsageContext = Literal["OPENAI_API_SERVER", "LLM_CLASS"]

V0_17: Version = (0, 17, 0)
V0_22: Version = (0, 22, 0)
V0_27_1: Version = (0, 27, 1)
API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"


@dataclass(frozen=True)
class Finding:
    """Something about one side's argv: an error (vLLM would not start), a hazard (accepted,
    probably not what the author meant) or a note."""

    severity: Severity
    code: str
    message: str
    tokens: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setting:
    key: str  # canonical key, e.g. "scheduler.max_num_seqs"
    flag: str  # canonical long spelling, e.g. "--max-num-seqs"
    value: Any  # canonical value
    tokens: tuple[str, ...]  # raw argv tokens it came from (flag and value as spelled)
    spec: FlagSpec | None  # None for the positional model


@dataclass(frozen=True)
class ServeConfig:
    version: Version
    usage_context: UsageContext
    entrypoint: Literal["vllm serve", "api_server"]
    model: str | None
    model_tokens: tuple[str, ...]
    settings: tuple[Setting, ...]  # in order of first appearance
    findings: tuple[Finding, ...]

    def get(self, key: str) -> Setting | None:
        return next((s for s in self.settings if s.key == key), None)

    def values(self) -> dict[str, Any]:
        return {s.key: s.value for s in self.settings}

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")


# --- tokens -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tok:
    text: str
    raw: tuple[str, ...]  # the original argv tokens this token stands for
    data: Any = None  # a re-emitted dotted dict (already parsed)
    dotted: bool = False


_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_MODEL_OPTION = re.compile(r"^--model(=.+|$)")


def split_launch_line(line: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """§5.1: shell-tokenise a launch line; leading ``NAME=value`` words are its env."""
    try:
        words = shlex.split(line.replace("\\\n", " "))
    except ValueError:
        words = line.split()
    return split_env_prefix(words)


def split_env_prefix(argv: Sequence[str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Leading ``NAME=value`` words of an argv (``VAR=1 vllm serve ...``) → (env, rest)."""
    words = list(argv)
    env: dict[str, str] = {}
    while words and _ENV_ASSIGNMENT.match(words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    return env, tuple(words)


def _dash_normalise(text: str) -> str:
    """``--max_num_seqs`` → ``--max-num-seqs``; only up to the first dot
    (docs/spec/vllm-cli-semantics.md §1.3)."""
    head, dot, tail = text[2:].partition(".")
    return "--" + head.replace("_", "-") + dot + tail


class _Findings:
    def __init__(self) -> None:
        self.items: list[Finding] = []

    def add(self, severity: Severity, code: str, message: str, tokens: Sequence[str] = ()) -> None:
        finding = Finding(severity, code, message, tuple(tokens))
        if finding not in self.items:
            self.items.append(finding)


# --- stages 0-2: entrypoint, --model, --config --------------------------------------------------


def _entrypoint(
    argv: Sequence[str], found: _Findings
) -> tuple[Literal["vllm serve", "api_server"], list[str]]:
    args = list(argv)
    env_words = 0
    while env_words < len(args) and _ENV_ASSIGNMENT.match(args[env_words]):
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


def _move_model(args: list[str], entry: str, found: _Findings) -> tuple[list[str], _Tok | None]:
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
        model = _Tok(args[index + 1], (args[index], args[index + 1]))
        rest = args[:index] + args[index + 2 :]
    else:
        model = _Tok(args[index].removeprefix("--model="), (args[index],))
        rest = args[:index] + args[index + 1 :]
    found.add(
        "note",
        "model-option",
        "--model is moved to the positional slot (deprecated spelling)",
        model.raw,
    )
    return rest, model


def _yaml_args(
    data: Any, path: str, entry: str, version: Version, found: _Findings
) -> tuple[list[_Tok], str | None]:
    """§1.2: a config file's mapping → argv tokens, as ``_pull_args_from_config`` emits them."""
    origin = ("--config", path)
    tokens: list[_Tok] = []
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
            tokens.append(_Tok(flag, origin))
        elif value is False:
            emits_no = entry == "api_server" and rules_version(version) > V0_27_1
            if emits_no:
                tokens.append(_Tok(f"--no-{key}", origin))
            else:
                found.add(
                    "hazard",
                    "yaml-false",
                    f"{path}: `{key}: false` is dropped by `vllm serve`, the same as omitting it",
                    origin,
                )
        elif isinstance(value, list):
            if value:
                tokens.append(_Tok(flag, origin))
                tokens.extend(_Tok(str(v), origin) for v in value)
        elif isinstance(value, dict):
            if rules_version(version) < V0_17:
                found.add(
                    "error",
                    "config-file",
                    f"{path}: `{key}` is a mapping; before 0.17 it is passed as a Python repr "
                    "and fails to parse",
                    origin,
                )
            tokens.extend((_Tok(flag, origin), _Tok(json.dumps(value), origin)))
        else:
            tokens.extend((_Tok(flag, origin), _Tok(str(value), origin)))
    return tokens, model


def _splice_config(
    args: list[str],
    entry: str,
    version: Version,
    config_files: Mapping[str, str] | None,
    found: _Findings,
) -> tuple[list[_Tok], str | None]:
    """Remove ``--config FILE`` and splice its arguments before the CLI ones (CLI > YAML)."""
    toks = [_Tok(a, (a,)) for a in args]
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


def _rewrite(toks: list[_Tok], version: Version, found: _Findings) -> list[_Tok]:
    """§1.3 and §1.12, one pass like vLLM's."""
    out: list[_Tok] = []
    old_o = rules_version(version) < V0_17
    for i, tok in enumerate(toks):
        text = tok.text
        if text.startswith("--"):
            if "=" in text:
                key, value = text.split("=", 1)
                text = f"{_dash_normalise(key)}={value}"
            else:
                text = _dash_normalise(text)
            out.append(_Tok(text, tok.raw))
        elif text.startswith("-O") and text != "-O":
            if old_o and text[2] == ".":
                found.add(
                    "note",
                    "old-O",
                    f"{text}: -O.<k> is rewritten to -cc.<k> in 0.12 (deprecated)",
                    tok.raw,
                )
                out.append(_Tok("-cc" + text[2:], tok.raw))
                continue
            level = text[3:] if text[2] == "=" else text[2:]
            out.append(_Tok(f"--optimization-level={level}", tok.raw))
        elif text == "-O" and i + 1 < len(toks) and toks[i + 1].text in {"0", "1", "2", "3"}:
            out.append(_Tok("--optimization-level", tok.raw))
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
class _Dotted:
    value: dict[str, Any] = field(default_factory=dict)
    raw: list[str] = field(default_factory=list)
    field_raw: dict[str, list[str]] = field(default_factory=dict)


def _collect_dotted(toks: list[_Tok], version: Version, found: _Findings) -> list[_Tok]:
    """§1.7: pull ``--x.k v`` / ``--x.k=v`` / ``-cc.k v`` out, merge per spelled prefix,
    re-emit each merged dict at the end."""
    human = rules_version(version) >= V0_22
    dotted: dict[str, _Dotted] = {}
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
        entry = dotted.setdefault(prefix, _Dotted())
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
        kept.append(_Tok(prefix, tuple(entry.raw), data=entry, dotted=True))
    return kept


# --- stage 5: argparse --------------------------------------------------------------------------


@dataclass
class _Occurrence:
    option: Option
    value: Any  # str | list[str] | _Dotted | None (flag without value)
    raw: tuple[str, ...]
    order: int
    dotted: bool = False
    spelled: str = ""


def _availability_text(option: Option) -> str:
    span = f"since {fmt_version(option.since)}"
    if option.until is not None:
        span = f"{fmt_version(option.since)}–{fmt_version(option.until)}"
    return span


def _resolve_option(
    name: str, version: Version, found: _Findings, raw: Sequence[str]
) -> tuple[Option, str | None] | None:
    """Exact spelling, else a unique prefix (argparse allow_abbrev), else single-char + value."""
    table = flag_table()
    exact = table.lookup(name, version)
    if exact is not None and exact[1] != "no":
        option, status = exact
        if status == "unverified":
            found.add(
                "note",
                "unverified-flag",
                f"{name} exists {_availability_text(option)}; "
                f"not verified for vLLM {fmt_version(version)}",
                raw,
            )
        return option, None
    candidates = table.prefix_matches(name, version) if len(name) > 1 else []
    if name.startswith("-") and not name.startswith("--"):
        candidates = [c for c in candidates if not c.text.startswith("--")]
        short = table.lookup(name[:2], version)
        if short is not None and short[1] != "no" and len(name) > 2:
            candidates.append(short[0])
            if len(candidates) == 1:
                return short[0], name[2:]
    if len(candidates) == 1:
        option = candidates[0]
        found.add("note", "abbreviation", f"{name} abbreviates {option.text}", raw)
        return option, None
    if len(candidates) > 1:
        names = ", ".join(sorted(c.text for c in candidates)[:6])
        found.add("error", "ambiguous", f"ambiguous option: {name} could match {names}", raw)
        return None
    if exact is not None:  # a spelling of another release, and no prefix of this one's
        option = exact[0]
        found.add(
            "error",
            "not-in-version",
            f"{name} is not recognised by vLLM {fmt_version(version)} "
            f"({option.generated or 'spelling'} available {_availability_text(option)})",
            raw,
        )
        return None
    if " " in name:
        found.add(
            "error",
            "unrecognised",
            f"unrecognised argument '{name}' (one token holding a flag and its value?)",
            raw,
        )
        return None
    found.add(
        "error",
        "unknown-flag",
        f"unrecognised argument {name} for vLLM {fmt_version(version)}",
        raw,
    )
    return None


def _parse(
    toks: list[_Tok], version: Version, found: _Findings
) -> tuple[list[_Tok], list[_Occurrence]]:
    positionals: list[_Tok] = []
    occurrences: list[_Occurrence] = []
    i = 0
    rest_positional = False
    while i < len(toks):
        tok = toks[i]
        i += 1
        if tok.dotted:
            option_hit = _resolve_option(tok.text, version, found, tok.raw)
            if option_hit is not None:
                occurrences.append(
                    _Occurrence(option_hit[0], tok.data, tok.raw, len(occurrences), True, tok.text)
                )
            continue
        if rest_positional or not looks_like_option(tok.text):
            positionals.append(tok)
            continue
        if tok.text == "--":
            rest_positional = True
            continue
        name, explicit = tok.text, None
        if "=" in tok.text:
            head, tail = tok.text.split("=", 1)
            if flag_table().lookup(head, version) is not None or tok.text.startswith("--"):
                name, explicit = head, tail
        hit = _resolve_option(name, version, found, tok.raw)
        if hit is None:
            # argparse would stop; skip the values that follow so they aren't taken as positionals
            while i < len(toks) and not looks_like_option(toks[i].text) and not toks[i].dotted:
                i += 1
            continue
        option, attached = hit
        if attached is not None:
            explicit = attached
        spec = option.spec
        raw = list(tok.raw)
        value: Any = None
        if spec.kind in ("bool", "store_true"):
            if explicit is not None:
                found.add(
                    "error",
                    "bool-value",
                    f"{option.text} takes no value ('={explicit}' is an error)",
                    raw,
                )
                continue
        elif spec.kind == "list":
            values: list[str] = [] if explicit is None else [explicit]
            while (
                explicit is None
                and i < len(toks)
                and not looks_like_option(toks[i].text)
                and not toks[i].dotted
            ):
                values.append(toks[i].text)
                raw.extend(toks[i].raw)
                i += 1
            if not values:
                found.add(
                    "error", "missing-value", f"{option.text} expects at least one argument", raw
                )
                continue
            value = values
        elif explicit is not None:
            value = explicit
        elif i < len(toks) and not looks_like_option(toks[i].text) and not toks[i].dotted:
            value = toks[i].text
            raw.extend(toks[i].raw)
            i += 1
        elif spec.kind == "optional":
            value = True
        else:
            found.add("error", "missing-value", f"{option.text} expects one argument", raw)
            continue
        occurrences.append(_Occurrence(option, value, tuple(raw), len(occurrences)))
    return positionals, occurrences


# --- stage 6: canonical settings ----------------------------------------------------------------


def _explode_spec(config_key: str) -> FlagSpec | None:
    return next((s for s in FLAGS if s.key == config_key), None)


class _Builder:
    def __init__(self, version: Version, found: _Findings) -> None:
        self.version = version
        self.found = found
        self.settings: dict[str, tuple[int, Setting]] = {}
        self.spec_folded: set[str] = set()

    def put(self, order: int, setting: Setting) -> None:
        self.settings[setting.key] = (order, setting)

    def ordered(self) -> tuple[Setting, ...]:
        return tuple(s for _, s in sorted(self.settings.values(), key=lambda p: p[0]))

    def scalar(self, spec: FlagSpec, occ: _Occurrence, text: str) -> Any:
        if "$" in text and spec.vtype != "str":
            self.found.add(
                "note",
                "unresolved",
                f"{occ.option.text} {text}: unresolved shell expansion, compared as text",
                occ.raw,
            )
            return text
        value = V.scalar(spec.vtype, text)
        if isinstance(value, V.BadValue):
            self.found.add("error", "bad-value", f"{occ.option.text}: {value.reason}", occ.raw)
        return value

    def config_dict(self, occ: _Occurrence) -> dict[str, Any] | None:
        if isinstance(occ.value, _Dotted):
            return occ.value.value
        parsed = V.loads(str(occ.value))
        if isinstance(parsed, V.BadValue):
            self.found.add("error", "bad-json", f"{occ.option.text}: {parsed.reason}", occ.raw)
            return None
        if not isinstance(parsed, dict):
            self.found.add(
                "error", "bad-json", f"{occ.option.text}: expected a JSON object", occ.raw
            )
            return None
        return parsed

    def add(self, occ: _Occurrence, group: list[_Occurrence]) -> None:
        for setting in self.make(occ, group):
            self.put(occ.order, setting)

    def make(self, occ: _Occurrence, group: list[_Occurrence]) -> list[Setting]:
        """The canonical setting(s) one surviving occurrence contributes."""
        spec = occ.option.spec
        if occ.dotted and spec.kind not in ("config", "dict"):
            self.found.add(
                "error",
                "bad-value",
                f"{occ.spelled}.* gives {spec.long} a JSON object, which it does not take",
                occ.raw,
            )
            return []
        if spec.kind == "path":
            if not any(t.startswith("--config=") for t in occ.raw):
                self.found.add(
                    "hazard", "config-ignored", f"{occ.option.text} here is never read", occ.raw
                )
            return []
        if spec.kind in ("bool", "store_true"):
            return [Setting(spec.key, spec.long, not occ.option.negated, occ.raw, spec)]
        if spec.kind == "append":
            items = [o.value for o in group]
            raw = tuple(t for o in group for t in o.raw)
            return [Setting(spec.key, spec.long, items, raw, spec)]
        if spec.kind == "list":
            listed = [self.scalar(spec, occ, str(v)) for v in occ.value]
            if any(isinstance(v, V.BadValue) for v in listed):
                return []
            value: Any = V.capture_sizes(listed) if spec.key.endswith("capture_sizes") else listed
            return [Setting(spec.key, spec.long, value, occ.raw, spec)]
        if spec.kind == "optional":
            value = occ.value if occ.value is True else self.scalar(spec, occ, str(occ.value))
            return (
                []
                if isinstance(value, V.BadValue)
                else [Setting(spec.key, spec.long, value, occ.raw, spec)]
            )
        if spec.kind == "level":
            level = V.plain_int(str(occ.value))
            if level is None or not 0 <= level <= 3:
                self.found.add(
                    "error",
                    "bad-value",
                    f"invalid optimization level '{occ.value}' (from {' '.join(occ.raw)})",
                    occ.raw,
                )
                return []
            return [Setting(spec.key, spec.long, level, occ.raw, spec)]
        if spec.kind in ("config", "dict"):
            mapping = self.config_dict(occ)
            if mapping is None:
                return []
            if spec.explode:
                return self.explode(spec, occ, mapping)
            if spec.key == "speculative_config":
                return [Setting(spec.key, spec.long, V.speculative(mapping), occ.raw, spec)]
            return [Setting(spec.key, spec.long, mapping, occ.raw, spec)]
        value = self.scalar(spec, occ, str(occ.value))
        return (
            []
            if isinstance(value, V.BadValue)
            else [Setting(spec.key, spec.long, value, occ.raw, spec)]
        )

    def explode(self, spec: FlagSpec, occ: _Occurrence, mapping: dict[str, Any]) -> list[Setting]:
        prefix = spec.explode
        assert prefix is not None
        field_raw = occ.value.field_raw if isinstance(occ.value, _Dotted) else {}
        out: dict[str, Setting] = {}
        for raw_name, raw_value in mapping.items():
            name = "mode" if prefix == "compilation" and raw_name == "level" else str(raw_name)
            if "-" in name:
                self.found.add(
                    "error",
                    "unknown-config-key",
                    f"{occ.spelled or spec.long}: key '{name}' is rejected (keys after the first "
                    "dot are not normalised; the config class forbids unknown keys)",
                    occ.raw,
                )
                continue
            if not self.field_exists(prefix, name, occ):
                continue
            raw = tuple(field_raw.get(str(raw_name), occ.raw))
            value = V.config_field(prefix, str(raw_name), raw_value)
            out[name] = Setting(f"{prefix}.{name}", f"{spec.long}.{name}", value, raw, spec)
        return list(out.values())

    def field_exists(self, prefix: str, name: str, occ: _Occurrence) -> bool:
        span = CONFIG_FIELD_SPANS.get((prefix, name))
        if span is None:
            return True
        status = span_status(self.version, span[0], span[1])
        present = f"{fmt_version(span[0])}–{fmt_version(span[1]) if span[1] else 'newest'}"
        if status == "no":
            self.found.add(
                "error",
                "unknown-config-key",
                f"{prefix} config key '{name}' does not exist in vLLM {fmt_version(self.version)} "
                f"(present {present}); extra keys are forbidden",
                occ.raw,
            )
            return False
        if status == "unverified":
            self.found.add(
                "note",
                "unverified-flag",
                f"{prefix} config key '{name}' exists {present}; not verified for "
                f"{fmt_version(self.version)}",
                occ.raw,
            )
        return True

    def fold(self, occ: _Occurrence) -> None:
        """Alias flags of config fields (docs/spec/vllm-cli-semantics.md §1.13) land on the config
        field's key."""
        spec = occ.option.spec
        assert spec.fold is not None
        config_key, name = spec.fold
        made = self.make(occ, [occ])
        if not made:
            return
        mine = made[0]
        if config_key == "speculative_config":
            self.fold_speculative(occ, name, mine)
            return
        config = _explode_spec(config_key)
        assert config is not None and config.explode is not None
        target = f"{config.explode}.{name}"
        before = self.settings.get(target)
        if before is not None:
            if spec.long == "--moe-backend":
                if mine.value == "auto":
                    return  # auto leaves the kernel config's backend in place
                self.found.add(
                    "note",
                    "moe-backend-override",
                    f"--moe-backend {mine.value} overrides {before[1].flag} {before[1].value}",
                    mine.tokens,
                )
            else:
                self.found.add(
                    "error",
                    "mutually-exclusive",
                    f"{spec.long} and {before[1].flag} are mutually exclusive "
                    "(vLLM raises ValueError)",
                    mine.tokens + before[1].tokens,
                )
        self.put(occ.order, Setting(target, spec.long, mine.value, mine.tokens, spec))

    def fold_speculative(self, occ: _Occurrence, name: str, mine: Setting) -> None:
        current = self.settings.get("speculative_config")
        holder = _explode_spec("speculative_config")
        if current is None:
            merged = V.speculative({name: mine.value})
            self.put(
                occ.order,
                Setting("speculative_config", "--speculative-config", merged, occ.raw, holder),
            )
        else:
            order, setting = current
            if name in setting.value and name not in self.spec_folded:
                self.found.add(
                    "error",
                    "mutually-exclusive",
                    f"{occ.option.spec.long} and --speculative-config.{name} are "
                    "mutually exclusive (vLLM raises ValueError)",
                    occ.raw + setting.tokens,
                )
            merged = V.speculative({**setting.value, name: mine.value})
            tokens = setting.tokens + occ.raw
            self.put(
                order, Setting("speculative_config", "--speculative-config", merged, tokens, holder)
            )
        self.spec_folded.add(name)


def _last_wins(
    occurrences: list[_Occurrence], found: _Findings
) -> tuple[list[_Occurrence], dict[str, list[_Occurrence]]]:
    """argparse keeps the last value per destination; report what that silently drops."""
    by_dest: dict[str, list[_Occurrence]] = {}
    for occ in occurrences:
        by_dest.setdefault(occ.option.spec.dest, []).append(occ)
    winners: list[_Occurrence] = []
    for group in by_dest.values():
        spec = group[0].option.spec
        if spec.kind == "append":
            winners.append(group[0])
            continue
        plain = [o for o in group if not o.dotted]
        dotted = [o for o in group if o.dotted]
        if plain and dotted:
            found.add(
                "hazard",
                "json-and-dotted",
                f"{spec.long}: the JSON value is discarded; only the dotted keys "
                f"({', '.join(d.spelled for d in dotted)}.*) survive (no merge)",
                tuple(t for o in group for t in o.raw),
            )
        if len({d.spelled for d in dotted}) > 1:
            found.add(
                "hazard",
                "mixed-dotted-spellings",
                f"{' and '.join(d.spelled + '.*' for d in dotted)} build separate dicts; only the "
                f"later-emitted {dotted[-1].spelled}.* survives",
                tuple(t for o in dotted for t in o.raw),
            )
        if len(plain) > 1:
            found.add(
                "hazard",
                "duplicate-flag",
                f"{spec.long} is given {len(plain)} times; the last value wins",
                tuple(t for o in plain for t in o.raw),
            )
        winners.append(group[-1])
    winners.sort(key=lambda o: o.order)
    return winners, by_dest


def normalise(
    argv: Sequence[str],
    *,
    version: Version = NEWEST,
    config_files: Mapping[str, str] | None = None,
) -> ServeConfig:
    """Canonical serve configuration of ``argv`` under vLLM ``version``'s parser."""
    found = _Findings()
    entry, args = _entrypoint([str(a) for a in argv], found)
    args, moved_model = _move_model(args, entry, found)
    toks, yaml_model = _splice_config(args, entry, version, config_files, found)
    toks = _rewrite(toks, version, found)
    toks = _collect_dotted(toks, version, found)
    positionals, occurrences = _parse(toks, version, found)

    model_tok: _Tok | None = moved_model
    if positionals:
        if model_tok is None:
            model_tok = positionals[0]
            positionals = positionals[1:]
        for extra in positionals:
            found.add("error", "unrecognised", f"unrecognised argument '{extra.text}'", extra.raw)
    model = model_tok.text if model_tok is not None else yaml_model
    model_raw = model_tok.raw if model_tok is not None else ()

    winners, by_dest = _last_wins(occurrences, found)
    builder = _Builder(version, found)
    for occ in winners:
        if occ.option.spec.fold is not None:
            continue
        builder.add(occ, by_dest[occ.option.spec.dest])
    for occ in winners:  # alias flags after their configs, so both spellings are seen
        if occ.option.spec.fold is not None:
            builder.fold(occ)

    settings = builder.ordered()
    keys = {s.key for s in settings}
    if entry == "vllm serve" and model is None and "model.served_model_name" in keys:
        found.add("error", "no-model", "--served-model-name without a model raises ValueError")
    if any(s.key == "model.enforce_eager" and s.value is True for s in settings) and (
        keys & {"compilation.cudagraph_mode", "compilation.mode", "vllm.optimization_level"}
    ):
        found.add(
            "note", "enforce-eager", "--enforce-eager overrides the -cc/-O cudagraph settings"
        )
    return ServeConfig(
        version=version,
        usage_context="OPENAI_API_SERVER",
        entrypoint=entry,
        model=model,
        model_tokens=model_raw,
        settings=settings,
        findings=tuple(found.items),
    )

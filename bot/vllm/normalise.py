"""argv → canonical serve configuration, reproducing ``FlexibleArgumentParser``
(docs/spec/vllm-cli-semantics.md §1, §5.2).

The order is vLLM's: move ``--model`` to the positional slot; splice ``--config FILE``;
``_`` → ``-`` before the first dot and ``-O`` → ``--optimization-level``; collect dotted
arguments per spelled prefix and re-emit them last; then argparse: unique-prefix expansion,
short aliases, values, last-wins per destination. The result holds canonical values per
canonical key, the raw tokens each came from, and findings (errors vLLM would stop on,
hazards it would accept silently, notes). Nothing here raises on bad input.

The stages before argparse are in :mod:`bot.vllm.preparse`; the result types
(:class:`~bot.vllm.serve_config.ServeConfig`, ``Setting``, ``Finding``) in
:mod:`bot.vllm.serve_config`.
"""

from __future__ import annotations

import copy
import functools
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.argv import looks_like_option
from bot.vllm import values as V
from bot.vllm.catalogue import CONFIG_FIELD_SPANS, FLAGS, FlagSpec, Option, flag_table
from bot.vllm.preparse import (
    ENV_ASSIGNMENT,
    Dotted,
    Tok,
    collect_dotted,
    entrypoint,
    move_model,
    rewrite,
    splice_config,
)
from bot.vllm.serve_config import Findings, ServeConfig, Setting
from bot.vllm.versions import NEWEST, Version, fmt_version, span_status


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
    while words and ENV_ASSIGNMENT.match(words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    return env, tuple(words)


# --- stage 5: argparse --------------------------------------------------------------------------


@dataclass
class _Occurrence:
    option: Option
    value: Any  # str | list[str] | Dotted | None (flag without value)
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
    name: str, version: Version, found: Findings, raw: Sequence[str]
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
    toks: list[Tok], version: Version, found: Findings
) -> tuple[list[Tok], list[_Occurrence]]:
    positionals: list[Tok] = []
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
    def __init__(self, version: Version, found: Findings) -> None:
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
        if isinstance(occ.value, Dotted):
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
        field_raw = occ.value.field_raw if isinstance(occ.value, Dotted) else {}
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
    occurrences: list[_Occurrence], found: Findings
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


# argv, version, config files → the answer and which of its settings hold a mutable value,
# least recently used out (``functools.lru_cache``: bounded, safe in the App's worker
# threads). A replay classifies the same lines PR after PR (18,048 calls, 1,567 distinct in
# 07-01…07-03)
_IMMUTABLE = (str, int, float, bool, type(None))
Normalised = tuple[ServeConfig, tuple[int, ...]]
ConfigFiles = tuple[tuple[str, str], ...] | None


def _memo(entries: int) -> functools._lru_cache_wrapper[Normalised]:
    @functools.lru_cache(maxsize=entries)
    def normalised(args: tuple[str, ...], version: Version, files: ConfigFiles) -> Normalised:
        config = _normalise(args, version, None if files is None else dict(files))
        held = (i for i, s in enumerate(config.settings) if not isinstance(s.value, _IMMUTABLE))
        return config, tuple(held)

    return normalised


_normalised = _memo(4_096)


def reset_normalised(entries: int = 4_096) -> None:
    """Empty the memo of :func:`normalise`, bound it at ``entries`` (0: none, a cold run)."""
    global _normalised
    _normalised = _memo(entries)


def normalised_entries() -> int:
    """How many answers the memo of :func:`normalise` holds."""
    return _normalised.cache_info().currsize


def normalise(
    argv: Sequence[str],
    *,
    version: Version = NEWEST,
    config_files: Mapping[str, str] | None = None,
) -> ServeConfig:
    """Canonical serve configuration of ``argv`` under vLLM ``version``'s parser.

    Memoised: the answer depends on nothing but the arguments (the flag catalogue is static).
    A ``Setting.value`` may be a list or a dict (a JSON config) a caller could mutate: each
    call gets its own deep copy of those; the rest of a :class:`ServeConfig` is frozen."""
    files = None if config_files is None else tuple(config_files.items())
    config, mutable = _normalised(tuple(str(a) for a in argv), version, files)
    if not mutable:
        return config
    settings = list(config.settings)
    # one copy of them all: two settings sharing a value still share it
    values = copy.deepcopy([settings[i].value for i in mutable])
    for i, value in zip(mutable, values, strict=True):
        settings[i] = replace(settings[i], value=value)
    return replace(config, settings=tuple(settings))


def _normalise(
    argv: tuple[str, ...], version: Version, config_files: Mapping[str, str] | None
) -> ServeConfig:
    found = Findings()
    entry, args = entrypoint(list(argv), found)
    args, moved_model = move_model(args, entry, found)
    toks, yaml_model = splice_config(args, entry, version, config_files, found)
    toks = rewrite(toks, version, found)
    toks = collect_dotted(toks, version, found)
    positionals, occurrences = _parse(toks, version, found)

    model_tok: Tok | None = moved_model
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

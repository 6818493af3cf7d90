"""Flag-by-flag semantic diff of a benchmark launch and a recipe rendering
(docs/spec/vllm-cli-semantics.md §5).

Both sides are normalised under one vLLM version's parser; each canonical key gets a
:class:`FlagDiff` whose verdict says whether the served configuration differs, and a reason
a reviewer can check (the default, where it comes from, for which device and version).

The types compared and answered are in :mod:`bot.vllm.diff_report`; one key's comparison
(defaults of the side that omits it, JSON-valued flags) in :mod:`bot.vllm.flag_diff`; here
the model, env, image and speculative findings, and :func:`diff_launch` composing them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.placeholders import PLACEHOLDER_RE, as_variables
from bot.rules import KnobClass, Rules
from bot.vllm.defaults import load_vllm_defaults, scenarios_for
from bot.vllm.diff_report import DeviceContext, DiffReport, FlagDiff, LaunchSide, Verdict
from bot.vllm.flag_diff import DiffContext, flag_diff, side_name, with_notes
from bot.vllm.normalise import normalise, split_env_prefix
from bot.vllm.serve_config import Finding, ServeConfig
from bot.vllm.superseded import read_superseded
from bot.vllm.versions import (
    fmt_version,
    parse_image,
    parse_version,
    resolve_version,
    rules_version,
    span_status,
)

# --- device -----------------------------------------------------------------------------------


def device_context(
    hardware: str | None, rules: Rules, taxonomy_vram: Mapping[str, float] | None = None
) -> DeviceContext:
    """Per-GPU memory from the recipes taxonomy (vram_gb / gpu_count) when given, else from
    ``rules/hardware.yaml: gpus``; name and platform always from the latter."""
    if hardware is None:
        return DeviceContext(None, None, None, None)
    gpu = rules.hardware.gpus.get(hardware)
    memory: float | None = None
    if taxonomy_vram is not None and hardware in taxonomy_vram:
        memory = float(taxonomy_vram[hardware])
    elif gpu is not None:
        memory = gpu.memory_gib
    return DeviceContext(
        hardware,
        memory,
        gpu.device_name if gpu is not None else None,
        gpu.platform if gpu is not None else None,
    )


_LOCAL_PATH = re.compile(r"^(/|\./|\.\./|~|\$)")


def _model_diff(ctx: DiffContext) -> FlagDiff | None:
    b, r = ctx.bench.model, ctx.recipe.model
    if b is None and r is None:
        return None

    def make(verdict: Verdict, reason: str) -> FlagDiff:
        return FlagDiff(
            "flag",
            "model",
            "model",
            verdict,
            b,
            r,
            ctx.bench.model_tokens,
            ctx.recipe.model_tokens,
            reason,
            "engine",
        )

    if b is None or r is None:
        verdict = Verdict.DIFFERS if b is not None else Verdict.RECIPE_ONLY
        return make(verdict, f"only {side_name(b is not None)} names a model ({b or r})")
    if b == r:
        return make(Verdict.SAME, f"both sides serve {b}")
    if PLACEHOLDER_RE.search(b):
        return make(
            Verdict.UNKNOWN,
            f"the benchmark serves {as_variables(b)}, known only when its script runs; the "
            f"recipe {r}: cannot tell statically whether they are the same checkpoint",
        )
    local = [m for m in (b, r) if _LOCAL_PATH.match(m)]
    if len(local) == 1:
        path = local[0]
        hf = r if path == b else b
        if path.rstrip("/").rsplit("/", 1)[-1].lower() == hf.rsplit("/", 1)[-1].lower():
            return make(
                Verdict.SAME,
                f"local path {path} vs Hugging Face id {hf}: same model name; where the weights "
                "live is host-specific (a note, not a configuration difference)",
            )
        return make(
            Verdict.UNKNOWN,
            f"local path {path} vs Hugging Face id {hf}: cannot tell statically whether the path "
            "holds that checkpoint",
        )
    return make(Verdict.DIFFERS, f"the benchmark serves {as_variables(b)}, the recipe {r}")


def _env_diffs(bench: LaunchSide, recipe: LaunchSide, ctx: DiffContext) -> list[FlagDiff]:
    names = dict.fromkeys([*bench.env, *recipe.env])
    return [_env_diff(name, bench.env.get(name), recipe.env.get(name), ctx) for name in names]


def _env_diff(name: str, b: str | None, r: str | None, ctx: DiffContext) -> FlagDiff:
    """Environment variables compared like flags, classified by ``rules/env.yaml``."""

    def make(verdict: Verdict, reason: str, category: str) -> FlagDiff:
        return FlagDiff(
            "env",
            name,
            name,
            verdict,
            b,
            r,
            (f"{name}={b}",) if b is not None else (),
            (f"{name}={r}",) if r is not None else (),
            reason,
            category,
        )

    note = ctx.defaults.env_note(name)
    note_text = ""
    if note is not None:
        note_text = note.note or (f"maps to {note.maps_to}" if note.maps_to else "")
        removed = parse_version(note.removed_after) if note.removed_after else None
        if removed is not None and b != r and span_status(ctx.version, (0, 0, 0), removed) == "no":
            return make(
                Verdict.EQUIVALENT,
                f"{name} has no effect under {ctx.rules_label}: removed after "
                f"{fmt_version(removed)} (use {note.maps_to}) [{note.source}]",
                "env",
            )
    classified = ctx.rules.env.classify(name)
    if classified is None and ctx.rules.knob_class("env", name) is KnobClass.HARNESS:
        why = ctx.rules.knobs.reason("env", name)
        return make(
            Verdict.BENCHMARK_ONLY,
            f"{name} is a benchmark harness setting (rules/knobs.yaml): {why}",
            "benchmark",
        )
    if classified is None:
        if b == r:
            return make(Verdict.SAME, with_notes(f"both sides set {name}={b}", note_text), "env")
        return make(
            Verdict.UNKNOWN,
            with_notes(
                f"{name} is not classified by rules/env.yaml: cannot tell whether it changes "
                "the served configuration",
                note_text,
            ),
            "env",
        )
    kind, rule = classified
    if kind == "benchmark_only":
        ships = "; the recipe sets it too, which it must not" if r is not None else ""
        return make(
            Verdict.BENCHMARK_ONLY, f"{name} is benchmark-only: {rule.reason}{ships}", "benchmark"
        )
    if kind == "front_end":
        verdict = Verdict.SAME if b == r else Verdict.FRONT_END_ONLY
        return make(verdict, f"{name} is front-end only: {rule.reason}", "front-end")
    if b == r:
        return make(Verdict.SAME, with_notes(f"both sides set {name}={b}", note_text), "env")
    if b is not None and PLACEHOLDER_RE.search(b):
        # a value a script decides when it runs (a firmware check, a command's output)
        recipe_side = f"the recipe sets {r}" if r is not None else "the recipe leaves it unset"
        return make(
            Verdict.UNKNOWN,
            with_notes(
                f"the benchmark's {name} is known only when its script runs; {recipe_side}: "
                f"cannot tell statically whether they differ ({rule.reason})",
                note_text,
            ),
            "env",
        )
    if b is not None and r is not None:
        return make(
            Verdict.DIFFERS,
            with_notes(f"{name}: benchmark {b} vs recipe {r} ({rule.reason})", note_text),
            "env",
        )
    one = b if r is None else r if b is None else None
    if one is not None and note is not None and note.is_default(one):
        # setting a variable to what vLLM (or the library it calls) reads when unset changes nothing
        who = "the benchmark" if b is not None else "the recipe"
        return make(
            Verdict.EQUIVALENT,
            f"only {who} sets {name}={one}, which is what is read when it is unset [{note.source}]",
            "env",
        )
    verdict = Verdict.DIFFERS if b is not None else Verdict.RECIPE_ONLY
    who = "the benchmark" if b is not None else "the recipe"
    value = b if b is not None else r
    return make(
        verdict, with_notes(f"only {who} sets {name}={value} ({rule.reason})", note_text), "env"
    )


def _image_diff(bench: LaunchSide, recipe: LaunchSide) -> FlagDiff | None:
    b = parse_image(bench.image) if bench.image and bench.image.strip() else None
    r = parse_image(recipe.image) if recipe.image and recipe.image.strip() else None
    if b is None and r is None:
        return None

    def make(verdict: Verdict, reason: str) -> FlagDiff:
        return FlagDiff(
            "image",
            "image",
            "image",
            verdict,
            bench.image,
            recipe.image,
            (bench.image,) if bench.image else (),
            (recipe.image,) if recipe.image else (),
            reason,
            "image",
        )

    if b is None or r is None:
        present = b or r
        assert present is not None
        verdict = Verdict.DIFFERS if b is not None else Verdict.RECIPE_ONLY
        return make(
            verdict, f"only {side_name(b is not None)} names an image ({present.describe()})"
        )
    if (b.repo, b.tag, b.digest) == (r.repo, r.tag, r.digest):
        return make(Verdict.SAME, f"both sides use {b.text} ({b.describe()})")
    if b.repo == r.repo:
        return make(
            Verdict.DIFFERS,
            f"pin change from {r.tag or 'latest'} to {b.tag or 'latest'}: the benchmark runs "
            f"{b.describe()}, the recipe pins {r.describe()}",
        )
    return make(
        Verdict.DIFFERS,
        f"different image repositories: the benchmark runs {b.text} ({b.describe()}), the recipe "
        f"{r.text} ({r.describe()})",
    )


def _spec_findings(config: ServeConfig, ctx: DiffContext) -> list[Finding]:
    """SpeculativeConfig checks the normaliser cannot make without the defaults file."""
    setting = config.get("speculative_config")
    if setting is None or not isinstance(setting.value, dict):
        return []
    spec = setting.value
    out: list[Finding] = []
    method = spec.get("rejection_sample_method")
    since_text = ctx.defaults.speculative.rejection_sample_methods.get(str(method))
    if method is not None and since_text is not None:
        since = parse_version(since_text)
        if since is not None and span_status(ctx.version, since, None) == "no":
            out.append(
                Finding(
                    "error",
                    "speculative-config",
                    f"rejection_sample_method '{method}' does not exist before {since_text} "
                    f"(comparing under {ctx.rules_label})",
                    setting.tokens,
                )
            )
    if method == "synthetic":
        given = [
            k for k in ("synthetic_acceptance_rates", "synthetic_acceptance_length") if k in spec
        ]
        if len(given) != 1:
            out.append(
                Finding(
                    "error",
                    "speculative-config",
                    "synthetic rejection needs exactly one of synthetic_acceptance_rates or "
                    "synthetic_acceptance_length",
                    setting.tokens,
                )
            )
        length, k = spec.get("synthetic_acceptance_length"), spec.get("num_speculative_tokens")
        if isinstance(length, int | float) and isinstance(k, int) and not 1 <= length <= k + 1:
            out.append(
                Finding(
                    "error",
                    "speculative-config",
                    f"synthetic_acceptance_length {length} is outside [1, {k + 1}]",
                    setting.tokens,
                )
            )
    return out


def _env_prefix_into_env(side: LaunchSide) -> LaunchSide:
    """``VAR=1 vllm serve ...`` renderings: the leading assignments join the env."""
    prefix, argv = split_env_prefix(side.argv)
    if not prefix:
        return side
    return LaunchSide(argv, {**side.env, **prefix}, side.image, side.config_files)


def diff_launch(
    bench: LaunchSide,
    recipe: LaunchSide,
    *,
    hardware: str | None,
    rules: Rules,
    taxonomy_vram: Mapping[str, float] | None = None,
    version: str | None = None,
    recipe_min_version: str | None = None,
) -> DiffReport:
    """Compare a benchmark launch with a recipe rendering under one vLLM version's rules."""
    bench, recipe = _env_prefix_into_env(bench), _env_prefix_into_env(recipe)
    resolution = resolve_version(
        given=version,
        bench_image=bench.image,
        recipe_image=recipe.image,
        recipe_min_version=recipe_min_version,
    )
    defaults = load_vllm_defaults(rules.directory)
    device = device_context(hardware, rules, taxonomy_vram)
    notes: list[str] = []
    if hardware is not None and device.memory_gib is None:
        notes.append(f"hardware '{hardware}' has no per-GPU memory: compared on every tier")
    scenarios = scenarios_for(
        defaults,
        resolution.version,
        hardware=hardware,
        memory_gib=device.memory_gib,
        device_name=device.device_name,
        platform=device.platform,
    )
    b_conf = normalise(bench.argv, version=resolution.version, config_files=bench.config_files)
    r_conf = normalise(recipe.argv, version=resolution.version, config_files=recipe.config_files)
    b_conf, r_conf, renamed = read_superseded(b_conf, r_conf, defaults.superseded)
    ctx = DiffContext(rules, defaults, resolution, scenarios, b_conf, r_conf, renamed)

    diffs: list[FlagDiff] = []
    model = _model_diff(ctx)
    if model is not None:
        diffs.append(model)
    keys = list(
        dict.fromkeys([*(s.key for s in b_conf.settings), *(s.key for s in r_conf.settings)])
    )
    for key in keys:
        diffs.append(flag_diff(key, b_conf.get(key), r_conf.get(key), ctx))
    diffs.extend(_env_diffs(bench, recipe, ctx))
    image = _image_diff(bench, recipe)
    if image is not None:
        diffs.append(image)
    if rules_version(resolution.version) != resolution.version:
        notes.append(f"rules of vLLM {fmt_version(resolution.rules)} used")
    return DiffReport(
        diffs=tuple(diffs),
        version=resolution,
        device=device,
        tier=scenarios[0].label if len(scenarios) == 1 else None,
        usage_context=b_conf.usage_context,
        bench_findings=b_conf.findings + tuple(_spec_findings(b_conf, ctx)),
        recipe_findings=r_conf.findings + tuple(_spec_findings(r_conf, ctx)),
        notes=tuple(notes),
    )

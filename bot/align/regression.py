"""Regression matrix: every rendering of the edited recipe, before and after (docs/alignment.md §6).

The renderings are the JSON API's (``build_api`` over the one recipe: per hardware and per
hardware × strategy), plus the same profiles with each target's feature set (what the
generated command shows). A rendering is *expected* to move when its provenance before the
edit draws from an edited node, or — for a node that no rendering draws from yet (a new
``strategy_overrides.<s>.hardware_overrides.<hw>`` block) — when the node's path targets its
hardware and strategy. Anything else that moves blocks the PR. Each rendering gets what
changed (argv units, env, image) and facts about the changed subjects it did not take.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.align.nodes import hw_label, rendering_draws
from bot.align.plan import PlannedEdit
from bot.align.profile import Profile
from bot.errors import RecipeSyncError
from bot.recipes import Coordinates, RecipesRepo, Rendering, api_coordinates, build_api, render
from bot.recipes.edit import AppendItems, EnsurePath, InsertKey, RemoveItems, SetScalar
from bot.recipes.edit import format_path as fmt
from bot.recipes.rendering import CommandRendering
from bot.recipes.repo import HardwareProfile
from bot.vllm import canonical_flag

IMAGE = "image"
OTHER = "other"  # a change no edit subject names: never expected


@dataclass(frozen=True)
class RenderingId(Coordinates):
    """One rendering of the matrix: an API file's profile, optionally with a feature set."""

    api_file: str | None = None  # the build_api path, for API renderings

    def features_label(self) -> str:
        if self.features is None:
            return "default features"
        modes = dict(self.modes)
        names = [f"{f} ({modes[f]})" if f in modes else f for f in self.features]
        return " + ".join(names) or "no features"


@dataclass(frozen=True)
class Row:
    id: RenderingId
    moved: bool
    expected: bool
    changes: tuple[str, ...]  # what moved, one item each
    subjects: tuple[str, ...]  # the flags, env vars and ``image`` that moved
    facts: tuple[str, ...]  # the changed subjects this rendering did not take, and its values
    # changed subjects it did not take and still holds as the benchmarked profile did before
    kept: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()  # changed subjects it did not take and does not set at all


@dataclass(frozen=True)
class Group:
    label: str
    moved: bool
    expected: bool
    result: str
    members: tuple[RenderingId, ...]


@dataclass(frozen=True)
class BuilderReport:
    """The recipes repository's own builder on the edited tree (or why it was not run)."""

    ran: bool
    ok: bool
    summary: str  # the builder's summary line, or ours when it did not run
    detail: str  # why it was not run / how it failed


@dataclass(frozen=True)
class RegressionMatrix:
    rows: tuple[Row, ...]
    groups: tuple[Group, ...]
    unexpected: tuple[str, ...]  # renderings that moved without an edited node: blocks
    ineffective: tuple[str, ...]  # expected to move but unchanged (reported)
    builder: BuilderReport
    lost: tuple[str, ...] = ()  # a benchmarked profile an edit did not move: blocks
    # each changed subject's value in the first benchmarked profile before the edit (what
    # the renderings in ``Row.kept`` still hold)
    baseline: tuple[tuple[str, str], ...] = ()

    @property
    def blocked(self) -> str | None:
        if self.lost:
            return "edits without effect on the benchmarked profile: " + "; ".join(self.lost)
        if self.unexpected:
            return "unexpected movement: " + "; ".join(self.unexpected)
        if self.builder.ran and not self.builder.ok:
            return f"the recipes builder failed: {self.builder.detail}"
        return None

    @property
    def moved(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.moved)


# ------------------------------------------------------------------------------ profiles


def api_ids(files: Mapping[str, Mapping[str, Any]]) -> list[RenderingId]:
    return [
        RenderingId(c.model, c.hardware, c.strategy, c.variant, api_file=path)
        for path, c in api_coordinates(files)
    ]


def _render(repo: RecipesRepo, rid: RenderingId) -> Rendering | None:
    try:
        return render(repo, rid.request())
    except RecipeSyncError:
        return None


def _key_matches(key: str, hw: HardwareProfile) -> bool:
    return key in (hw.id, hw.generation, hw.brand_lower, "default") or (
        key == "nvidia" and hw.is_nvidia
    )


def targets(
    path: Sequence[str | int],
    rid: RenderingId,
    hw: HardwareProfile,
    serving: str | None = None,
) -> bool:
    """Does a node at ``path`` apply to this rendering, by the layering rules of its path?
    ``serving`` is the strategy serving a KV-store deployment (its overrides apply too)."""
    parts = [str(p) for p in path]
    if not parts or parts[0] == "meta":
        return False
    if parts[0] == "model":
        if len(parts) > 2 and parts[1] == "docker_image":
            return parts[2] in (hw.docker_brand,) or parts[2].startswith("cu")
        return True
    if parts[0] == "hardware_overrides":
        return len(parts) < 2 or _key_matches(parts[1], hw)
    if parts[0] == "strategy_overrides":
        if len(parts) < 2 or parts[1] not in (rid.strategy, serving):
            return False
        if len(parts) > 3 and parts[2] == "hardware_overrides":
            return _key_matches(parts[3], hw)
        return True
    if parts[0] == "variants":
        if len(parts) < 2 or parts[1] != rid.variant:
            return False
        return not (len(parts) > 3 and parts[2] == "hardware_overrides") or _key_matches(
            parts[3], hw
        )
    if parts[0] == "features":
        if "hardware_overrides" in parts[:-1]:
            key = parts[parts.index("hardware_overrides") + 1]
            if not _key_matches(key, hw):
                return False
        return rid.features is None or (len(parts) > 1 and parts[1] in rid.features)
    return True


def _edit_nodes(edit: PlannedEdit) -> tuple[str, tuple[str | int, ...], bool]:
    """(node string, path, is_container) of an edit: containers gain children."""
    item = edit.edit
    if isinstance(item, SetScalar):
        return fmt(item.path), item.path, False
    if isinstance(item, InsertKey):
        return fmt(item.map_path), item.map_path, True
    if isinstance(item, AppendItems | RemoveItems):
        return fmt(item.list_path), item.list_path, True
    if isinstance(item, EnsurePath):
        return fmt(item.path), item.path, True
    return edit.node, (), False


def _drawn(node: str, container: bool, drawn: frozenset[str]) -> bool:
    if not container:
        return node in drawn
    return any(d == node or d.startswith(node + ".") or d.startswith(node + "[") for d in drawn)


def _override_keys(edit: PlannedEdit) -> tuple[str, ...]:
    """A new feature written whole with only hardware overrides applies to those keys."""
    item = edit.edit
    if not isinstance(item, EnsurePath) or item.path[:1] != ("features",):
        return ()
    value = item.value
    if not isinstance(value, Mapping) or "args" in value or "modes" in value:
        return ()
    overrides = value.get("hardware_overrides")
    return tuple(str(k) for k in overrides) if isinstance(overrides, Mapping) else ()


def expected_moves(
    edits: Sequence[PlannedEdit],
    rows: Sequence[tuple[RenderingId, Rendering | None]],
    hardware: Mapping[str, HardwareProfile],
    opt_in: frozenset[str] = frozenset(),
) -> dict[RenderingId, frozenset[str]]:
    """Per rendering, the subjects (flags, env vars, ``image``) the edits should move there:
    provenance first; a node no rendering draws from yet applies by its path (``targets``)."""
    drawn = {rid: rendering_draws(rendering) for rid, rendering in rows}
    serving = {
        rid: rendering.request.serving_strategy if rendering is not None else None
        for rid, rendering in rows
    }
    expected: dict[RenderingId, set[str]] = {rid: set() for rid, _ in rows}
    for edit in edits:
        if edit.kind == "verified" or edit.node == "opt_in_features":
            continue  # metadata: no rendering content (an opt-in feature is off by default)
        node, path, container = _edit_nodes(edit)
        users = [rid for rid, _ in rows if _drawn(node, container, drawn[rid])]
        if not users:
            users = [
                rid
                for rid, _ in rows
                if targets(path, rid, hardware[rid.hardware], serving[rid])
                # an opt-in feature is not in the API's default feature set
                and not (rid.features is None and len(path) > 1 and path[:1] == ("features",)
                         and path[1] in opt_in)
            ]  # fmt: skip
            only = _override_keys(edit)
            if only:
                users = [
                    u for u in users if any(_key_matches(k, hardware[u.hardware]) for k in only)
                ]
        for rid in users:
            expected[rid].add(canonical_flag(edit.subject))
    return {rid: frozenset(subjects) for rid, subjects in expected.items()}


# ------------------------------------------------------------------------------ changes


def _units(command: CommandRendering) -> dict[str, str | None]:
    return {unit.flag: unit.value for unit in command.args if unit.flag is not None}


def _show(flag: str, value: str | None) -> str:
    return flag if value is None else f"{flag} {value}"


Change = tuple[str, str]  # (subject: a flag, env var, "image" or "other"; text)


def _command_changes(old: CommandRendering, new: CommandRendering) -> list[Change]:
    items: list[Change] = []
    units_old, units_new = _units(old), _units(new)
    # the subject is the canonical flag (``--no-x`` is ``--x``), the text keeps the spelling
    for flag, value in units_new.items():
        if flag not in units_old:
            items.append((canonical_flag(flag), "+" + _show(flag, value)))
        elif units_old[flag] != value:
            items.append((canonical_flag(flag), f"{flag} {units_old[flag]} → {value}"))
    items += [
        (canonical_flag(f), "−" + _show(f, v)) for f, v in units_old.items() if f not in units_new
    ]
    for name, value in new.env.items():
        if name not in old.env:
            items.append((name, f"+{name}={value}"))
        elif old.env[name] != value:
            items.append((name, f"{name} {old.env[name]} → {value}"))
    items += [(name, f"−{name}={v}") for name, v in old.env.items() if name not in new.env]
    return items


def describe_change(before: Rendering | None, after: Rendering | None) -> tuple[Change, ...]:
    """What differs between two renderings of one profile: image, argv units, env."""
    if before is None or after is None:
        text = "renders only after the edit" if before is None else "no longer renders"
        return ((OTHER, text),)
    out: list[Change] = []
    if before.image != after.image:
        old_repo, _, old_tag = (before.image or "").rpartition(":")
        new_repo, _, new_tag = (after.image or "").rpartition(":")
        if old_repo and old_repo == new_repo and "/" not in old_tag + new_tag:
            out.append((IMAGE, f"image {before.image} → {new_tag}"))
        else:
            out.append((IMAGE, f"image {before.image} → {after.image}"))
    per_command = [
        tuple(_command_changes(old, new))
        for old, new in zip(before.commands, after.commands, strict=False)
    ]
    if len(set(per_command)) > 1:
        for command, changed in zip(after.commands, per_command, strict=False):
            out += [(subject, f"{command.role}: {text}") for subject, text in changed]
    elif per_command:
        out += per_command[0]
    if len(before.commands) != len(after.commands):
        out.append((OTHER, f"{len(before.commands)} → {len(after.commands)} commands"))
    if not out and before.json != after.json:
        keys = sorted(
            k for k in {*before.json, *after.json} if before.json.get(k) != after.json.get(k)
        )
        out.append((OTHER, "other fields: " + ", ".join(keys)))
    return tuple(out)


def _covered(subject: str, expected: frozenset[str]) -> bool:
    """A moved subject an edit explains (``--x.key`` is part of ``--x``'s JSON value;
    ``--no-x`` is ``--x``)."""
    if subject.startswith("--") and canonical_flag(subject) in {
        canonical_flag(e) for e in expected
    }:
        return True
    return subject in expected or any(subject.startswith(e + ".") for e in expected)


def _command_value(command: CommandRendering, subject: str) -> str | None:
    """One command's value of a flag or env var subject (``--max-num-seqs 32``), or None."""
    if subject.startswith("-"):
        found = [
            _show(flag, value)
            for flag, value in _units(command).items()
            if canonical_flag(flag) == subject
        ]
        return ", ".join(found) or None
    value = command.env.get(subject)
    return None if value is None else f"{subject}={value}"


def held(rendering: Rendering, subject: str) -> frozenset[str | None]:
    """The distinct values a rendering's commands hold for a subject (None: absent)."""
    if subject == IMAGE:
        return frozenset({rendering.image})
    return frozenset(_command_value(c, subject) for c in rendering.commands)


def _value_of(rendering: Rendering, subject: str) -> str:
    """The rendering's value of a subject, for facts: ``--max-num-seqs 32``, ``no X``; per
    command role when its commands differ."""
    if subject == IMAGE:
        return f"image still {rendering.image}"
    values = [_command_value(c, subject) for c in rendering.commands]
    if len(set(values)) <= 1:
        return values[0] if values and values[0] is not None else f"no {subject}"
    return ", ".join(
        f"{c.role}: {v or 'no ' + subject}" for c, v in zip(rendering.commands, values, strict=True)
    )


def _json_delta(ours: str | None, theirs: str | None) -> str | None:
    """``key: value`` items where a JSON-valued flag differs from the target's value."""
    try:
        a = json.loads(ours) if ours else None
        b = json.loads(theirs) if theirs else None
    except ValueError:
        return None
    if not isinstance(a, dict) or not isinstance(b, dict):
        return None
    keys = [k for k in a if a.get(k) != b.get(k)]
    return ", ".join(f"{k}: {json.dumps(a.get(k))}" for k in keys) or None


def override_facts(
    rendering: Rendering,
    reference: Rendering,
    edited: frozenset[str],
    covered: Sequence[str] = (),
) -> tuple[str, ...]:
    """Where the reference (the target after the edit) takes a flag from a hardware-specific
    override that was not edited, and this rendering has another value: the override did
    not leak (e.g. ``--speculative-config`` keeps ``enable_adaptive_verification: true``)."""
    facts: list[str] = []
    ref = reference.commands[0]
    ours = {u.flag: u.value for c in rendering.commands for u in c.args if u.flag is not None}
    for unit in ref.args:
        if (
            unit.flag is None
            or canonical_flag(unit.flag) in covered
            or ".hardware_overrides." not in unit.path
        ):
            continue
        if any(unit.path == node or unit.path.startswith(node + "[") for node in edited):
            continue
        if unit.flag not in ours or ours[unit.flag] == unit.value:
            continue
        delta = _json_delta(ours[unit.flag], unit.value)
        facts.append(f"{unit.flag} keeps " + (delta or str(ours[unit.flag])))
    return tuple(facts)


def sibling_fact(rendering: Rendering, reference: Rendering, reference_label: str) -> str | None:
    """For the target's strategy on other hardware: what differs from the target command."""
    if len(rendering.commands) != 1 or len(reference.commands) != 1:
        return None
    diff = [text for _, text in describe_change(reference, rendering)]
    if not diff:
        return f"identical to {reference_label}"
    shown = [item.replace("−", "no ", 1) if item.startswith("−") else item for item in diff]
    if any("→" in item for item in shown):
        return None
    return f"identical to {reference_label} except " + "; ".join(shown)


# ------------------------------------------------------------------------------ the matrix


def _label(
    recipes: RecipesRepo,
    members: Sequence[RenderingId],
    strategies: dict[tuple[str, str], list[str]],
    models: int = 1,
) -> str:
    """``MI300X, MI325X: every strategy (6); MI355X: single_node_tep, pd_cluster``; with the
    model (API base) first when the recipe renders more than one (a promoted variant)."""
    by_hw: dict[tuple[str, str], list[str]] = {}
    for rid in members:
        by_hw.setdefault((rid.model, rid.hardware), []).append(rid.strategy)
    buckets: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (model, hw), listed in by_hw.items():
        names = tuple(dict.fromkeys(listed))
        known = set(strategies.get((model, hw), []))
        every = sorted(names) == sorted(known) and len(names) > 1
        key = ("*", str(len(names))) if every else names
        buckets.setdefault((model, key), []).append(hw_label(recipes, hw))
    per_model: dict[str, list[str]] = {}
    for (model, key), hws in buckets.items():
        what = f"every strategy ({key[1]})" if key[:1] == ("*",) else ", ".join(key)
        per_model.setdefault(model, []).append(f"{', '.join(hws)}: {what}")
    if models <= 1:
        return "; ".join(part for parts in per_model.values() for part in parts)
    return " — ".join(f"{model} on {'; '.join(parts)}" for model, parts in per_model.items())


def regression_matrix(
    before: RecipesRepo,
    after: RecipesRepo,
    recipe_path: str,
    edits: Sequence[PlannedEdit],
    targets_: Sequence[Profile],
    builder: BuilderReport,
) -> RegressionMatrix:
    files_before = build_api(before, only_recipes={recipe_path})
    files_after = build_api(after, only_recipes={recipe_path})
    ids = api_ids({**files_after, **files_before})
    moved_files = {
        p for p in {*files_before, *files_after} if files_before.get(p) != files_after.get(p)
    }
    feature_sets = list(
        dict.fromkeys((t.features, tuple(sorted(t.modes.items()))) for t in targets_)
    )
    all_ids = list(ids)
    for features, modes in feature_sets:
        for rid in ids:
            all_ids.append(
                RenderingId(rid.model, rid.hardware, rid.strategy, rid.variant, features, modes)
            )
    renderings: list[tuple[RenderingId, Rendering | None, Rendering | None]] = []
    seen: dict[tuple[Any, ...], None] = {}
    declared = set(before.by_path[recipe_path].data.get("features") or {})
    reduced: set[RenderingId] = set()  # rendered before without a feature the edit adds
    for rid in all_ids:
        rb, ra = _render(before, rid), _render(after, rid)
        if rb is None and rid.features and not set(rid.features) <= declared:
            kept = tuple(f for f in rid.features if f in declared)
            rb = _render(before, replace(rid, features=kept))
            reduced.add(rid)
        if rid.api_file is None and rb is None and ra is None:
            continue  # this feature set does not render on this profile
        resolved = (rb or ra).request if (rb or ra) is not None else None  # type: ignore[union-attr]
        key = (rid.api_file is None, repr(resolved), rid.model)
        if rid.api_file is None and key in seen:
            continue
        seen[key] = None
        renderings.append((rid, rb, ra))

    opt_in = frozenset(str(f) for f in after.by_path[recipe_path].data.get("opt_in_features") or ())
    rows_before = [(rid, rb) for rid, rb, _ in renderings]
    expected = expected_moves(edits, rows_before, before.hardware, opt_in)
    edited_nodes = frozenset(_edit_nodes(e)[0] for e in edits)
    rows: list[Row] = []
    for rid, rb, ra in renderings:
        if rid.api_file is not None:
            moved = rid.api_file in moved_files
        else:
            moved = (rb.json if rb else None) != (ra.json if ra else None)
        changed = describe_change(rb, ra) if moved else ()
        if rid in reduced:  # a new opt-in feature: only its command content counts
            changed = tuple(c for c in changed if not c[1].startswith("other fields"))
            moved = bool(changed)
        subjects_here = tuple(dict.fromkeys(subject for subject, _ in changed))
        explained = bool(expected[rid]) and all(
            _covered(subject, expected[rid]) for subject in subjects_here
        )
        rows.append(
            Row(
                rid,
                moved,
                explained if moved else bool(expected[rid]),
                tuple(text for _, text in changed),
                subjects_here,
                (),
            )
        )

    subjects = list(dict.fromkeys(s for row in rows for s in row.subjects if s != OTHER))
    references = _references(targets_, after)
    strategies: dict[tuple[str, str], list[str]] = {}
    for rid, _, _ in renderings:
        if rid.api_file is not None:
            strategies.setdefault((rid.model, rid.hardware), []).append(rid.strategy)
    base = _before(before, targets_[0]) if targets_ else None
    baseline = {s: held(base, s) for s in subjects} if base is not None else {}
    final: list[Row] = []
    for row, (_, _, ra) in zip(rows, renderings, strict=True):
        facts: list[str] = []
        still: list[str] = []
        absent: list[str] = []
        if ra is not None:
            absent = [s for s in subjects if s not in row.subjects and held(ra, s) == {None}]
            facts += [_value_of(ra, s) for s in subjects if s not in row.subjects]
            still = [
                s
                for s in subjects
                if s not in row.subjects and baseline.get(s) not in (None, frozenset({None}))
                and held(ra, s) == baseline[s]
            ]  # fmt: skip
            reference = references.get(row.id.features)
            if reference is not None:
                ref_rendering, ref_profile = reference
                if row.id.hardware != ref_profile.hardware:
                    facts += override_facts(ra, ref_rendering, edited_nodes, subjects)
                    if row.id.strategy == ref_profile.strategy:
                        label = f"{hw_label(after, ref_profile.hardware)} {ref_profile.strategy}"
                        fact = sibling_fact(ra, ref_rendering, label)
                        if fact is not None:
                            facts.append(fact)
        final.append(replace(row, facts=tuple(facts), kept=tuple(still), absent=tuple(absent)))

    unexpected = tuple(_row_label(after, r) for r in final if r.moved and not r.expected)
    ineffective = tuple(_row_label(after, r) for r in final if r.expected and not r.moved)
    return RegressionMatrix(
        rows=tuple(final),
        groups=tuple(_groups(after, final, strategies)),
        unexpected=unexpected,
        ineffective=ineffective,
        builder=builder,
        lost=lost_subjects(before, after, edits, targets_),
        baseline=tuple(
            (s, str(base.image) if s == IMAGE else _value_of(base, s))
            for s in subjects
            if s in baseline and base is not None
        ),
    )


def _before(before: RecipesRepo, profile: Profile) -> Rendering | None:
    """The profile rendered before the edit (without a feature the edit adds)."""
    rid = _profile_id(profile)
    old = _render(before, rid)
    if old is None and profile.features:
        declared = set(before.by_path[profile.recipe_path].data.get("features") or {})
        kept = tuple(f for f in profile.features if f in declared)
        old = _render(before, replace(rid, features=kept))
    return old


def _profile_id(profile: Profile) -> RenderingId:
    """The profile as a matrix rendering (modes sorted: equal feature sets group together)."""
    c = profile.coordinates
    return RenderingId(
        c.model, c.hardware, c.strategy, c.variant, c.features, tuple(sorted(c.modes))
    )


def lost_subjects(
    before: RecipesRepo,
    after: RecipesRepo,
    edits: Sequence[PlannedEdit],
    targets_: Sequence[Profile],
) -> tuple[str, ...]:
    """Per benchmarked profile, the subjects its edits meant to move there that did not move
    (an override a later layer shadows, a value merged away): the old value would be kept
    silently, so the matrix blocks instead."""
    out: list[str] = []
    labels = {p.label for p in targets_}
    for profile in targets_:
        # a profile the plan extended with a workload feature: its edits name the profile
        # without it, so match by recipe x hardware x strategy when no label is exact
        stem = profile.label.split(" (")[0]
        mine = [
            e
            for e in edits
            if e.kind != "verified"
            and e.node != "opt_in_features"
            and (
                profile.label in e.targets
                or (
                    not labels & set(e.targets) and any(t.split(" (")[0] == stem for t in e.targets)
                )
            )
        ]
        if not mine:
            continue
        old = _before(before, profile)  # a feature the edit adds: without it before
        moved = {
            subject for subject, _ in describe_change(old, _render(after, _profile_id(profile)))
        }
        for edit in dict.fromkeys(e.subject for e in mine):
            if not any(_covered(m, frozenset({edit})) for m in moved):
                out.append(f"{profile.label}: {edit} did not move")
    return tuple(dict.fromkeys(out))


def _references(
    targets_: Sequence[Profile], after: RecipesRepo
) -> dict[tuple[str, ...] | None, tuple[Rendering, Profile]]:
    found: dict[tuple[str, ...] | None, tuple[Rendering, Profile]] = {}
    for profile in targets_:
        rendering = _render(after, _profile_id(profile))
        if rendering is not None:
            found.setdefault(profile.features, (rendering, profile))
    return found


def _row_label(recipes: RecipesRepo, row: Row) -> str:
    extra = "" if row.id.features is None else f" with {row.id.features_label()}"
    return f"{hw_label(recipes, row.id.hardware)} {row.id.strategy}{extra}"


Variant = tuple[tuple[str, ...] | None, tuple[tuple[str, str], ...]]  # features, modes


def _variant_label(variant: Variant, variants: Sequence[Variant]) -> str:
    features, modes = variant
    if features is None:
        return "default features"
    if sum(1 for v in variants if v[0] is not None) == 1:
        return "the benchmarked features"
    return RenderingId("", "", "", "", features, modes).features_label()


def _groups(
    recipes: RecipesRepo, rows: Sequence[Row], strategies: dict[tuple[str, str], list[str]]
) -> list[Group]:
    """Renderings grouped by outcome. A profile's renderings with and without the
    benchmarked features form one outcome when they moved alike; the facts only one feature
    set has are stated for it (``with the benchmarked features, --speculative-config keeps
    …``); a group that does not cover every feature set says which it covers."""
    variants: list[Variant] = list(dict.fromkeys((r.id.features, r.id.modes) for r in rows))
    profiles: dict[tuple[str, str, str, str], list[Row]] = {}
    for row in rows:
        profiles.setdefault((row.id.model, row.id.hardware, row.id.strategy, row.id.variant), [])
        profiles[(row.id.model, row.id.hardware, row.id.strategy, row.id.variant)].append(row)
    buckets: dict[tuple[Any, ...], list[Row]] = {}
    for members in profiles.values():
        alike: dict[tuple[Any, ...], list[Row]] = {}
        for row in members:
            alike.setdefault((row.moved, row.expected, row.changes), []).append(row)
        for (moved, expected, changes), same in alike.items():
            common = tuple(f for f in same[0].facts if all(f in r.facts for r in same))
            extras = tuple(
                ((r.id.features, r.id.modes), extra)
                for r in same
                if (extra := tuple(f for f in r.facts if f not in common))
            )
            covered = tuple((r.id.features, r.id.modes) for r in same)
            key = (covered, moved, expected, changes, common, extras)
            buckets.setdefault(key, []).extend(same)
    groups: list[Group] = []
    for (covered, moved, expected, changes, common, extras), members in buckets.items():
        models = len({r.id.model for r in rows})
        label = _label(recipes, [r.id for r in members], strategies, models)
        if len(variants) > 1 and len(covered) < len(variants):
            label += " (" + ", ".join(_variant_label(v, variants) for v in covered) + " only)"
        if moved:
            verdict = "moved as planned" if expected else "MOVED UNEXPECTEDLY"
            result = f"{verdict}: " + "; ".join(changes)
        else:
            result = "unchanged" if not expected else "unchanged (expected to move)"
        facts = [*common]
        for variant, extra in extras:
            facts.append(f"with {_variant_label(variant, variants)}, " + "; ".join(extra))
        if facts:
            result += ". " + "; ".join(facts)
        groups.append(Group(label, moved, expected, result, tuple(r.id for r in members)))
    groups.sort(key=lambda g: (not g.moved, g.label))
    return groups

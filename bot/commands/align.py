"""``recipe-sync align``: the alignment PR a benchmark PR calls for, offline.

    recipe-sync align --bench-repo DIR [--bench-ref REF] --recipes DIR [--recipes-ref REF]
        [--bench-base REF] [--config-key KEY]... [--evidence DIR] [--bench-name OWNER/NAME]
        [--bench-pr N] [--recipes-name OWNER/NAME] [--drop FLAG]... [--include FLAG]...
        [--out DIR]

Reads the benchmark repository at REF (default: HEAD) and at its base (default: the
merge-base with the default branch), the recipes repository at --recipes-ref (default:
HEAD of a git repository; a plain directory as it is) and, with --evidence, saved workflow
runs (the `recipe-sync evidence --from-dir` layout). Writes OUT/recipe.patch,
OUT/pr-title.txt, OUT/pr-body.md (when there is a patch), OUT/comment.md and OUT/plan.json
(OUT defaults to ./recipe-sync-out), and prints a short summary. With patches for several
recipe files, each also gets OUT/prs/<recipe-slug>/. Repository names for the texts come
from --bench-name/--recipes-name, else the origin remote, else "local". No GitHub access;
the same inputs give byte-identical files.

Exit status: 0 when aligned (nothing to do), 1 when there is a PR to open or drift left,
2 for bad input, when no edit could be proposed or when the check fails (launch lines that
could not be extracted), 3 when a PR's texts fail their consistency check (a recipe-sync
bug: the body carries a note, stderr names each finding).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.align.builder import run_builder
from bot.align.regression import BuilderReport
from bot.align.result import AlignInputs, AlignRun
from bot.align.run import align
from bot.benchmarks.configs import load_master_configs
from bot.commands.grammar import (
    WORKTREE,
    add_command,
    add_repo,
    is_git,
    note,
    open_repo,
    read_ref,
    repo_name,
    require_recipes,
    unknown,
)
from bot.errors import InputError, Location
from bot.evidence.source import DirRunSource
from bot.present import AlignTexts, plan_json, present
from bot.present.consistency import Finding, check_texts
from bot.present.posted import recipe_slug
from bot.present.pr_text import pr_contents
from bot.present.sections.matrix import moved_summary
from bot.recipes import RecipesRepo
from bot.rules import default_rules, load_rules
from bot.sources import DirectorySource, FileSource, GitTreeSource, git_blob_sha_at, merge_base
from bot.vllm import canonical_flag
from bot.words import count

OUTPUTS = ("recipe.patch", "pr-title.txt", "pr-body.md", "comment.md", "plan.json")


def register(subparsers: Any) -> None:
    summary = "plan the recipe edit a benchmark PR calls for and write the alignment PR text"
    parser = add_command(subparsers, "align", __doc__, summary)
    add_repo(parser, "bench")
    parser.add_argument("--bench-base", help="the PR base (default: merge-base with main)")
    add_repo(parser, "recipes")
    parser.add_argument(
        "--config-key", action="append", default=[], help="only this master-config key"
    )
    parser.add_argument("--evidence", type=Path, help="saved workflow runs and job logs")
    parser.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="FLAG",
        help="leave this flag (--drop=--moe-backend, or --drop moe-backend), env var, 'image' "
        "or verification mark (meta.hardware.GPU) out of every patch, as a `/recipe-sync drop "
        "FLAG` comment on the alignment PR does; the PR body lists it",
    )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="FLAG",
        help="propose this flag, env var, 'image' or verification mark (meta.hardware.GPU) "
        "even when its adoption estimate is below the policy's propose_above (a candidate the "
        "PR body offers as a checklist item), as ticking it or a `/recipe-sync add FLAG` "
        "comment on the alignment PR does",
    )
    parser.add_argument("--bench-pr", type=int, help="benchmark PR number")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("recipe-sync-out"),
        help="output directory (default: recipe-sync-out)",
    )
    parser.add_argument("--rules", type=Path, default=None, help="rules directory")
    parser.set_defaults(func=run)


def _check_config_keys(bench: FileSource, keys: list[str]) -> None:
    """Each ``--config-key`` names a master-config key of the PR head (else: did you mean)."""
    if not keys:
        return
    known = load_master_configs(bench)
    for key in keys:
        if key not in known:
            raise unknown("master-config key", key, known, "--config-key")


def _named(source: GitTreeSource, name: str) -> GitTreeSource:
    """Label a source ``OWNER/NAME@sha`` (or ``local@sha``): no local path in any text."""
    source.label = f"{name}@{source.commit_sha[:12]}"
    return source


def _recipes_source(args: argparse.Namespace) -> tuple[FileSource, str]:
    source = open_repo(args.recipes, args.recipes_ref, "--recipes")
    require_recipes(source, args.recipes)
    return source, getattr(source, "commit_sha", "")


def _pull(evidence: DirRunSource | None) -> dict[str, Any]:
    pull = evidence.pull() if evidence is not None else None
    return pull if isinstance(pull, dict) else {}


def _field(data: dict[str, Any], *path: str) -> Any:
    for part in path:
        data = data.get(part) if isinstance(data, dict) else None  # type: ignore[assignment]
    return data


def inputs_from_args(args: argparse.Namespace) -> AlignInputs:
    if args.bench_ref and args.bench_ref.upper() == WORKTREE:
        raise InputError(
            Location("--bench-ref"), "align reads the benchmark PR as git commits: give a ref"
        )
    if not args.bench_ref:
        if not is_git(args.bench_repo):
            open_repo(args.bench_repo, None, "--bench-repo", quiet=True)  # the same messages
            raise InputError(Location("--bench-repo"), f"{args.bench_repo} is not a git repository")
        args.bench_ref = "HEAD"
        note(f"--bench-ref: reading HEAD of {args.bench_repo}")
    bench_name = args.bench_name or repo_name(args.bench_repo, None)
    bench = _named(read_ref(args.bench_repo, args.bench_ref, "--bench-ref"), bench_name)
    _check_config_keys(bench, args.config_key)
    if args.config_key and not args.bench_base:
        base_ref: str | None = None
        try:
            base_ref = merge_base(args.bench_repo, args.bench_ref)
        except InputError:
            base_ref = None
    else:
        base_ref = args.bench_base or merge_base(args.bench_repo, args.bench_ref)
    base = (
        _named(read_ref(args.bench_repo, base_ref, "--bench-base"), bench_name)
        if base_ref
        else None
    )
    recipes, recipes_sha = _recipes_source(args)
    if isinstance(recipes, GitTreeSource):
        _named(recipes, repo_name(args.recipes, args.recipes_name))
    runs = DirRunSource(args.evidence) if args.evidence is not None else None
    pull = _pull(runs)
    number = args.bench_pr if args.bench_pr is not None else _field(pull, "number")
    head_repo = _field(pull, "head", "repo", "full_name")
    recipes_dir: Path = args.recipes

    def builder(edited: Mapping[str, bytes], after: RecipesRepo) -> BuilderReport:
        # the recipes builder's dependencies, when the recipes are read from the disk
        node_modules = (
            recipes_dir / "node_modules" if isinstance(recipes, DirectorySource) else None
        )
        return run_builder(recipes, edited, after, node_modules=node_modules)

    return AlignInputs(
        bench=bench,
        bench_base=base,
        recipes=recipes,
        rules=load_rules(args.rules) if args.rules is not None else default_rules(),
        config_keys=tuple(args.config_key),
        runs=runs,
        bench_repo=args.bench_name
        or _field(pull, "base", "repo", "full_name")
        or repo_name(args.bench_repo, None),
        pr_number=number if isinstance(number, int) else None,
        head_sha=bench.commit_sha,
        base_sha=base.commit_sha if base is not None else "",
        head_branch=_field(pull, "head", "ref"),
        head_repo=head_repo if isinstance(head_repo, str) else None,
        recipes_repo=repo_name(args.recipes, args.recipes_name),
        recipes_sha=recipes_sha,
        blob_sha_at=git_blob_sha_at(args.bench_repo),
        builder=builder,
        dropped={"*": dict.fromkeys(map(_hunk_name, args.drop), "")} if args.drop else {},
        included={"*": frozenset(map(_included_name, args.include))} if args.include else {},
    )


def _included_name(name: str) -> str:
    """A flag in its canonical spelling (the gate compares canonical subjects)."""
    name = _hunk_name(name)
    return canonical_flag(name) if name.startswith("--") else name


def _hunk_name(name: str) -> str:
    """``moe-backend`` → ``--moe-backend`` (argparse takes ``--x`` only as ``--drop=--x``);
    an UPPER_CASE env var, ``image`` and a verification mark (``meta.hardware.b200``) stay as
    they are."""
    kept = name.startswith(("-", "meta.hardware.")) or name == "image"
    return name if kept or not any(c.islower() for c in name) else "--" + name


def _write(out: Path, name: str, text: str | None) -> None:
    path = out / name
    if text is None:
        path.unlink(missing_ok=True)  # no stale file from an earlier run
    else:
        path.write_text(text, encoding="utf-8")


def write_outputs(run: AlignRun, texts: AlignTexts, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    patches = run.patches
    patch = "".join(o.patch for o in patches) or None
    titles = "".join(texts.prs[o.recipe_path].title + "\n" for o in patches) or None
    bodies = "\n---\n\n".join(texts.prs[o.recipe_path].full_body for o in patches) or None
    _write(out, "recipe.patch", patch)
    _write(out, "pr-title.txt", titles)
    _write(out, "pr-body.md", bodies)
    _write(out, "comment.md", texts.comment)
    data = json.dumps(plan_json(run, texts), indent=2, ensure_ascii=False) + "\n"
    _write(out, "plan.json", data)
    prs = out / "prs"
    if prs.exists():
        shutil.rmtree(prs)
    if len(patches) > 1:
        for found in patches:
            folder = prs / recipe_slug(found.recipe_path)
            folder.mkdir(parents=True)
            _write(folder, "recipe.patch", found.patch)
            _write(folder, "pr-title.txt", texts.prs[found.recipe_path].title + "\n")
            _write(folder, "pr-body.md", texts.prs[found.recipe_path].full_body)
    return [out / name for name in OUTPUTS if (out / name).exists()]


def summary_lines(run: AlignRun, texts: AlignTexts, written: list[Path]) -> list[str]:
    inputs = run.inputs
    lines = [
        f"benchmark: {inputs.bench_ref} at {inputs.head_sha[:12]}"
        + (f" (base {inputs.base_sha[:12]})" if inputs.base_sha else "")
        + f": {count(len(run.keys), 'affected key')}"
    ]
    for key in run.keys:
        counts: dict[str, int] = {}
        for point in key.points:
            counts[point.status] = counts.get(point.status, 0) + 1
        detail = key.problem or ", ".join(f"{n} {s}" for s, n in counts.items())
        lines.append(f"  {key.key.key}: {detail}")
    for found in run.outcomes:
        if found.status == "patch":
            added = sum(1 for x in found.patch.splitlines() if x[:1] == "+" and x[:3] != "+++")
            removed = sum(1 for x in found.patch.splitlines() if x[:1] == "-" and x[:3] != "---")
            lines.append(
                f"{found.recipe_path}: alignment PR ({pr_contents(found)}, +{added}/-{removed})"
            )
            for edit in found.plan.edits:
                lines.append(f"  {edit.kind}: {edit.node} = {edit.after}")
            for placed in found.guide:
                if placed.written:
                    lines.append(
                        f"  guide: {placed.action} “{placed.section.heading}” ({placed.where})"
                    )
            if found.matrix is not None:
                lines.append(f"  regression matrix: {moved_summary(found.matrix)}")
        else:
            lines.append(f"{found.recipe_path}: no patch: {found.reason}")
        drifted = [d for d in found.guide_drift if d.drifted and not d.managed]
        for item in drifted:
            lines.append(
                f"  guide command drifted (line {item.line}, “{item.heading}”): {item.summary()}"
            )
    if not run.outcomes and run.change.unchanged and not run.change.in_scope:
        lines.append(
            f"the changed files reach {count(len(run.change.unchanged), 'vLLM key')}, but none "
            "of their launch lines "
            "changed: no patch"
        )
    elif not run.outcomes:
        lines.append("no recipe profile is represented by the affected points: no patch")
    lines.append(f"check: {texts.check.conclusion}: {texts.check.title}")
    lines.append("wrote: " + ", ".join(str(p) for p in written))
    return lines


def run(args: argparse.Namespace) -> int:
    result = align(inputs_from_args(args))
    texts = present(result)
    written = write_outputs(result, texts, args.out)
    lines = summary_lines(result, texts, written)
    print("\n".join(lines))
    findings = consistency_findings(result, texts, lines)
    for path, finding in findings:
        print(
            f"recipe-sync: error: consistency check {finding.check} failed for {path} "
            f"(a recipe-sync bug): {finding.message}",
            file=sys.stderr,
        )
    return CONTRADICTED if findings else exit_status(result, texts)


CONTRADICTED = 3  # the texts contradict themselves: a recipe-sync bug to report


def _lines_of(console: list[str], recipe_path: str) -> list[str]:
    """The console lines about one recipe file: its line and the indented ones below."""
    out: list[str] = []
    for line in console:
        if line.startswith(f"{recipe_path}:") or (out and line.startswith("  ")):
            out.append(line)
        elif out:
            break
    return out


def consistency_findings(
    run: AlignRun, texts: AlignTexts, console: list[str]
) -> list[tuple[str, Finding]]:
    """The findings of every PR's texts, its console lines included (a body that failed
    already carries the note; the console's own lines are checked here)."""
    out: list[tuple[str, Finding]] = []
    for found in run.patches:
        shown = texts.findings.get(found.recipe_path, ())
        again = check_texts(
            run, found, texts.prs[found.recipe_path].body, _lines_of(console, found.recipe_path)
        )
        out += [(found.recipe_path, f) for f in dict.fromkeys((*shown, *again))]
    return out


def exit_status(run: AlignRun, texts: AlignTexts) -> int:
    """0: aligned, nothing to do (tuning may still be offered); 1: a PR to open or drift left
    (proposed, blocked or only offered); 2: no edit could be proposed, or the check run
    fails (launch lines that could not be extracted): one line on stderr naming the recipe
    file or the check's title and the reason."""
    failed = [o for o in run.outcomes if o.status == "failed"]
    for found in failed:
        reason = found.reason.splitlines()[0] if found.reason else "no edit found"
        print(f"recipe-sync: error: {reason}", file=sys.stderr)
    if texts.check.conclusion == "failure":
        print(f"recipe-sync: error: check failure: {texts.check.title}", file=sys.stderr)
    if failed or texts.check.conclusion == "failure":
        return 2
    if any(o.status in ("patch", "blocked", "offered") for o in run.outcomes):
        return 1
    return 0

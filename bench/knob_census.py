"""Census of the flags and env variables a benchmark repository's vLLM scripts set, with the
knob class each gets from ``rules/knobs.yaml``; exit 1 when any is unclassified.

    python -m bench.knob_census --bench-repo DIR [--bench-ref REF] [--history]

Two sources: every launch line of every single-node vLLM config key at REF, statically
extracted (flags as vLLM parses them, the launch's own env); with ``--history``, also every
version in the git history of every ``benchmarks/`` shell script that starts ``vllm serve``
(option words the vLLM catalogue knows, and ``export NAME=`` / ``NAME=… vllm serve`` names).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from bot.benchmarks import extract, load_bench_repo, points
from bot.errors import RecipeSyncError
from bot.rules import Rules, default_rules, load_rules
from bot.sources import DirectorySource, FileSource, GitTreeSource
from bot.vllm.catalogue import flag_table
from bot.vllm.normalise import normalise
from bot.vllm.versions import NEWEST

Census = Counter[tuple[str, str]]
SINGLE_NODE = ("benchmarks/single_node", "benchmarks/benchmark_lib.sh")

_OPTION = re.compile(r"(?<![\w-])(--[A-Za-z][A-Za-z0-9_-]*)")
_EXPORT = re.compile(r"^\s*export\s+([A-Z_][A-Z0-9_]*)=", re.M)
_PREFIX = re.compile(r"^\s*((?:[A-Z_][A-Z0-9_]*=\S*\s+)+)(?:vllm|python3? -m vllm)", re.M)


def from_launches(source: FileSource, rules: Rules) -> Census:
    repo = load_bench_repo(source, rules)
    found: Census = Counter()
    for key in repo.configs:
        try:
            entry = repo.entry(key)
            if entry.framework != "vllm" or entry.multinode:
                continue
            pairs = points(repo, key)
        except RecipeSyncError:
            continue
        for point, arm in pairs:
            try:
                launch = extract(repo, key, point, arm)
            except RecipeSyncError:
                continue
            if launch.status != "launched":
                continue
            config = normalise(launch.argv, version=NEWEST)
            for setting in config.settings:
                if setting.spec is not None:
                    found["flag", setting.flag] += 1
            for name in launch.env:
                found["env", name] += 1
    return found


def from_history(repo: Path) -> Census:
    table = flag_table()
    listing = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--all", "--objects", "--", *SINGLE_NODE],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found: Census = Counter()
    blobs = {line.split(" ", 1)[0] for line in listing.splitlines() if line.endswith(".sh")}
    for blob in sorted(blobs):
        text = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "blob", blob], capture_output=True, text=True
        ).stdout
        if "vllm serve" not in text and "vllm.entrypoints" not in text:
            continue
        for option in set(_OPTION.findall(text)):
            spelled = option.replace("_", "-")
            hit = table.lookup(spelled, NEWEST)
            if hit is not None:
                found["flag", hit[0].spec.long] += 1
        names = set(_EXPORT.findall(text))
        for prefix in _PREFIX.findall(text):
            names.update(word.split("=", 1)[0] for word in prefix.split())
        for name in names:
            found["env", name] += 1
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-repo", type=Path, required=True)
    parser.add_argument("--bench-ref")
    parser.add_argument("--history", action="store_true")
    parser.add_argument("--rules", type=Path)
    args = parser.parse_args(argv)
    rules = load_rules(args.rules) if args.rules else default_rules()
    source: FileSource = (
        GitTreeSource(args.bench_repo, args.bench_ref)
        if args.bench_ref
        else DirectorySource(args.bench_repo)
    )
    census = from_launches(source, rules)
    if args.history:
        census.update(from_history(args.bench_repo))
    unclassified: list[str] = []
    by_class: dict[str, list[str]] = {}
    for (kind, name), count in sorted(census.items()):
        cls = rules.knob_class("flag" if kind == "flag" else "env", name)
        by_class.setdefault(cls.value, []).append(f"{name} ({count})")
        if cls.value == "unclassified":
            unclassified.append(name)
    for cls, names in sorted(by_class.items()):
        print(f"{cls}: {', '.join(names)}")
    print(
        f"census: {len(census)} flags and variables, {len(unclassified)} unclassified"
        + (f" ({', '.join(unclassified)})" if unclassified else "")
    )
    return 1 if unclassified else 0


if __name__ == "__main__":
    sys.exit(main())

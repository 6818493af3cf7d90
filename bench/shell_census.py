"""Census of the commands the vLLM scripts of a benchmark repository run, and how each is
treated by the static evaluator (``docs/shell-census.md`` is its output, with the reasons).

    python -m bench.shell_census --bench-repo DIR [--ref main] [--history]

Scripts: every ``benchmarks/**/*.sh`` outside ``multi_node/`` at REF that starts a vLLM server
(``vllm serve`` / ``api_server``), plus ``benchmarks/benchmark_lib.sh``; with ``--history``
also every earlier version of those paths on REF's first-parent history. Commands are the
``command_name`` nodes of tree-sitter-bash; the script's own functions are left out. For the
text utilities each distinct invocation is tried against its model.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
from pathlib import Path

import tree_sitter_bash
from tree_sitter import Language, Parser

from bot.benchmarks.extractor import HANDLERS
from bot.shell import textutils
from bot.shell.builtins import BUILTINS, PURE
from bot.shell.commands import _WRAPPERS
from bot.shell.effects import classify
from bot.shell.purecmd import grep

_PARSER = Parser(Language(tree_sitter_bash.language()))
_TEXT_TOOLS = ("paste", "sed", "awk", "grep", "jq")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    done.check_returncode()
    return done.stdout


def _scripts(repo: Path, ref: str) -> list[str]:
    names = _git(repo, "ls-tree", "-r", "--name-only", ref, "benchmarks").split()
    out = []
    for name in names:
        if not name.endswith(".sh") or "/multi_node/" in name:
            continue
        text = _git(repo, "show", f"{ref}:{name}")
        if name.endswith("benchmark_lib.sh") or re.search(r"vllm serve|api_server", text):
            out.append(name)
    return out


def _blobs(repo: Path, ref: str, paths: list[str], history: bool) -> dict[str, str]:
    blobs: dict[str, str] = {}
    for path in paths:
        commits = _git(repo, "log", "--format=%H", ref, "--", path).split() if history else [ref]
        for commit in commits:
            try:
                blobs.setdefault(_git(repo, "rev-parse", f"{commit}:{path}").strip(), path)
            except subprocess.CalledProcessError:
                continue  # deleted in that commit
    return blobs


def treatment(name: str) -> str:
    """How the evaluator treats a command, from the registries themselves."""
    if name in HANDLERS.commands:
        return "benchmark library model"
    if name in PURE:
        return "modelled on known input"
    if name in BUILTINS:
        return "builtin, evaluated"
    if name == "vllm":
        return "the launch (vllm serve)"
    if name in _WRAPPERS:
        return "wrapper: the command it runs is evaluated"
    effect = classify([name, "x"])
    if effect is None:
        return "unknown command: output and status unknown"
    return {
        "no-op": "no effect on the launch",
        "host-probe": "host probe: output known only at run time",
        "package-install": "side effect assumed to succeed (package install)",
        "download": "side effect assumed to succeed (download)",
        "source-edit": "side effect assumed to succeed (build or source edit)",
        "python": "Python: never executed",
        "system": "side effect assumed to succeed (system)",
    }.get(effect.category, effect.category)


def _try(name: str, args: list[str]) -> bool:
    sample = "a b c\nd e f\n"
    if name == "paste":
        return textutils.paste(args, lambda _: sample) is not None
    if name == "sed":
        return textutils.sed(args, lambda _: sample) is not None
    if name == "awk":
        return textutils.awk(args, lambda _: sample) is not None
    if name == "grep":
        return grep([a for a in args if not a.startswith("/")], sample) is not None
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench-repo", type=Path, required=True)
    parser.add_argument("--ref", default="main")
    parser.add_argument("--history", action="store_true")
    options = parser.parse_args()
    paths = _scripts(options.bench_repo, options.ref)
    blobs = _blobs(options.bench_repo, options.ref, paths, options.history)
    calls: collections.Counter[str] = collections.Counter()
    files: dict[str, set[str]] = collections.defaultdict(set)
    forms: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    functions: set[str] = set()
    for sha, path in blobs.items():
        data = _git(options.bench_repo, "cat-file", "-p", sha).encode()
        stack = [_PARSER.parse(data).root_node]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if node.type == "function_definition":
                name_node = node.child_by_field_name("name")
                if name_node is not None:
                    functions.add(data[name_node.start_byte : name_node.end_byte].decode())
            if node.type != "command_name":
                continue
            name = data[node.start_byte : node.end_byte].decode()
            if not re.fullmatch(r"[\w.+-]+", name):
                continue  # `$CMD`, paths
            calls[name] += 1
            files[name].add(path)
            if name in _TEXT_TOOLS and node.parent is not None:
                text = data[node.parent.start_byte : node.parent.end_byte].decode()
                forms[name][" ".join(text.split())] += 1
    print(f"{len(paths)} scripts at {options.ref}, {len(blobs)} distinct versions\n")
    print("| command | calls | scripts | treatment |")
    print("|---|---:|---:|---|")
    for name, count in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0])):
        if name in functions and name not in HANDLERS.commands:
            continue
        print(f"| `{name}` | {count} | {len(files[name])} | {treatment(name)} |")
    for name in _TEXT_TOOLS:
        if not forms.get(name):
            continue
        print(f"\n{name}:\n")
        for text, count in forms[name].most_common():
            words = re.findall(r"'[^']*'|\"(?:[^\"\\\\]|\\\\.)*\"|\S+", text)
            # run-time operands ("$FILE") are left out; single-quoted text is literal
            args = [
                w[1:-1] if w[:1] in "'\"" else w for w in words[1:] if not w.startswith(("$", '"$'))
            ]
            modelled = "modelled" if _try(name, args) else "not modelled"
            print(f"- {count}× `{text[:110]}`: {modelled}")


if __name__ == "__main__":
    main()

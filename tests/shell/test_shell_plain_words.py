"""A word of plain characters expands to the same field at every evaluation, so its field is
kept with the parsed file; a word that expands anything is expanded each time."""

from __future__ import annotations

from pathlib import Path

from bot.benchmarks.extractor import evaluate_script
from bot.shell import ScriptParser
from bot.shell.fields import Field
from bot.shell.wordscan import plain_word
from bot.sources import DirectorySource

SCRIPT = "benchmarks/case.sh"
CASE = """#!/bin/bash
for seqs in 8 "$FIRST"; do :; done
vllm serve org/model-fp8 --max-num-seqs "$SEQS" --tag=a,b --kv-cache-dtype fp8 $EXTRA
"""


def test_plain_words_are_kept_and_expansions_are_not(tmp_path: Path) -> None:
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / SCRIPT).write_text(CASE)
    source, parser = DirectorySource(tmp_path), ScriptParser()
    first = evaluate_script(source, SCRIPT, {"SEQS": "8", "EXTRA": "", "FIRST": "1"}, parser=parser)
    env = {"SEQS": "64", "EXTRA": "--enforce-eager", "FIRST": "2"}
    second = evaluate_script(source, SCRIPT, env, parser=parser)
    assert "org/model-fp8" in first.argv
    assert first.argv[-5:] == ("--max-num-seqs", "8", "--tag=a,b", "--kv-cache-dtype", "fp8")
    assert second.argv[-6:] == (
        "--max-num-seqs",
        "64",
        "--tag=a,b",
        "--kv-cache-dtype",
        "fp8",
        "--enforce-eager",
    )
    kept = parser.parse_file(source, SCRIPT).memo
    plain = {
        key
        for key, field in kept.items()
        if isinstance(key, tuple) and key[0] == "plain word" and isinstance(field, Field)
    }
    # a word that expands something is looked at once and remembered as not plain
    looked = {key for key in kept if isinstance(key, tuple) and key[0] == "plain word"}
    assert '"$SEQS"' in {CASE.encode()[start:end].decode() for _, start, end in looked - plain}
    words = {CASE.encode()[start:end].decode() for _, start, end in plain}
    assert {"vllm", "serve", "org/model-fp8", "--tag=a,b", "fp8"} <= words
    assert not {w for w in words if "$" in w or '"' in w}


def test_what_makes_a_word_plain() -> None:
    for word in ("vllm", "--tag=a,b", "org/model", "0.9", "a=b", "x#y", "--flag=-1"):
        assert plain_word(word.encode(), 0, len(word)), word
    for word in ("$X", '"a"', "'a'", "a\\ b", "~/x", "{a,b}", "*.sh", "a?", "[ab]", "$(x)", "`x`"):
        assert not plain_word(word.encode(), 0, len(word)), word
    assert plain_word(b"$X plain", 3, 8) and not plain_word(b"$X plain", 0, 8)

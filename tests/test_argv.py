"""One reader of flags by spelling (bot/argv.py), with argparse's rule for values."""

from __future__ import annotations

from bot.argv import flag_value, looks_like_option, option_of, value_at, without_flags
from bot.vllm.catalogue import canonical_flag


def test_the_last_occurrence_wins_in_either_form() -> None:
    assert flag_value(("--a", "1", "--a=2"), "--a") == "2"
    tp = ("-tp", "8", "--tensor-parallel-size", "4")
    assert flag_value(tp, "-tp", "--tensor-parallel-size") == "4"
    assert flag_value(("--b", "1"), "--a") is None


def test_a_value_is_never_the_next_option() -> None:
    assert value_at(("--enforce-eager", "--max-num-seqs", "8"), 0) is None
    assert flag_value(("--offset", "-1"), "--offset") == "-1"  # a negative number is a value
    assert flag_value(("--a",), "--a") is None
    assert value_at(("--a=",), 0) == ""
    assert looks_like_option("-tp") and not looks_like_option("-") and not looks_like_option("-2.5")


def test_without_flags_drops_each_occurrence_and_its_value() -> None:
    argv = ("vllm", "serve", "m", "--a", "1", "--b", "--a=2", "--c", "3")
    assert without_flags(argv, {"--a"}) == ("vllm", "serve", "m", "--b", "--c", "3")
    assert without_flags(argv, {"--b"}) == ("vllm", "serve", "m", "--a", "1", "--a=2", "--c", "3")
    spelled = ("--max_num_seqs", "8", "-tp", "2", "--x")
    assert without_flags(spelled, {"--max-num-seqs", "--tensor-parallel-size"}, canonical_flag) == (
        "--x",
    )


def test_option_of_names_where_a_word_stands() -> None:
    argv = ("vllm", "serve", "--a=1", "--b", "2", "-1", "--c=3", "4")
    assert option_of(argv, 2) == "--a"
    assert option_of(argv, 4) == "--b"  # the value of --b
    assert option_of(argv, 5) == "-1"  # any word starting with '-' names itself
    assert option_of(argv, 7) is None  # after --c=3: a positional word
    assert option_of(argv, 0) is None

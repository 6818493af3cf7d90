"""The memo of ``normalise``: the same answers as a fresh parse, each caller with its own
copy of the mutable values (a JSON config is a dict), bounded, and off at 0 entries."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.vllm import normalise as normalise_fn
from bot.vllm.normalise import _normalise, normalise, normalised_entries, reset_normalised

ARGV = (
    "vllm",
    "serve",
    "m",
    "--speculative-config",
    '{"method": "mtp", "num_speculative_tokens": 2}',
    "--compilation-config",
    '{"cudagraph_capture_sizes": [1, 2, 4]}',
    "-O.mode=3",
    "--max-num-seqs",
    "64",
)


@pytest.fixture(autouse=True)
def fresh_memo() -> Iterator[None]:
    reset_normalised()
    yield
    reset_normalised()


def test_the_package_exports_the_memoised_function() -> None:
    assert normalise_fn is normalise


def test_a_hit_answers_as_a_fresh_parse() -> None:
    first = normalise(ARGV)
    again = normalise(list(ARGV))
    assert normalised_entries() == 1
    assert first == again == _normalise(ARGV, (0, 33, 0), None)


def test_the_key_holds_version_and_config_files() -> None:
    argv = ("vllm", "serve", "--config", "c.yaml")
    with_model = normalise(argv, config_files={"c.yaml": "model: a\n"})
    other = normalise(argv, config_files={"c.yaml": "model: b\n"})
    none = normalise(argv)
    old = normalise(argv, version=(0, 12, 0), config_files={"c.yaml": "model: a\n"})
    assert (with_model.model, other.model, none.model) == ("a", "b", None)
    assert old.version == (0, 12, 0)
    assert normalised_entries() == 4


def test_callers_get_their_own_mutable_values() -> None:
    first = normalise(ARGV)
    mutable = [s for s in first.settings if isinstance(s.value, (dict, list))]
    assert mutable  # the speculative and compilation configs
    for setting in mutable:
        if isinstance(setting.value, dict):
            setting.value["mutated"] = True
        else:
            setting.value.append("mutated")
    again = normalise(ARGV)
    assert again == _normalise(ARGV, (0, 33, 0), None)
    assert again != first
    plain = normalise(("vllm", "serve", "m", "--max-num-seqs", "8"))
    assert plain is normalise(("vllm", "serve", "m", "--max-num-seqs", "8"))  # nothing to copy


def test_bounded_and_off_at_zero() -> None:
    reset_normalised(2)
    for n in range(5):
        normalise(("vllm", "serve", "m", "--max-num-seqs", str(n)))
    assert normalised_entries() == 2
    reset_normalised(0)
    normalise(ARGV)
    assert normalised_entries() == 0

"""The flag catalogue is consistent with itself, with the doc's alias list and with the
flag names rules/flags.yaml classifies."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bot.rules import load_rules
from bot.vllm import canonical_flag
from bot.vllm.catalogue import FLAGS, flag_table

RULES = Path(__file__).resolve().parents[2] / "rules"
V33 = (0, 33, 0)

# §1.11 of the semantics doc: the 0.33 short aliases
DOC_SHORT_ALIASES = {
    "-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size",
    "-dp": "--data-parallel-size", "-dcp": "--decode-context-parallel-size",
    "-pcp": "--prefill-context-parallel-size", "-ep": "--enable-expert-parallel",
    "-q": "--quantization", "-n": "--nnodes", "-r": "--node-rank",
    "-sc": "--speculative-config", "-cc": "--compilation-config", "-ac": "--attention-config",
    "-dc": "--diffusion-config", "-asc": "--api-server-count", "-dpn": "--data-parallel-rank",
    "-dpr": "--data-parallel-start-rank", "-dpl": "--data-parallel-size-local",
    "-dpa": "--data-parallel-address", "-dpp": "--data-parallel-rpc-port",
    "-dpb": "--data-parallel-backend", "-dph": "--data-parallel-hybrid-lb",
    "-dpe": "--data-parallel-external-lb", "-dpm": "--data-parallel-multi-port-external-lb",
}  # fmt: skip


def test_spellings_are_unique_per_version() -> None:
    spellings = Counter(
        text for spec in FLAGS for text in (spec.long, *(a.text for a in spec.aliases))
    )
    duplicated = {t for t, n in spellings.items() if n > 1}
    assert duplicated == set()
    for text, options in flag_table().options.items():
        live = [o for o in options if flag_table().lookup(text, V33) is not None]
        assert len({o.spec.long for o in live}) <= 2, text  # --disable-log-requests: old + 0.33


def test_doc_short_aliases_resolve_in_033() -> None:
    for short, long in DOC_SHORT_ALIASES.items():
        hit = flag_table().lookup(short, V33)
        assert hit is not None and hit[1] == "yes" and hit[0].spec.long == long, short


def test_rules_flags_name_catalogue_flags() -> None:
    flags = load_rules(RULES).flags
    named = {r.flag for r in (*flags.front_end, *flags.benchmark_only)}
    named |= {r.flag for r in flags.benchmark_only_json_keys} | {r.flag for r in flags.tuning}
    missing = {flag for flag in named if flag_table().lookup(flag, V33) is None}
    assert missing == set()


def test_enable_disable_inverses_only_in_033() -> None:
    option, status = flag_table().lookup("--disable-prefix-caching", V33) or (None, "")
    assert option is not None and option.negated and status == "yes"
    assert flag_table().lookup("--disable-prefix-caching", (0, 27, 1))[1] == "no"  # type: ignore[index]


def test_canonical_flag_names_one_subject_per_flag() -> None:
    """``--no-x`` (BooleanOptionalAction), 0.33's inverse, aliases and ``_`` spellings are
    one subject; dotted config keys keep their key; unknown flags stay as written."""
    assert canonical_flag("--no-enable-prefix-caching") == "--enable-prefix-caching"
    assert canonical_flag("--enable-prefix-caching") == "--enable-prefix-caching"
    assert (
        canonical_flag("--no-disable-hybrid-kv-cache-manager")
        == "--disable-hybrid-kv-cache-manager"
    )
    assert canonical_flag("--max_num_seqs=8") == "--max-num-seqs"
    assert canonical_flag("-tp") == "--tensor-parallel-size"
    dotted = "--attention_config.use_prefill_query_quantization"
    assert canonical_flag(dotted) == "--attention-config.use_prefill_query_quantization"
    assert canonical_flag("--not-a-vllm-flag") == "--not-a-vllm-flag"
    assert canonical_flag("VLLM_USE_V1") == "VLLM_USE_V1"

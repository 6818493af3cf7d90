"""Safe Markdown from untrusted text: identifiers as code spans, everything else inert."""

from __future__ import annotations

from markdown_it import MarkdownIt

from bot import markdown as md
from bot.markdown import fence, inline, neutralize, truncate


def test_prose_puts_identifiers_in_code_spans() -> None:
    assert md.prose(
        "the benchmark sets --moe-backend aiter, the recipe aiter_triton_mxfp4_bf16"
    ) == ("the benchmark sets `--moe-backend aiter`, the recipe `aiter_triton_mxfp4_bf16`")
    assert md.prose(
        "resolves for `vllm serve` (OPENAI_API_SERVER) [vllm/engine/arg_utils.py L2]"
    ) == ("resolves for `vllm serve` (`OPENAI_API_SERVER`) \\[`vllm/engine/arg_utils.py` L2\\]")
    assert md.prose("image a/b:c → nightly-eed1; --max-num-seqs 32 → 64; +X_Y=1") == (
        "image `a/b:c` → `nightly-eed1`; `--max-num-seqs 32` → `64`; +`X_Y=1`"
    )
    # a bracket the identifier opens stays in its span; one it does not is text
    assert md.prose("at hardware_overrides.amd.extra_args[2].") == (
        "at `hardware_overrides.amd.extra_args[2]`."
    )


def test_prose_keeps_a_json_value_and_its_flag_in_one_code_span() -> None:
    # seen on InferenceX#2707: spaces and quotes inside the JSON split it into scraps
    # ({"`method":"mtp",…}`) that GitHub renders as broken code
    assert md.prose(
        'moved: --speculative-config {"method":"mtp","n":2} → {"method": "mtp", "n": 3}; '
        '+--kv-transfer-config {"a":[1, {"b":"x y"}]}; prefill: +--x 3'
    ) == (
        'moved: `--speculative-config {"method":"mtp","n":2}` → `{"method": "mtp", "n": 3}`; '
        '+`--kv-transfer-config {"a":[1, {"b":"x y"}]}`; prefill: +`--x 3`'
    )
    # a quote escaped inside a JSON string does not end it; a list of numbers is JSON too
    assert md.prose('sizes [1, 2, 4] and {"k": "a \\" } b"}.') == (
        'sizes `[1, 2, 4]` and `{"k": "a \\" } b"}`.'
    )
    # brackets that open no JSON value, and an unclosed object, stay escaped text
    assert md.prose('[x] and {y} and {"open') == '\\[x\\] and {y} and {"open'


def test_prose_leaves_words_numbers_and_flags_mid_sentence_alone() -> None:
    assert md.prose("--host is front-end only, e.g. 2.72 ms/step at 1/2/4, v0.33") == (
        "`--host` is front-end only, e.g. 2.72 ms/step at 1/2/4, v0.33"
    )


def test_prose_keeps_untrusted_text_inert() -> None:
    out = md.prose("ERROR <!-- x --> @octocat fixes #1 [a](https://evil.example) <b> *b* a`b")
    assert "<!--" not in out and "@octocat" not in out
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(out)
    assert "<a " not in html and "<b>" not in html and "<em>" not in html
    assert "&lt;b&gt;" in html and "*b*" in html


def test_cell_escapes_pipes_in_code_spans_too() -> None:
    assert md.cell("a | `x|y` \\| b") == "a \\| `x\\|y` \\| b"


def test_neutralize_defuses_mentions_keywords_and_markers_outside_code() -> None:
    text = (
        "ping @octocat, fixes #12 and closes org/repo#3\n"
        "`@inline stays` and\n```\nvllm serve --x @file\n```\n"
        "<!-- recipe-sync:verify v1 --> <!-- recipe-sync:meta {} -->"
    )
    out = neutralize(text)
    assert "@octocat" not in out and "@\u200boctocat" in out
    assert "fixes #12" not in out and "closes org/repo#3" not in out
    assert "`@inline stays`" in out and "vllm serve --x @file" in out
    assert "<!--" not in out and "-->" not in out
    assert neutralize("mail me at a@b.example") == "mail me at a@b.example"


def test_fences_and_spans_survive_any_backticks() -> None:
    text = "echo ```` done"
    assert fence(text).startswith("`````\n") and fence(text).endswith("\n`````")
    assert inline("a ` b") == "``a ` b``"
    assert inline("`x") == "`` `x ``"


def test_truncate_says_so() -> None:
    out = truncate("x" * 1000, 200)
    assert len(out) <= 200 and "truncated" in out and truncate("short", 200) == "short"


def test_truncate_cuts_at_a_line_and_closes_what_it_leaves_open() -> None:
    """#2263's comment (60 KB) was cut inside a folded list: its <details> never closed."""
    rows = "".join(f"- `key-{n}`: a reason\n" for n in range(400))
    text = f"head\n\n<details><summary>400 keys</summary>\n\n{rows}</details>\n\ntail\n"
    out = truncate(text, 3000)
    assert len(out) <= 3000
    kept, note = out.split("\n\n… truncated: ")
    assert kept.endswith("a reason\n\n</details>") and note.endswith("were not shown.\n")
    fenced = "intro\n```bash\n" + "vllm serve x \\\n  --flag y \\\n" * 200 + "```\n"
    out = truncate(fenced, 1000)
    assert out.split("\n\n… truncated")[0].endswith("\\\n\n```")

"""Editor behaviour on small recipes: exact output text, read it to review."""

from __future__ import annotations

import datetime as dt

import pytest

from bot.recipes.edit import (
    AppendItems,
    EditVerificationError,
    EnsurePath,
    InsertItems,
    InsertKey,
    RemoveItems,
    SetComment,
    SetScalar,
    apply_edits,
)
from bot.recipes.edit.splice import Splice
from tests.shared import corpus_dir

CORPUS = corpus_dir() / "models"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="recipes corpus not available")


def _lines_outside(text: str, ranges: list[range]) -> list[str]:
    return [
        line
        for number, line in enumerate(text.splitlines(keepends=True), 1)
        if not any(number in r for r in ranges)
    ]


# --- scalars keep their style -------------------------------------------------------------


def test_set_scalar_keeps_quoting_style_and_falls_back_to_siblings() -> None:
    text = """a:
  s: 'x'   # single
  d: "x"
  p: x
  q: '1'
b: plain
"""
    result = apply_edits(
        text,
        [
            SetScalar("a.s", "it's"),
            SetScalar("a.d", 'say "hi"'),
            SetScalar("a.q", "2"),
            SetScalar("a.p", "a: b"),  # plain cannot hold ": " -> siblings' single quotes
            SetScalar("b", "true"),  # plain would be a boolean
        ],
    )
    assert (
        result.text
        == """a:
  s: 'it''s'   # single
  d: "say \\"hi\\""
  p: 'a: b'
  q: '2'
b: 'true'
"""
    )


def test_set_scalar_non_strings_are_written_plain() -> None:
    text = 'a: "4"\nb: 1\nc: x\nd: 2026-07-31\n'
    result = apply_edits(
        text,
        [
            SetScalar("a", 8),
            SetScalar("b", 0.95),
            SetScalar("c", None),
            SetScalar("d", dt.date(2026, 8, 1)),
        ],
    )
    assert result.text == "a: 8\nb: 0.95\nc: null\nd: 2026-08-01\n"


def test_set_scalar_string_that_looks_like_a_date_is_quoted() -> None:
    result = apply_edits("d: 2026-07-31\ne: x\n", [SetScalar("e", "2026-08-01")])
    assert result.text == 'd: 2026-07-31\ne: "2026-08-01"\n'


def test_set_scalar_in_a_flow_sequence_and_an_empty_value() -> None:
    text = "a: [x, 'y', z]  # note\nb:\nc: 1\n"
    result = apply_edits(text, [SetScalar("a[1]", "w, v"), SetScalar("b", "filled")])
    assert result.text == "a: [x, 'w, v', z]  # note\nb: filled\nc: 1\n"


def test_set_block_scalar_keeps_literal_style_and_the_blank_lines_after_it() -> None:
    text = "guide: |\n  hello\n  world\n\n\nnext: 1\n"
    result = apply_edits(text, [SetScalar("guide", "## New\n\nbody\n")])
    assert result.text == "guide: |\n  ## New\n\n  body\n\n\nnext: 1\n"
    result = apply_edits(text, [SetScalar("guide", 0)])
    assert result.text == "guide: 0\n\n\nnext: 1\n"


def test_unchanged_value_is_a_no_op() -> None:
    text = "a:\n  b: 'x'  # keep\n"
    result = apply_edits(text, [SetScalar("a.b", "x"), EnsurePath("a.b", "x")])
    assert result.text == text
    assert result.diff == "" and result.changed == () and result.unchanged


# --- new keys and sections -----------------------------------------------------------------


def test_insert_key_after_before_and_end_with_comments_and_top_level_section() -> None:
    text = """meta:
  hardware:
    h200: verified

model:
  id: x

# The long prose.
guide: |
  ## Overview
"""
    result = apply_edits(
        text,
        [
            EnsurePath("strategy_overrides.single_node_tp.tp", {"amd": 4}, comment="Added."),
            InsertKey("meta.hardware", "b200", "verified", after="h200", comment=["two", "lines"]),
            InsertKey("model", "first", 1, before="id"),
        ],
    )
    # The top level separates sections by blank lines, so the new section does too, and it
    # goes above guide's own comment.
    assert (
        result.text
        == """meta:
  hardware:
    h200: verified
    # two
    # lines
    b200: verified

model:
  first: 1
  id: x

# Added.
strategy_overrides:
  single_node_tp:
    tp:
      amd: 4

# The long prose.
guide: |
  ## Overview
"""
    )


def test_new_top_level_section_goes_at_the_end_without_guide() -> None:
    result = apply_edits("a: 1\nb: 2\n", [EnsurePath("c.d", "x")])
    assert result.text == 'a: 1\nb: 2\nc:\n  d: "x"\n'


def test_indentless_sequences_are_detected_and_followed() -> None:
    text = "top:\n- a\n- b\nother:\n  k: v\n"
    result = apply_edits(
        text, [InsertKey("other", "args", ["--x", "1"]), AppendItems("top", ["c"])]
    )
    assert result.text == 'top:\n- a\n- b\n- c\nother:\n  k: v\n  args:\n  - --x\n  - "1"\n'


def test_a_new_args_list_is_quoted_as_the_files_args_lists_not_its_name_lists() -> None:
    """InferenceX#2580 on MiniMax-M3: the file quotes every args item (JSON in single quotes)
    but lists feature names plain; a new ``extra_args`` block followed the plain majority."""
    text = (
        "opt_in_features:\n  - spec_decoding\n  - text_only\n  - agentic\n"
        'features:\n  a:\n    args:\n      - "--x"\n      - "1"\n      - "--y"\n'
        """      - '{"a": 1}'\n"""
    )
    result = apply_edits(
        text,
        [
            EnsurePath("strategy_overrides.tp.extra_args", ["--z", '{"k":"v"}', "--w", "2"]),
            InsertKey("", "tasks", ["chat", "code"], after="features"),
        ],
    )
    assert result.text.endswith(
        """tasks:\n  - chat\n  - code\nstrategy_overrides:\n  tp:\n    extra_args:\n"""
        """      - "--z"\n      - '{"k":"v"}'\n      - "--w"\n      - "2"\n"""
    ), result.text


def test_insert_key_skips_comments_indented_under_the_previous_entry() -> None:
    text = """amd:
  extra_args:
    - "x"
    # - "--disabled"
# about nvidia
nvidia: {}
"""
    result = apply_edits(text, [InsertKey("", "intel", {"extra_args": []}, after="amd")])
    assert (
        result.text
        == """amd:
  extra_args:
    - "x"
    # - "--disabled"
intel:
  extra_args: []
# about nvidia
nvidia: {}
"""
    )


@needs_corpus
def test_ensure_path_turns_an_empty_flow_mapping_into_a_block() -> None:
    text = (CORPUS / "openai/gpt-oss-120b.yaml").read_text(encoding="utf-8")
    result = apply_edits(
        text,
        [
            EnsurePath(
                "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args",
                ["--max-num-seqs", "128"],
            )
        ],
        file="models/openai/gpt-oss-120b.yaml",
    )
    assert result.diff.split("\n@@", 1)[1] == (
        """ -85,7 +85,13 @@
       HSA_NO_SCRATCH_RECLAIM: "1"
       AMDGCN_USE_BUFFER_OPS: "0"
 \n-strategy_overrides: {}
+strategy_overrides:
+  single_node_tp:
+    hardware_overrides:
+      mi355x:
+        extra_args:
+          - "--max-num-seqs"
+          - "128"
 \n guide: |
   ## Overview
"""
    )
    [changed] = result.changed
    assert (changed.old_start, changed.old_end) == (88, 89)  # only `strategy_overrides: {}`


def test_same_key_names_in_different_maps_are_told_apart() -> None:
    text = """hardware_overrides:
  amd:
    extra_args:
      - "--a"
strategy_overrides:
  pd_cluster:
    prefill:
      extra_args:
        - "--max-num-seqs"
        - "32"
    decode:
      extra_args:
        - "--max-num-seqs"
        - "32"
"""
    result = apply_edits(
        text, [SetScalar("strategy_overrides.pd_cluster.decode.extra_args[1]", "64")]
    )
    assert result.text == text.replace('"32"\n', '"64"\n').replace('"64"\n', '"32"\n', 1)
    assert result.text.count('"32"') == 1 and result.text.endswith('"64"\n')


# --- lists ----------------------------------------------------------------------------------


def test_remove_flag_and_value_takes_its_comment_and_keeps_the_next_one() -> None:
    text = """args:
  - "--gpu-memory-utilization"
  - "0.9"
  # MXFP4 experts.
  - "--moe-backend"
  - "aiter_triton_mxfp4_bf16"
  # Keep this one.
  - "--enable-foo"
"""
    result = apply_edits(text, [RemoveItems("args", 2, 2)])
    assert (
        result.text
        == """args:
  - "--gpu-memory-utilization"
  - "0.9"
  # Keep this one.
  - "--enable-foo"
"""
    )


def test_insert_items_goes_above_the_comment_of_the_item_it_precedes() -> None:
    text = 'args:\n  - "--a"\n  # about b\n  - "--b"\n'
    result = apply_edits(text, [InsertItems("args", 1, ["--x", "2"], comment="why")])
    assert result.text == (
        'args:\n  - "--a"\n  # why\n  - "--x"\n  - "2"\n  # about b\n  - "--b"\n'
    )


def test_flow_and_empty_lists_and_maps() -> None:
    text = """args:
  - "--a"   # trailing
  - "1"
env: {}
more: []
flow: [x, y]
inline: {k: 1}
"""
    result = apply_edits(
        text,
        [
            RemoveItems("args", 0, 2),  # every item gone: `args: []`
            AppendItems("more", ["z"]),  # empty flow list under a key turns block
            AppendItems("flow", ["w"]),  # a non-empty flow list stays flow, plain like x, y
            InsertKey("env", "K", "v"),
            InsertKey("inline", "j", [1, 2], after="k"),
            InsertItems("flow", 0, ["first"]),
            RemoveItems("flow", 1),
        ],
    )
    assert (
        result.text
        == """args: []
env:
  K: "v"
more:
  - "z"
flow: [first, y, w]
inline: {k: 1, j: [1, 2]}
"""
    )


def test_nested_values_render_in_block_style() -> None:
    result = apply_edits(
        "a:\n  - x\n",
        [
            AppendItems("a", [{"name": "n", "args": ["--x"]}, ["p", "q"], {}]),
            InsertKey("", "b", {}),
        ],
    )
    assert result.text == (
        'a:\n  - x\n  - name: "n"\n    args:\n      - --x\n  - - p\n    - q\n  - {}\nb: {}\n'
    )


# --- file-level formatting ------------------------------------------------------------------


def test_crlf_files_stay_crlf() -> None:
    text = "a: 1\r\nb:\r\n  - x\r\n# note\r\n"
    result = apply_edits(text, [AppendItems("b", ["y"]), InsertKey("", "c", {"d": [1]})])
    assert result.text == "a: 1\r\nb:\r\n  - x\r\n  - y\r\nc:\r\n  d:\r\n    - 1\r\n# note\r\n"
    assert "\n" not in result.text.replace("\r\n", "")


def test_missing_final_newline_stays_missing() -> None:
    result = apply_edits('a: 1\nb:\n  - "x"', [AppendItems("b", ["y"])])
    assert result.text == 'a: 1\nb:\n  - "x"\n  - "y"'
    assert result.diff.endswith(
        '-  - "x"\n\\ No newline at end of file\n+  - "x"\n+  - "y"\n\\ No newline at end of file\n'
    )
    result = apply_edits("a: 1\nb:\n  - x", [RemoveItems("b", 0)])
    assert result.text == "a: 1\nb: []"


def test_tabs_in_comments_survive() -> None:
    # (a tab right before `#` is something ruamel.yaml and PyYAML both reject)
    text = "a: 1  # tab\tinside\n# full\tline\nb:\n  c: 2 #\tx\n"
    result = apply_edits(text, [SetScalar("b.c", 3), InsertKey("", "z", 0, after="a")])
    assert result.text == "a: 1  # tab\tinside\nz: 0\n# full\tline\nb:\n  c: 3 #\tx\n"


def test_block_scalars_next_to_edit_points_are_untouched() -> None:
    text = (
        "guide: |\n  hello\n\n  # a heading, not a comment\n"
        "keep: |+\n  kept\n\nlast: >-\n  folded\n  text\n"
    )
    result = apply_edits(
        text,
        [
            InsertKey("", "after_guide", 1, after="guide"),
            InsertKey("", "after_keep", 2, after="keep"),
            InsertKey("", "end", 3),
        ],
    )
    assert result.text == (
        "guide: |\n  hello\n\n  # a heading, not a comment\nafter_guide: 1\n"
        "keep: |+\n  kept\n\nafter_keep: 2\nlast: >-\n  folded\n  text\nend: 3\n"
    )


def test_dates_survive_and_are_verified_as_dates() -> None:
    text = "meta:\n  date_added: 2026-07-31\n  title: x\n"
    result = apply_edits(text, [SetScalar("meta.title", "y")])
    assert result.text == "meta:\n  date_added: 2026-07-31\n  title: y\n"


def test_anchors_elsewhere_do_not_stop_edits() -> None:
    text = "base: &b\n  k: 1\nuse: *b\nother:\n  x: 1\n"
    result = apply_edits(text, [SetScalar("other.x", 2)])
    assert result.text == "base: &b\n  k: 1\nuse: *b\nother:\n  x: 2\n"


# --- comments -------------------------------------------------------------------------------


def test_set_comment_replaces_adds_and_removes_leading_comments() -> None:
    text = """args:
  - "0.9"
  # MXFP4 experts with BF16 activations.
  - "--moe-backend"
  - "aiter"
tp:
  # Four GPUs.
  amd: 4
"""
    result = apply_edits(
        text,
        [
            SetComment("args[1]", ['Plain "aiter" opens the full MoE priority list.']),
            SetComment("args[0]", "first"),
            SetComment("tp.amd", None),
        ],
    )
    assert (
        result.text
        == """args:
  # first
  - "0.9"
  # Plain "aiter" opens the full MoE priority list.
  - "--moe-backend"
  - "aiter"
tp:
  amd: 4
"""
    )


# --- guarantees -----------------------------------------------------------------------------


def test_changed_ranges_and_diff_describe_the_edit_exactly() -> None:
    text = "a:\n  - x\nb: 1\nc: 2\n"
    result = apply_edits(text, [AppendItems("a", ["y"]), SetScalar("c", 3)])
    assert [(r.old_start, r.old_end, r.new_start, r.new_end) for r in result.changed] == [
        (3, 3, 3, 4),
        (4, 5, 5, 6),
    ]
    old_ranges = [r.old_lines for r in result.changed]
    new_ranges = [r.new_lines for r in result.changed]
    assert _lines_outside(text, old_ranges) == _lines_outside(result.text, new_ranges)
    assert result.diff == (
        "--- a/<recipe>\n+++ b/<recipe>\n@@ -1,4 +1,5 @@\n a:\n   - x\n"
        "+  - y\n b: 1\n-c: 2\n+c: 3\n"
    )


def test_wrong_text_is_never_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    import bot.recipes.edit.apply as apply_module

    def wrong(doc: object, edit: object) -> list[Splice]:
        return [Splice(0, 1, ("a: 2\n",))]  # claims to set a = 1, writes 2

    monkeypatch.setattr(apply_module, "splices_for", wrong)
    with pytest.raises(EditVerificationError) as caught:
        apply_edits("a: 0\n", [SetScalar("a", 1)], file="t.yaml")
    assert str(caught.value) == (
        "t.yaml: key 'a': edited text does not parse back to the expected data; nothing written"
    )


def test_block_scalar_ending_a_file_without_newline_keeps_its_value() -> None:
    # `guide: |` at EOF without a newline holds "text" (no line break). Appending after it
    # must give that line a newline, so the header turns strip to keep the value.
    result = apply_edits("a: 1\nguide: |\n  text", [InsertKey("", "z", 2)])
    assert result.text == "a: 1\nguide: |-\n  text\nz: 2"
    # Deleting the lines after a block scalar keeps its final line break.
    result = apply_edits("list:\n  - |\n    text\n  - y", [RemoveItems("list", 1)])
    assert result.text == "list:\n  - |\n    text\n"
    result = apply_edits("list:\n  - x\n  - y", [RemoveItems("list", 1)])
    assert result.text == "list:\n  - x"

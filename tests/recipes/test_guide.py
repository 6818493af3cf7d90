"""The guide editor: locate the block scalar, find commands, place a managed block, and keep
every byte outside it."""

from __future__ import annotations

import pytest

from bot.recipes.guide import (
    GuideError,
    locate_guide,
    managed_blocks,
    parse_markdown,
    place_block,
    serve_commands,
    unbalanced_fences,
)
from bot.yamlio.yaml12 import load_yaml

RECIPE = """\
meta:
  title: Demo  # a comment that must survive
model:
  hf_id: org/Demo
guide: |
  ## Overview

  Demo model.

  ## Launching the Server

  ### AMD MI355X (TP8)

  ```bash
  export VLLM_ROCM_USE_AITER=1
  vllm serve org/Demo \\
    --tensor-parallel-size 8 \\
    --port "${PORT:-8000}" \\
    --max-model-len "$MAX_MODEL_LEN"
  ```

  ### NVIDIA H200

  ```bash
  VLLM_FOO=1 vllm serve org/Demo --tensor-parallel-size 8
  ```

  ## Troubleshooting

  - none
"""

BODY = ["### Benchmark reproduction", "", "```bash", "vllm serve org/Demo \\", "  -tp 4", "```"]


def test_locate_maps_lines_one_to_one() -> None:
    guide = locate_guide(RECIPE)
    assert guide is not None
    assert guide.indent == "  "
    assert guide.markdown == load_yaml(RECIPE, "r")["guide"]
    assert guide.file_line(0) == 6  # "## Overview"


def test_folded_guide_is_refused() -> None:
    with pytest.raises(GuideError, match="literal block scalar"):
        locate_guide("guide: >\n  text\n", "x.yaml")


def test_serve_commands_with_exports_headings_and_placeholders() -> None:
    guide = locate_guide(RECIPE)
    assert guide is not None
    found = serve_commands(guide.markdown)
    assert [c.context() for c in found] == [
        "Launching the Server / AMD MI355X (TP8)",
        "Launching the Server / NVIDIA H200",
    ]
    amd, nvidia = found
    assert amd.argv[:5] == ("vllm", "serve", "org/Demo", "--tensor-parallel-size", "8")
    assert dict(amd.env) == {"VLLM_ROCM_USE_AITER": "1"}
    assert amd.placeholders == ("--port", "--max-model-len")
    assert dict(nvidia.env) == {"VLLM_FOO": "1"}  # the prefix, not the other section's export
    assert amd.managed is None


def test_insert_after_the_hardware_section_keeps_every_other_byte() -> None:
    edit = place_block(RECIPE, "reproduction", "default.mi355x.fixed", BODY, after=["mi355x"])
    assert edit.action == "inserted"
    assert "AMD MI355X" in edit.where
    before, after = RECIPE.splitlines(keepends=True), edit.text.splitlines(keepends=True)
    added = len(after) - len(before)
    start = next(i for i, line in enumerate(after) if "recipe-sync:reproduction" in line)
    assert after[:start] == before[:start]
    assert after[start + added :] == before[start:]
    assert after[start - 1] == "\n" and after[start + added - 1] == "\n"
    data = load_yaml(edit.text, "r")
    assert {k: v for k, v in data.items() if k != "guide"} == {
        k: v for k, v in load_yaml(RECIPE, "r").items() if k != "guide"
    }
    guide = data["guide"]
    assert guide.index("recipe-sync:reproduction") < guide.index("### NVIDIA H200")
    assert not unbalanced_fences(guide)
    # the marker is an HTML block (renders invisibly), the body a heading + fence
    kinds = [t.type for t in parse_markdown(guide)]
    assert "html_block" in kinds


def test_no_matching_section_goes_before_troubleshooting_then_update_touches_only_the_block() -> (
    None
):
    first = place_block(RECIPE, "reproduction", "x", BODY, after=["gb300"])
    assert first.where.startswith("before")
    guide = load_yaml(first.text, "r")["guide"]
    assert guide.index("recipe-sync:reproduction") < guide.index("## Troubleshooting")
    again = place_block(first.text, "reproduction", "x", BODY, after=["gb300"])
    assert again.action == "unchanged" and again.text == first.text
    body2 = [*BODY[:-2], "  -tp 8", "```"]
    second = place_block(first.text, "reproduction", "x", body2, after=["gb300"])
    assert second.action == "updated"
    old, new = first.text.splitlines(), second.text.splitlines()
    assert len(old) == len(new)
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert [new[i] for i in changed] == ["    -tp 8"]
    blocks = managed_blocks(load_yaml(second.text, "r")["guide"].splitlines())
    assert [(b.kind, b.id) for b in blocks] == [("reproduction", "x")]


def test_end_of_guide_and_of_file_without_newline() -> None:
    text = "model:\n  hf_id: a/b\nguide: |-\n  ## Overview\n\n  Text."
    edit = place_block(text, "reproduction", "y", BODY)
    assert edit.where == "at the end of the guide"
    assert edit.text.startswith("model:\n  hf_id: a/b\nguide: |-\n  ## Overview\n\n  Text.\n\n")
    assert not edit.text.endswith("\n")
    assert load_yaml(edit.text, "r")["guide"].endswith("<!-- /recipe-sync -->")


def test_adopting_a_hand_written_section_replaces_it_in_place() -> None:
    guide = locate_guide(RECIPE)
    assert guide is not None
    start = guide.lines.index("### AMD MI355X (TP8)")
    end = guide.lines.index("### NVIDIA H200")
    edit = place_block(RECIPE, "reproduction", "z", BODY, replace_lines=(start, end))
    assert edit.action == "adopted"
    new_guide = load_yaml(edit.text, "r")["guide"]
    assert "### AMD MI355X (TP8)" not in new_guide
    assert new_guide.index("recipe-sync:reproduction") < new_guide.index("### NVIDIA H200")

# ruff: noqa: E501  (expected messages are compared whole)
"""Edits that cannot apply fail with one line naming file, line, path and reason."""

from __future__ import annotations

import pytest

from bot.errors import RecipeSyncError
from bot.recipes.edit import (
    AppendItems,
    Edit,
    EditError,
    EnsurePath,
    InsertItems,
    InsertKey,
    RemoveItems,
    SetComment,
    SetScalar,
    apply_edits,
)

RECIPE = """meta:
  hardware:
    h200: verified
model:
  base_args:
    - "--x"
base: &shared
  k: 1
uses: *shared
inline: {a: 1}
"""


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            SetScalar("meta.hardware.b200", "verified"),
            "r.yaml:2: key 'meta.hardware.b200': no key 'b200' in this mapping",
        ),
        (
            SetScalar("meta.hardware.h200.x", 1),
            "r.yaml:3: key 'meta.hardware.h200.x': path goes through a scalar where a mapping key was expected",
        ),
        (
            SetScalar("model.base_args[4]", "y"),
            "r.yaml:5: key 'model.base_args[4]': index 4 is out of range (the sequence has 1 item)",
        ),
        (
            SetScalar("model.base_args.x", "y"),
            "r.yaml:5: key 'model.base_args.x': path goes through a sequence where a mapping key was expected",
        ),
        (
            SetScalar("meta.hardware", "y"),
            "r.yaml:2: key 'meta.hardware': is a mapping, not a scalar",
        ),
        (
            InsertKey("meta.hardware", "h200", "x"),
            "r.yaml:3: key 'meta.hardware.h200': key already exists",
        ),
        (
            InsertKey("meta.hardware", "b200", "x", after="gb200"),
            "r.yaml:2: key 'meta.hardware.b200': no sibling key 'gb200' to insert next to",
        ),
        (
            InsertKey("model.base_args", "k", 1),
            "r.yaml:5: key 'model.base_args.k': cannot add a key: the parent is a sequence, not a mapping",
        ),
        (
            InsertKey("inline", "b", 2, comment="why"),
            "r.yaml:10: key 'inline.b': comments cannot be added inside a flow mapping",
        ),
        (
            EnsurePath("meta.hardware.h200", "unverified"),
            "r.yaml:3: key 'meta.hardware.h200': already exists with a different value (EnsurePath only creates; use SetScalar / InsertItems / RemoveItems to change it)",
        ),
        (
            EnsurePath("model.new[0].x", 1),
            "r.yaml:4: key 'model.new[0].x': EnsurePath creates mappings only; a missing sequence item cannot be created",
        ),
        (AppendItems("meta.hardware", ["x"]), "r.yaml:2: key 'meta.hardware': is not a sequence"),
        (
            InsertItems("model.base_args", 3, ["x"]),
            "r.yaml:5: key 'model.base_args': cannot insert at index 3: the sequence has 1 item",
        ),
        (
            RemoveItems("model.base_args", 0, 2),
            "r.yaml:5: key 'model.base_args': cannot remove items 0..1: the sequence has 1 item",
        ),
        (
            SetScalar("uses.k", 2),
            "r.yaml:9: key 'uses': refusing to edit through the anchor/alias 'shared' (it is shared); edit the recipe by hand",
        ),
        (
            InsertKey("base", "j", 2),
            "r.yaml:7: key 'base': refusing to edit through the anchor/alias 'shared' (it is shared); edit the recipe by hand",
        ),
        (
            SetComment("inline.a", "x"),
            "r.yaml:10: key 'inline.a': comments cannot be set inside a flow collection",
        ),
    ],
)
def test_located_one_line_errors(edit: Edit, message: str) -> None:
    with pytest.raises(EditError) as caught:
        apply_edits(RECIPE, [edit], file="r.yaml")
    assert str(caught.value) == message
    assert isinstance(caught.value, RecipeSyncError)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"a: 1\nb: caf\xe9\n", "r.yaml:2: file is not UTF-8 (byte 11)"),
        ("a: [1\nb: 2\n", "r.yaml:2: malformed YAML: expected ',' or ']', but got ':'"),
        (
            "a: 1\na: 2\n",
            'r.yaml:2: malformed YAML: found duplicate key "a" with value "2" (original value: "1")',
        ),
        ("- a\n- b\n", "r.yaml: a recipe must be a YAML mapping at the top level"),
    ],
)
def test_bad_input_files(text: str | bytes, message: str) -> None:
    with pytest.raises(EditError) as caught:
        apply_edits(text, [SetScalar("a", 3)], file="r.yaml")
    assert str(caught.value) == message


def test_a_failing_edit_leaves_nothing_half_done() -> None:
    # The first edit is fine, the second fails: the caller gets an error, not a text.
    with pytest.raises(EditError):
        apply_edits(RECIPE, [SetScalar("meta.hardware.h200", "x"), SetScalar("nope", 1)])


def test_bad_comment_text_is_refused_when_building_the_edit() -> None:
    with pytest.raises(ValueError, match="printable text on one line"):
        InsertKey("meta", "k", 1, comment=["ok", "bad\x07bell"])


def test_messages_stay_on_one_line() -> None:
    error = EditError("f.yaml", "a.b", "first line\n  second line", 3)
    assert str(error) == "f.yaml:3: key 'a.b': first line second line"


def test_scalar_that_yaml_readers_misparse_is_quoted() -> None:
    # ruamel and PyYAML resolve a plain `._` as a float and then fail converting it
    from bot.recipes.edit import InsertItems

    result = apply_edits(
        "meta:\n  tasks:\n    - text\n", [InsertItems(("meta", "tasks"), 0, ("._",))]
    )
    assert result.text == 'meta:\n  tasks:\n    - "._"\n    - text\n'


def test_plain_scalar_that_breaks_the_float_resolver_is_a_located_error() -> None:
    from bot.recipes.edit import SetScalar

    with pytest.raises(EditError, match="unreadable YAML scalar"):
        apply_edits("a: ._\nb: 1\n", [SetScalar(("b",), 2)], file="r.yaml")

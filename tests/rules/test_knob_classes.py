"""One table says what a knob class means (bot/rules/knobs.py KNOB_CLASSES): every class of
rules/knobs.yaml has a spec, and every place that groups by class reads it."""

from __future__ import annotations

import pytest

from bot.align.compare import DRIFT_CLASSES
from bot.align.reproduction.blocks import command_text
from bot.align.reproduction.model import ReproCommand, ReproSection
from bot.rules import load_rules
from bot.rules.knobs import KNOB_CLASSES, KNOB_SPECS, KnobClass, KnobClassSpec, KnobPolicy


def test_every_class_has_one_spec() -> None:
    assert [spec.cls for spec in KNOB_CLASSES] == list(KNOB_SPECS)
    assert set(KNOB_SPECS) == set(KnobClass)
    knobs = load_rules().knobs
    for cls in (*knobs.classes, *knobs.flags, *knobs.env):
        assert cls in KNOB_SPECS, f"rules/knobs.yaml class {cls} has no KnobClassSpec"


def test_the_policy_defaults_are_the_table_s() -> None:
    policy = KnobPolicy()
    for spec in KNOB_CLASSES:
        assert policy.action(spec.cls) == spec.action


def test_drift_is_what_the_table_says() -> None:
    assert {KnobClass.KERNEL, KnobClass.SERVING, KnobClass.ACCURACY} <= DRIFT_CLASSES
    assert KnobClass.UNCLASSIFIED in DRIFT_CLASSES  # nobody said it is harmless
    assert not DRIFT_CLASSES & {KnobClass.TUNING, KnobClass.WORKLOAD, KnobClass.HARNESS}


def _command(cls: str) -> ReproCommand:
    return ReproCommand(
        topology="TP1",
        arm="throughput arms",
        env=((cls, "SOME_VARIABLE", "1"),),
        lines=(),
        router=None,
        conc_rules=(),
        concs=(4,),
        dropped_synthetic=(),
        deltas=((cls, "Add `--some-flag 1`."),),
        harness_left_out=(),
    )


def _section(command: ReproCommand) -> ReproSection:
    return ReproSection(
        block_id="b", recipe_path="models/m.yaml", variant="default", hardware="h100",
        scenario="fixed-seq-len", keys=("k",), heading="Reproduce", image="vllm:1",
        commands=(command,), evidence=(), after=(), bench_ref="o/n#1", bench_url=None,
        head_sha="", recipe_label="h100",
    )  # fmt: skip


@pytest.mark.parametrize("spec", KNOB_CLASSES, ids=lambda s: s.cls.value)
def test_a_reproduction_block_writes_every_class_it_reproduces(spec: KnobClassSpec) -> None:
    """A class the blocks' groups miss used to vanish from the section without a word."""
    command = _command(spec.cls)
    text = "\n".join(command_text(_section(command), command))
    if spec.group is None:
        assert "SOME_VARIABLE" not in text and "--some-flag" not in text
    else:
        assert "export SOME_VARIABLE=1" in text and f"# {spec.heading}" in text
        assert "Add `--some-flag 1`." in text

"""Multi-node vLLM keys of the real master configs: framework family and reason text."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.benchmarks.scope import multinode_reason, serves_vllm
from bot.commands.main import main


def worker(*settings: str) -> dict[str, object]:
    return {"num-worker": 1, "tp": 8, "additional-settings": list(settings)}


def entry(prefill: dict[str, object], decode: dict[str, object]) -> dict[str, object]:
    space = {"conc-list": [4], "prefill": prefill, "decode": decode}
    return {"scenarios": {"fixed-seq-len": [{"isl": 1024, "osl": 1024, "search-space": [space]}]}}


def test_vllm_family_frameworks() -> None:
    assert all(serves_vllm(f) for f in ("vllm", "dynamo-vllm", "vllm-disagg", "llmd-vllm"))
    assert not any(serves_vllm(f) for f in ("sglang", "dynamo-sglang", "trt", "atom-disagg"))
    assert not serves_vllm("vllmx")


def test_recipe_file_is_named() -> None:
    raw = entry(worker("CONFIG_FILE=recipes/acme/foo-1p1d.yaml"), worker())
    assert multinode_reason("dynamo-vllm", raw) == (
        "multi-node dynamo-vllm: its serve commands are rendered from the recipe "
        "CONFIG_FILE=recipes/acme/foo-1p1d.yaml (srt-slurm / llm-d), not by a single-node script"
    )


def test_several_recipe_files_are_counted() -> None:
    raw = entry(worker("PREFILL_NODES=2", "CONFIG_FILE=a.yaml"), worker("CONFIG_FILE=b.yaml"))
    assert "CONFIG_FILE=a.yaml and 1 more" in multinode_reason("llmd-vllm", raw)


def test_launcher_settings_without_a_recipe() -> None:
    raw = entry(worker("PREFILL_NODES=1"), worker("DECODE_NODES=2", "DECODE_MTP_SIZE=0"))
    assert multinode_reason("vllm-disagg", raw) == (
        "multi-node vllm-disagg: started by the multi-node launcher from per-worker settings "
        "(PREFILL_NODES=1, DECODE_NODES=2, DECODE_MTP_SIZE=0), not by a single-node script"
    )


def test_odd_shapes_do_not_crash() -> None:
    for raw in (None, {}, {"scenarios": []}, {"scenarios": {"x": [{"search-space": 3}]}}):
        assert (
            multinode_reason("vllm", raw) == "multi-node vllm: not started by a single-node script"
        )


MULTINODE_CONFIG = """\
acme7b-fp4-gb999-dynamo-vllm:
  image: vllm/vllm-openai:v0.0.1
  model: acme/Acme-7B
  model-prefix: acme7b
  runner: gb999
  precision: fp4
  framework: dynamo-vllm
  kv-p2p-transfer: nixl
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - conc-list: [4]
        prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true,
                  additional-settings: ["CONFIG_FILE=recipes/acme/1p1d.yaml"]}
        decode: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}
"""


def test_extract_cli_names_the_multinode_recipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "nvidia-master.yaml").write_text(MULTINODE_CONFIG)
    argv = ["extract", "--bench-repo", str(tmp_path), "--config-key"]
    assert main([*argv, "acme7b-fp4-gb999-dynamo-vllm"]) == 2
    err = capsys.readouterr().err
    assert "no point matches" not in err
    assert "multi-node dynamo-vllm: its serve commands are rendered from the recipe " in err
    assert "CONFIG_FILE=recipes/acme/1p1d.yaml" in err


def test_audit_group_reason_is_general_when_keys_differ() -> None:
    from bot.audit.model import AuditReport, OutOfScope

    def item(key: str, reason: str) -> OutOfScope:
        return OutOfScope(key, "configs/x.yaml", 1, "dynamo-vllm", "multinode", reason)

    report = AuditReport(
        bench_label="b",
        recipes_label="r",
        rows=(),
        out_of_scope=(
            item("a", "multi-node dynamo-vllm: A"),
            item("b", "multi-node dynamo-vllm: B"),
        ),
    )
    assert report.out_of_scope_reasons() == {
        "multi-node dynamo-vllm": "multi-node dynamo-vllm: serve commands come from each key's "
        "recipe file or the multi-node launcher, not from a single-node script"
    }
    single = AuditReport(
        bench_label="b", recipes_label="r", rows=(), out_of_scope=(item("a", "only"),)
    )
    assert single.out_of_scope_reasons() == {"multi-node dynamo-vllm": "only"}

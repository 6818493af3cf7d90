"""Credentials a benchmark script spells out are never printed: ``***`` in every text."""

from __future__ import annotations

import json
from pathlib import Path

from bot.present.secrets import Masker, credential_values
from tests.seed_cli import AlignCli, commit_edit

SCRIPT = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"
SECRETS = ("hf_SuperSecretToken123", "sk-env-key-4242", "sk-flag-key-9999")


def test_credentials_are_masked_in_every_text(align_cli: AlignCli, bench_clone: Path) -> None:
    commit_edit(
        bench_clone,
        SCRIPT,
        "export VLLM_USE_RUST_FRONTEND=1\n",
        "export VLLM_USE_RUST_FRONTEND=1\n"
        f"export HF_TOKEN={SECRETS[0]}\nexport VLLM_API_KEY={SECRETS[1]}\n",
    )
    commit_edit(
        bench_clone,
        SCRIPT,
        "  --disable-uvicorn-access-log\n",
        f"  --disable-uvicorn-access-log\n  --api-key {SECRETS[2]}\n",
    )
    _, out = align_cli(evidence=False, bench=bench_clone, bench_ref="pr")
    texts = {p.name: p.read_text() for p in out.iterdir() if p.suffix in (".md", ".json")}
    assert "comment.md" in texts and "plan.json" in texts
    json.loads(texts["plan.json"])
    shown = "".join(texts.values())
    # the flags are still listed (as front-end / benchmark-only), their values are not
    for masked in ("--api-key ***", "HF_TOKEN=***", "VLLM_API_KEY=***"):
        assert masked in shown
    for name, text in texts.items():
        for secret in SECRETS:
            assert secret not in text, f"{secret} printed in {name}"


def test_credential_values_and_masking() -> None:
    argv = ("vllm", "serve", "m", "--api-key", "abcd1234", "--hf-token=hf_xyz0", "--port", "80")
    env = {"HF_TOKEN": "hf_qwerty", "MAX_NUM_BATCHED_TOKENS": "8192", "X": "<HF_TOKEN:secret>"}
    found = credential_values(argv, {**env, "VLLM_API_KEY": "<VLLM_API_KEY:secret>"})
    assert found == {"abcd1234", "hf_xyz0", "hf_qwerty"}
    mask = Masker(found)
    assert mask("--api-key abcd1234 --x abcd12345 hf_qwerty.") == "--api-key *** --x abcd12345 ***."
    assert Masker(())("unchanged") == "unchanged"

"""deploy/podman.py hands the image build only the pip settings that mean the same inside
the build container: never this machine's paths (its CA bundle travels as its own secret)."""

from __future__ import annotations

import itertools
from pathlib import Path

from deploy.podman import build_command, pip_settings

LISTING = """\
:env:.cert='/etc/ssl/certs/ca-certificates.crt'
:env:.default-timeout='180'
:env:.find-links='/opt/wheels'
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple https://mirror.example/simple'
global.index-url='https://pypi.example/simple'
"""


def test_only_portable_pip_settings_reach_the_build() -> None:
    env = {"PIP_DEFAULT_TIMEOUT": "60", "PIP_FIND_LINKS": "/opt/wheels", "HOME": "/root"}
    assert pip_settings(LISTING, env) == (
        "[global]\n"
        "default-timeout = 60\n"  # the environment wins, as in pip
        "extra-index-url = https://mirror.example/simple\n"  # a local file: index is dropped
        "index-url = https://pypi.example/simple\n"
    )


def test_nothing_to_pass_is_an_empty_section() -> None:
    assert pip_settings("", {}) == "[global]\n"


def test_the_build_gets_its_secrets_and_keeps_the_healthcheck(tmp_path: Path) -> None:
    command = build_command("t", Path("/ca.pem"), tmp_path / "pip.conf")
    assert f"--secret=id=pip-conf,src={tmp_path / 'pip.conf'}" in command
    assert "--secret=id=ca-bundle,src=/ca.pem" in command
    assert "--format=docker" in command  # an OCI image would drop the HEALTHCHECK
    build_args = [b for a, b in itertools.pairwise(command) if a == "--build-arg"]
    assert build_args == ["BASE=debian:bookworm-slim"]  # nothing of pip's in the image history

"""Build the recipe-sync image with Podman on a machine that reaches package registries but
no image registry (``make image-smoke``; docs/deploy.md "Without an image registry").

* The ``debian:bookworm-slim`` base is made locally: ``debootstrap --variant=minbase
  bookworm`` piped into ``podman import`` (about a minute, once per machine).
* Podman runs with ``runc``, the ``cgroupfs`` cgroup manager and no default ulimits (a
  ``CONTAINERS_CONF`` file of its own), and host networking, so it works inside a VM or a
  container without systemd.
* The build's package downloads get this machine's CA bundle and pip settings as build
  secrets: visible to the install step only, never stored in a layer of the image.

    python -m deploy.podman build [--tag recipe-sync:smoke]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = "debian:bookworm-slim"
MIRROR = "http://deb.debian.org/debian"
TOOLS = ("podman", "runc", "debootstrap")
CONTAINERS_CONF = """\
# recipe-sync's Podman settings (deploy/podman.py): no systemd, no cgroup delegation and
# no raisable ulimits are needed
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
"""
# pip settings that mean the same inside the build container; paths of this machine
# (cert, constraint, find-links, local indexes) do not, and the CA bundle is its own secret
_PORTABLE = {"index-url", "extra-index-url", "trusted-host", "timeout", "default-timeout",
             "retries", "proxy", "no-input", "disable-pip-version-check"}  # fmt: skip
CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def podman_env(workdir: Path) -> dict[str, str]:
    """The environment every podman call runs with: our ``CONTAINERS_CONF``."""
    conf = workdir / "containers.conf"
    conf.write_text(CONTAINERS_CONF, encoding="utf-8")
    return {**os.environ, "CONTAINERS_CONF": str(conf)}


def podman(
    env: Mapping[str, str], *args: str, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], env=dict(env), text=True, check=True, **kwargs)  # type: ignore[call-overload]


def has_image(env: Mapping[str, str], name: str) -> bool:
    found = subprocess.run(
        ["podman", "image", "exists", name], env=dict(env), capture_output=True, check=False
    )
    return found.returncode == 0


def ensure_base(env: Mapping[str, str], workdir: Path, name: str = BASE) -> None:
    """``name`` in local storage: debootstrap's minimal bookworm, imported as an image."""
    if has_image(env, name):
        return
    rootfs = workdir / "rootfs"
    subprocess.run(
        ["debootstrap", "--variant=minbase", "bookworm", str(rootfs), MIRROR],
        check=True,
        capture_output=True,
    )
    slim(rootfs)
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    try:
        podman(env, "import", "-", name, stdin=tar.stdout, capture_output=True)
    finally:
        assert tar.stdout is not None
        tar.stdout.close()
        tar.wait()
    shutil.rmtree(rootfs)


# what the official slim images leave out: docs, man pages, translations (dpkg keeps
# leaving them out of every package installed later), and debootstrap's downloads
SLIM_DPKG = """\
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
"""


def slim(rootfs: Path) -> None:
    (rootfs / "etc/dpkg/dpkg.cfg.d/slim").write_text(SLIM_DPKG, encoding="utf-8")
    for pattern in ("var/cache/apt/archives/*.deb", "var/lib/apt/lists/*", "usr/share/man/*",
                    "usr/share/info/*", "usr/share/locale/*"):  # fmt: skip
        for path in rootfs.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    for doc in (rootfs / "usr/share/doc").glob("*/*"):
        if doc.name != "copyright" and not doc.is_dir():
            doc.unlink()


def pip_settings(listing: str, environ: Mapping[str, str]) -> str:
    """A pip.conf for the build from ``pip config list`` and ``PIP_*`` variables: the
    portable settings only (the environment wins, as in pip)."""
    values: dict[str, str] = {}
    for line in listing.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        name = key.rsplit(".", 1)[-1]
        if name in _PORTABLE:
            values[name] = value.strip().strip("'\"")
    for key, value in environ.items():
        if key.startswith("PIP_"):
            name = key[4:].lower().replace("_", "-")
            if name in _PORTABLE:
                values[name] = value
    remote = {
        k: " ".join(u for u in v.split() if not u.startswith("file:"))
        if k.endswith("index-url")
        else v
        for k, v in values.items()
    }
    lines = ["[global]", *(f"{k} = {v}" for k, v in sorted(remote.items()) if v)]
    return "\n".join(lines) + "\n"


def ca_bundle(environ: Mapping[str, str]) -> Path | None:
    for candidate in (
        environ.get("PIP_CERT"),
        environ.get("REQUESTS_CA_BUNDLE"),
        environ.get("SSL_CERT_FILE"),
        *CA_BUNDLES,
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def build_command(tag: str, ca: Path | None, pip_conf: Path) -> list[str]:
    secrets = [f"--secret=id=pip-conf,src={pip_conf}"]
    if ca is not None:
        secrets.append(f"--secret=id=ca-bundle,src={ca}")
    return [
        "build",
        "--format=docker",  # OCI images have no HEALTHCHECK
        "--network=host",
        "--runtime=runc",
        "--build-arg",
        f"BASE={BASE}",
        *secrets,
        "--tag",
        tag,
        "--file",
        str(ROOT / "Dockerfile"),
        str(ROOT),
    ]


def build(tag: str, workdir: Path) -> None:
    env = podman_env(workdir)
    ensure_base(env, workdir)
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    ).stdout
    pip_conf = workdir / "pip.conf"
    pip_conf.write_text(pip_settings(listing, os.environ), encoding="utf-8")
    command = build_command(tag, ca_bundle(os.environ), pip_conf)
    print("+ podman " + shlex.join(command), file=sys.stderr)
    podman(env, *command)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.podman", description=__doc__)
    parser.add_argument("action", choices=["build"])
    parser.add_argument("--tag", default="recipe-sync:smoke")
    args = parser.parse_args(argv)
    if missing_tools():
        print(f"missing: {', '.join(missing_tools())} (apt-get install them)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="recipe-sync-podman-") as scratch:
        build(args.tag, Path(scratch))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How commands the evaluator does not run are treated: their kind and what that may affect."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.shell.result import Unresolved


def _names(text: str) -> list[str]:
    return text.split()


@dataclass(frozen=True)
class Effect:
    category: str
    note: str  # what skipping it means (an assumption when run for its effect)
    status: int | None  # exit status assumed (None: unknown, conditions on it are undecidable)
    kind: str = "a command"  # for "the output of … is only known at run time"


_INSTALL = Effect(
    "package-install",
    "package installation skipped, assumed to succeed (it could change the installed engine "
    "version and its defaults)",
    0,
    "a package installer",
)
_DOWNLOAD = Effect(
    "download",
    "download skipped, assumed to complete (it does not change the launch argv)",
    0,
    "a download",
)
_SOURCE_EDIT = Effect(
    "source-edit",
    "edit of installed code skipped, assumed to succeed (it could patch the engine in place)",
    0,
    "a build or source-editing tool",
)
# a patch applied to files in place (`patch`, `git apply`, `git am`): in a benchmark container
# that is the installed engine or its kernels, so the lane did not run the image as published
_PATCH = Effect(
    "engine-patch",
    "patch applied to installed code skipped, assumed to succeed (the launch then runs a "
    "patched engine, not the image as published)",
    0,
    "a patch tool",
)
_PYTHON = Effect(
    "python",
    "Python code not executed, assumed to succeed (it could patch the engine, write files or "
    "print values)",
    0,
    "Python code (never executed statically)",
)
_SYSTEM = Effect(
    "system", "system administration command skipped, assumed to succeed", 0, "a system command"
)
_PROBE = Effect("host-probe", "host probe not run", None, "a host probe")
_NOOP = Effect("no-op", "", 0)

_BY_NAME: dict[str, Effect] = {
    **dict.fromkeys(_names("pip pip3 uv conda mamba micromamba"), _INSTALL),
    **dict.fromkeys(_names("hf huggingface-cli curl wget aria2c rsync scp"), _DOWNLOAD),
    **dict.fromkeys(_names("git make cmake ninja gcc g++ nvcc"), _SOURCE_EDIT),
    "patch": _PATCH,
    **dict.fromkeys(
        _names(
            "apt-get apt yum dnf apk sudo systemctl modprobe docker enroot srun salloc sbatch "
            "scancel squeue scontrol ldconfig setfacl flock"
        ),
        _SYSTEM,
    ),
    **dict.fromkeys(
        _names(
            "nvidia-smi rocm-smi amd-smi rocminfo lspci ibv_devinfo ibstat nproc hostname date "
            "df du free uname id whoami ls find stat ps pgrep lsof ss netstat ip mktemp "
            "sha256sum md5sum jq awk sed xargs readlink realpath getent numastat lscpu env "
            "printenv file which type hash"
        ),
        _PROBE,
    ),
    **dict.fromkeys(
        _names(
            "sleep wait kill pkill killall trap shopt ulimit umask ln chmod chown sync alias "
            "unalias jobs disown set tput clear logger nvidia-cuda-mps-control mv cp rm touch "
            "mkdir rmdir tee cd pushd popd exit"
        ),
        _NOOP,
    ),
}


def classify(argv: Sequence[str]) -> Effect | None:
    """The effect of an unevaluated command, None when it is not known at all."""
    if not argv:
        return None
    name = argv[0].rsplit("/", 1)[-1]
    if re.fullmatch(r"python(\d+(\.\d+)?)?", name):
        if len(argv) > 2 and argv[1] == "-m" and argv[2] in ("pip", "uv"):
            return _INSTALL
        if len(argv) > 2 and argv[1] == "-m" and argv[2] in ("huggingface_hub", "hf"):
            return _DOWNLOAD
        return _PYTHON
    if name == "sed" and any(a == "-i" or a.startswith("-i") for a in argv[1:]):
        return _SOURCE_EDIT
    if name in ("bash", "sh") and len(argv) > 1:
        return _SOURCE_EDIT
    if name == "git" and len(argv) > 1 and argv[1] in ("status", "rev-parse", "log", "diff"):
        return _PROBE
    if name == "git" and len(argv) > 1 and argv[1] in ("apply", "am"):
        return _PATCH
    return _BY_NAME.get(name)


def patches_engine(item: Unresolved) -> bool:
    """Is ``item`` the assumption that a patch was applied in place before the launch?"""
    return item.why == _PATCH.note

"""A launch side read from a JSON file (``recipe-sync diff --bench-json/--recipe-json``):
what ``recipe-sync extract`` or ``render`` wrote, or a plain object, checked with located
errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.errors import InputError, Location
from bot.vllm.diff_report import LaunchSide
from bot.vllm.normalise import split_launch_line


def _load_json(path: Path) -> Any:
    name = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(Location(name), f"cannot read file: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise InputError(Location(name), "file is not UTF-8") from err
    except json.JSONDecodeError as err:
        raise InputError(Location(name, line=err.lineno), f"malformed JSON: {err.msg}") from err
    return _launch(data, name)


def _launch(data: Any, name: str) -> dict[str, Any]:
    """The {argv, env, image[, config_files]} of extract's or render's JSON (else ``data``)."""
    if isinstance(data, list) and all(isinstance(item, dict) for item in data):
        # recipe-sync extract --config-key …: one object per point
        if len(data) != 1:
            raise InputError(
                Location(name),
                f"holds {len(data)} launch lines; narrow `recipe-sync extract` to one with "
                "--point and --arm",
            )
        data = data[0]
    if not isinstance(data, dict):
        raise InputError(Location(name), "expected a JSON object with argv, env and image")
    if "commands" in data and "recipe_path" in data:  # recipe-sync render --format json
        commands = data["commands"]
        if not isinstance(commands, list) or len(commands) != 1:
            roles = [c.get("role") for c in commands] if isinstance(commands, list) else []
            raise InputError(
                Location(name, "commands"),
                f"a rendering with {len(roles)} commands ({', '.join(map(str, roles))}); "
                "diff compares one",
            )
        command = commands[0]
        return {
            "argv": command.get("argv"),
            "env": command.get("env", {}),
            "image": data.get("image"),
        }
    if "argv_sources" in data:  # recipe-sync extract (a launch line or a script result)
        if data.get("status") not in (None, "launched"):
            why = data.get("reason") or data.get("invalid") or data.get("status")
            raise InputError(Location(name, "status"), f"no launch to compare: {why}")
        files = data.get("files") or {}
        return {
            "argv": data.get("argv"),
            "env": data.get("env", {}),
            "image": data.get("image"),
            "config_files": files if isinstance(files, dict) else {},
        }
    return data


def read_side(path: Path) -> tuple[LaunchSide, str | None]:
    """One side of a diff and its minimum vLLM version, from a JSON file: ``recipe-sync
    extract``'s or ``render``'s output, or a plain {argv | command, env, image, …} object."""
    data = _load_json(path)
    name = str(path)
    unknown = set(data) - {"argv", "command", "env", "image", "min_vllm_version", "config_files"}
    if unknown:
        raise InputError(Location(name, sorted(unknown)[0]), "unknown key")
    env: dict[str, str] = {}
    if "command" in data and "argv" not in data:
        if not isinstance(data["command"], str):
            raise InputError(Location(name, "command"), "expected a string")
        env, argv = split_launch_line(data["command"])
    else:
        raw_argv = data.get("argv")
        if not isinstance(raw_argv, list) or not all(isinstance(t, str) for t in raw_argv):
            raise InputError(Location(name, "argv"), "expected a list of strings")
        argv = tuple(raw_argv)
    raw_env = data.get("env", {})
    if not isinstance(raw_env, dict) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) for k, v in raw_env.items()
    ):
        raise InputError(Location(name, "env"), "expected an object of string values")
    env.update({k: str(v) for k, v in raw_env.items()})
    image = data.get("image")
    if image is not None and not isinstance(image, str):
        raise InputError(Location(name, "image"), "expected a string or null")
    configs = data.get("config_files", {})
    if not isinstance(configs, dict) or not all(isinstance(v, str) for v in configs.values()):
        raise InputError(Location(name, "config_files"), "expected an object of YAML texts")
    min_version = data.get("min_vllm_version")
    if min_version is not None and not isinstance(min_version, str):
        raise InputError(Location(name, "min_vllm_version"), "expected a string")
    return LaunchSide(argv, env, image, configs), min_version

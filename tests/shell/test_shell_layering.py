"""bot.shell is a generic interpreter: no import cycles, no lazy imports, nothing of benchmarks."""

from __future__ import annotations

import ast
from pathlib import Path

SHELL = Path(__file__).resolve().parents[2] / "bot" / "shell"


def _imports() -> dict[str, list[tuple[str, int]]]:
    """Module → (in-repo module imported, column) for every import statement, lazy or not."""
    out: dict[str, list[tuple[str, int]]] = {}
    for path in sorted(SHELL.glob("*.py")):
        found: list[tuple[str, int]] = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bot"):
                found += [(node.module, node.col_offset)]
                found += [(f"{node.module}.{a.name}", node.col_offset) for a in node.names]
            elif isinstance(node, ast.Import):
                found += [(a.name, node.col_offset) for a in node.names if a.name.startswith("bot")]
        out[f"bot.shell.{path.stem}"] = found
    return out


def test_no_lazy_imports_and_nothing_of_benchmarks() -> None:
    for module, found in _imports().items():
        for target, column in found:
            assert column == 0, f"{module} imports {target} inside a function"
            assert not target.startswith("bot.benchmarks"), f"{module} imports {target}"
        assert "importlib" not in (SHELL / f"{module.rsplit('.', 1)[1]}.py").read_text()


def test_no_import_cycles() -> None:
    imports = _imports()
    graph = {
        module: {t for t, _ in found if t in imports and not t.endswith("__init__")}
        for module, found in imports.items()
        if not module.endswith("__init__")
    }
    state: dict[str, int] = {}

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        for dep in sorted(graph[module]):
            assert state.get(dep) != 1, f"import cycle: {[*stack, module, dep]}"
            if dep not in state:
                visit(dep, [*stack, module])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])

"""The engine's import graph: no module imports, even inside a function, one that imports it back.

A cycle hidden in a function import (as ``shards`` once reached ``sitebuild``) still ties the two
modules together: neither can be read, tested or moved without the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jaxcourse

ENGINE = Path(jaxcourse.__file__).parent


def _imports(path: Path) -> set[str]:
    """The engine's modules that ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module.split(".")[0]} if node.module else {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jaxcourse."):
            found.add(node.module.split(".")[1])
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {path.stem: path for path in ENGINE.glob("*.py")}
    return {name: (_imports(path) & modules.keys()) - {name} for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import path that leads from a module back to itself, each found once, from its first module."""
    found: list[list[str]] = []

    def walk(path: list[str]) -> None:
        for target in sorted(graph[path[-1]]):
            if target == path[0]:
                found.append(path)
            elif target > path[0] and target not in path:
                walk([*path, target])

    for start in sorted(graph):
        walk([start])
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_function_import(tmp_path):
    (tmp_path / "a.py").write_text("from . import b\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("def f():\n    from .a import g\n", encoding="utf-8")
    graph = {path.stem: _imports(path) for path in tmp_path.glob("*.py")}
    assert cycles(graph) == [["a", "b"]]


def test_the_engine_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) == len(list(ENGINE.glob("*.py")))
    assert cycles(graph) == []

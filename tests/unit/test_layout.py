"""The engine's layout: stage subpackages whose imports go one way, and no module cycle anywhere.

A cycle hidden in a function import (as ``shards`` once reached ``sitebuild``) still ties two modules
together: neither can be read, tested or moved without the other. So imports inside functions count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jaxcourse

ENGINE = Path(jaxcourse.__file__).parent
#: The pipeline, first stage first: a module imports only from its own stage and the stages before it.
#: The extension's ``setup`` (the package's top level) wires them all together.
STAGES = ["runtime", "source", "output", "execution", "published", "tools"]


def module_name(path: Path, root: Path = ENGINE) -> str:
    """'source.reader' for source/reader.py, 'runtime' for runtime/__init__.py."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path = ENGINE) -> set[str]:
    """The engine's modules that ``path`` imports, at the top or inside a function (dotted, from the root)."""
    name = module_name(path, root)
    package = (name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]) if name else []
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = package[: len(package) - (node.level - 1)]
        module = [*base, *node.module.split(".")] if node.module else base
        found.add(".".join(module))
        found |= {".".join([*module, alias.name]) for alias in node.names}  # `from . import x`: x is a module
    return found


def import_graph(root: Path = ENGINE) -> dict[str, set[str]]:
    files = {module_name(path, root): path for path in root.rglob("*.py")}
    return {name: (imports(path, root) & files.keys()) - {name} for name, path in files.items()}


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
    (tmp_path / "stage").mkdir()
    (tmp_path / "stage" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "a.py").write_text("from .stage import b\n", encoding="utf-8")
    (tmp_path / "stage" / "b.py").write_text("def f():\n    from ..a import g\n", encoding="utf-8")
    assert cycles(import_graph(tmp_path)) == [["a", "stage.b"]]


def test_the_engine_has_no_import_cycle():
    graph = import_graph()
    assert "source.reader" in graph["output.render"]  # the graph sees imports across stages
    assert "extension" in graph[""]  # the package's own setup() counts, though it imports inside a function
    assert cycles(graph) == []


def test_the_private_apis_module_imports_no_other_module_of_the_engine():
    """Every stage may use it, the kernel side included, so it stands on nothing of the engine's."""
    assert import_graph()["privateapi"] == set()
    assert "privateapi" in import_graph()["output.render"]


def test_stages_import_only_their_own_and_earlier_stages():
    backwards = []
    for name, targets in import_graph().items():
        stage = name.split(".")[0]
        if stage not in STAGES:
            continue
        for target in targets:
            other = target.split(".")[0]
            if other in STAGES and STAGES.index(other) > STAGES.index(stage):
                backwards.append(f"{name} -> {target}")
    assert backwards == []


def test_every_module_lives_in_a_stage_and_no_folder_holds_more_than_15():
    folders = {path.parent for path in ENGINE.rglob("*.py")}
    assert {folder.name for folder in folders if folder != ENGINE} == set(STAGES)
    assert sorted(path.name for path in ENGINE.glob("*.py")) == ["__init__.py", "extension.py", "privateapi.py"]
    for folder in folders:
        modules = [path for path in folder.glob("*.py") if path.name != "__init__.py"]
        assert len(modules) <= 15, folder.name

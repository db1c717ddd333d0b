"""The noxfile: the site sessions share one environment, so a second session starts in seconds.

Read from the noxfile's source (nox itself is not installed in the site environment):
every session but `lock` runs with python=False, installs nothing itself, and
reaches its tools through `environment()` / `run()`, whose one default location is
`.nox/site`. `compat` alone adds environments, one per JAX version it tries.
"""

from __future__ import annotations

import ast

import pytest
from conftest import ROOT

SOURCE = (ROOT / "noxfile.py").read_text(encoding="utf-8")
TREE = ast.parse(SOURCE)
#: The sessions the issue names, and the ones added beside them.
SITE_SESSIONS = {"docs", "lesson", "serve", "lint", "new", "bench", "tests", "execute", "port", "compat", "linkcheck"}


def sessions() -> dict[str, ast.FunctionDef]:
    found = {}
    for node in TREE.body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "nox.session":
                    found[node.name] = decorator
    return found


def calls_in(name: str) -> set[str]:
    function = next(node for node in TREE.body if isinstance(node, ast.FunctionDef) and node.name == name)
    return {ast.unparse(node.func) for node in ast.walk(function) if isinstance(node, ast.Call)}


def test_every_site_session_is_there():
    assert SITE_SESSIONS <= set(sessions())


@pytest.mark.parametrize("name", sorted(SITE_SESSIONS))
def test_a_site_session_makes_no_environment_of_its_own(name):
    decorator = sessions()[name]
    keywords = {keyword.arg: ast.unparse(keyword.value) for keyword in decorator.keywords}
    assert keywords.get("python") == "False"
    calls = calls_in(name)
    assert "session.install" not in calls
    assert calls & {"run", "environment", "site_build"}


def test_the_shared_environment_is_one_folder():
    assert 'SITE_ENV = ROOT / ".nox" / "site"' in SOURCE
    environment = next(node for node in TREE.body if isinstance(node, ast.FunctionDef) and node.name == "environment")
    assert ast.unparse(environment.args.defaults[0]) == "SITE_ENV"


def test_every_session_has_a_one_line_docstring():
    for name in sessions():
        function = next(node for node in TREE.body if isinstance(node, ast.FunctionDef) and node.name == name)
        docstring = ast.get_docstring(function)
        assert docstring and "\n" not in docstring, name

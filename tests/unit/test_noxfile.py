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


@pytest.mark.parametrize("name", ["lint", "tests"])
def test_lint_and_tests_fail_on_code_that_ruff_would_reformat(name):
    function = next(node for node in TREE.body if isinstance(node, ast.FunctionDef) and node.name == name)
    assert "RUFF_FORMAT" in ast.unparse(function)
    assert 'RUFF_FORMAT = ["-m", "ruff", "format", "--check", *PYTHON_FILES]' in SOURCE


# --- The shared environment holds exactly the pins ----------------------------------------------------------------


class Session:
    """The part of nox.Session that environment() uses, running its commands for real."""

    def __init__(self):
        self.logged = []

    def log(self, message):
        self.logged.append(message)

    def run(self, *command, external=True, env=None, silent=False):
        import os
        import subprocess

        subprocess.run(command, check=True, capture_output=True, env={**os.environ, **(env or {})})


def wheel(folder, name: str, version: str) -> None:
    """A pure-Python wheel made by hand: one module, and the metadata pip needs."""
    import zipfile

    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": "VALUE = 1\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{dist}/RECORD"] = "".join(f"{path},,\n" for path in [*files, f"{dist}/RECORD"])
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)


def test_a_package_dropped_from_the_pins_leaves_the_environment(tmp_path):
    import sys

    sys.path.insert(0, str(ROOT))
    import noxfile

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for name in ("courseprobe_kept", "courseprobe_dropped"):
        wheel(wheels, name, "1.0")
    # The sync tool and what it needs, at the site's own pins, then two packages of our own.
    site_pins = noxfile.pinned(ROOT / "requirements.txt")
    tooling = ["pip-tools", "build", "click", "pyproject-hooks", "packaging", "pip", "setuptools", "wheel"]
    lines = [f"--find-links {wheels}"] + [f"{name}=={site_pins[name]}" for name in tooling]
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\n".join([*lines, "courseprobe-kept==1.0", "courseprobe-dropped==1.0", ""]))
    location = tmp_path / "env"
    session = Session()
    noxfile.environment(session, location, str(requirements))
    assert noxfile.out_of_sync(location / "bin" / "python", requirements) == []
    assert {"courseprobe-kept", "courseprobe-dropped"} <= set(noxfile.installed(location / "bin" / "python"))
    requirements.write_text("\n".join([*lines, "courseprobe-kept==1.0", ""]))
    noxfile.environment(session, location, str(requirements))
    have = noxfile.installed(location / "bin" / "python")
    assert "courseprobe-kept" in have and "courseprobe-dropped" not in have
    # By hand, behind the pins' back: the next session notices and puts it right, though no file changed.
    session.run(str(location / "bin" / "python"), "-m", "pip", "install", "--no-index", "--find-links", str(wheels),
                "courseprobe-dropped==1.0")  # fmt: skip
    noxfile.environment(session, location, str(requirements))
    assert "courseprobe-dropped" not in noxfile.installed(location / "bin" / "python")
    assert any("courseprobe-dropped 1.0 not pinned" in line for line in session.logged)


class StopAtFirstCommand(Session):
    """Records the first command environment() runs, and stops there: nothing is installed."""

    def run(self, *command, **options):
        self.first_command = command
        raise StopIteration


def test_a_new_interpreter_makes_the_environment_anew(tmp_path, monkeypatch):
    import json
    import sys

    sys.path.insert(0, str(ROOT))
    import noxfile

    location = tmp_path / "env"
    (location / "bin").mkdir(parents=True)
    (location / "bin" / "python").write_text("", encoding="utf-8")
    (location / "left-by-the-old-interpreter").write_text("", encoding="utf-8")
    stamp = {"interpreter": noxfile.interpreter(), "files": "whatever"}
    (location / ".course-requirements").write_text(json.dumps(stamp), encoding="utf-8")
    monkeypatch.setattr(noxfile, "interpreter", lambda: "cpython 3.99.0 /elsewhere/python")
    session = StopAtFirstCommand()
    with pytest.raises(StopIteration):
        noxfile.environment(session, location, str(ROOT / "requirements.txt"))
    assert session.logged[0].startswith("The interpreter changed (cpython 3.")
    assert not (location / "left-by-the-old-interpreter").exists()  # the old environment is gone, all of it
    assert {"venv", "virtualenv"} & set(session.first_command)  # and the first step makes a new one
    assert session.first_command[-1] == str(location)

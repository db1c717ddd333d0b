"""Build small sites in temporary folders, once per module, and hand out their HTML.

A site is a copy of this repository's conf.py and docs/ plus chosen lessons, so
tests never touch the working tree's _build/ or figures/.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from jaxcourse.source import catalogue
from jaxcourse.tools.publishing import sphinx_command

ROOT = Path(__file__).resolve().parent.parent
LESSON_FILES = catalogue.lesson_files(ROOT)
#: The lessons in course order (phase, then order): the home page's and the navigation's order.
COURSE = catalogue.lessons(ROOT)


@dataclasses.dataclass
class Build:
    srcdir: Path
    outdir: Path
    returncode: int
    output: str
    started: float
    finished: float

    def html(self, page: str) -> BeautifulSoup:
        return BeautifulSoup((self.outdir / page).read_text(encoding="utf-8"), "html.parser")


def make_site(root: Path, lessons: dict[str, str] | None = None, copy_lessons: list[Path] | None = None) -> Path:
    """A source tree with the real conf.py and docs/, and the given lessons."""
    srcdir = root / "site"
    (srcdir / "lessons").mkdir(parents=True)
    (srcdir / "figures").mkdir()
    shutil.copy(ROOT / "conf.py", srcdir / "conf.py")
    shutil.copytree(ROOT / "docs", srcdir / "docs", ignore=shutil.ignore_patterns("__pycache__", "_ext"))
    for path in copy_lessons or []:
        shutil.copy(path, srcdir / "lessons" / path.name)
    for name, text in (lessons or {}).items():
        (srcdir / "lessons" / f"{name}.md").write_text(text, encoding="utf-8")
    return srcdir


def build(
    srcdir: Path, *options: str, timeout: float = 900, environment: dict | None = None, outdir: Path | None = None
) -> Build:
    outdir = outdir or srcdir.parent / "_build" / "html"
    command = sphinx_command(srcdir, outdir, *options)
    started = time.time()
    env = {**os.environ, **(environment or {})}
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=srcdir, env=env)
    return Build(srcdir, outdir, result.returncode, result.stdout + result.stderr, started, time.time())


#: Versions in the verdicts the course site is built with (the page and headers they add are tested).
COMPAT_VERSIONS = ("0.10.0", "0.10.1")


def write_compat_verdicts(srcdir: Path) -> None:
    """Verdicts in the form nox -s compat writes, as the published site has them after the weekly run.

    Every lesson passes under both versions except the last in course order, which fails
    under the first at its first code cell: the site must show both kinds.
    """
    from jaxcourse.source import catalogue, lessonsource

    lessons = catalogue.lessons(srcdir)
    failing = lessons[-1]
    cell_line = lessonsource.parse(failing.path.read_text(encoding="utf-8")).code_cells()[0].line
    verdicts = {version: {lesson.id: {"status": "pass", "changed_outputs": 0} for lesson in lessons}
                for version in COMPAT_VERSIONS}  # fmt: skip
    verdicts[COMPAT_VERSIONS[0]][failing.id] = {
        "status": "fail", "where": f"lessons/{failing.id}.md:{cell_line}",
        "message": "AssertionError at \"assert total == 15.0\"", "changed_outputs": 0,
    }  # fmt: skip
    (srcdir / "_build").mkdir(exist_ok=True)
    (srcdir / "_build" / "compat.json").write_text(json.dumps(verdicts), encoding="utf-8")


@pytest.fixture(scope="session")
def course_site(tmp_path_factory) -> Build:
    """The real course, every lesson, built once for the whole test run.

    nox -s tests runs two pytest-xdist workers (one test file at a time each); the first
    worker that needs the course builds it, the other waits for that build and reuses it.
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the folder both workers' temporary folders sit in
    with open(root / "course.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = root / "course.json"
        if record.exists():
            fields = json.loads(record.read_text(encoding="utf-8"))
            return Build(**{**fields, "srcdir": Path(fields["srcdir"]), "outdir": Path(fields["outdir"])})
        srcdir = make_site(root / "course", copy_lessons=LESSON_FILES)
        write_compat_verdicts(srcdir)
        result = build(srcdir, "-j", "auto")
        assert result.returncode == 0, result.output
        fields = {**dataclasses.asdict(result), "srcdir": str(result.srcdir), "outdir": str(result.outdir)}
        record.write_text(json.dumps(fields), encoding="utf-8")
        return result

"""Build, check, preview and benchmark the course site: `nox -l` lists the sessions."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import nox

nox.options.sessions = ["docs"]
nox.options.reuse_venv = "yes"

ROOT = Path(__file__).parent
BUILD = ROOT / "_build"
SITE = BUILD / "html"
REQUIREMENTS = "requirements.txt"


def install(session: nox.Session) -> None:
    session.install("-r", REQUIREMENTS)


def publish(session: nox.Session, site: Path, *options: str, env: dict | None = None) -> bool:
    """Build into `site`.new with warnings as errors; swap it in only if it passed."""
    try:
        session.run(
            "python",
            "-m",
            "jaxcourse.sitebuild",
            str(site),
            *options,
            env={"PYTHONPATH": str(ROOT / "docs" / "_ext"), **(env or {})},
        )
    except nox.command.CommandFailed:
        return False
    return True


@nox.session
def docs(session: nox.Session) -> None:
    """Re-execute every lesson and build the site into _build/html (kept if the build fails)."""
    install(session)
    shutil.rmtree(BUILD / "jupyter_execute", ignore_errors=True)  # no earlier recording survives
    if not publish(session, SITE, *(session.posargs or ["-j", "auto", "-D", "nb_execution_mode=force"])):
        session.error("The build failed; see the problems above.")
    session.log(f"Site built: open {SITE / 'index.html'}")


@nox.session
def lesson(session: nox.Session) -> None:
    """Execute one lesson (cached) and build its page: nox -s lesson -- transforms-04."""
    if len(session.posargs) != 1:
        session.error("Name one lesson id, e.g. nox -s lesson -- transforms-04")
    lesson_id = session.posargs[0].removesuffix(".md").removeprefix("lessons/")
    if not (ROOT / "lessons" / f"{lesson_id}.md").exists():
        choices = sorted(path.stem for path in (ROOT / "lessons").glob("[!_]*.md"))
        session.error(f"No lesson {lesson_id!r}; the lessons are: {', '.join(choices)}")
    install(session)
    site = BUILD / "lesson"
    started = time.perf_counter()
    ok = publish(session, site, "-D", "nb_execution_mode=cache", env={"COURSE_LESSON": lesson_id})
    elapsed = time.perf_counter() - started
    if not ok:
        session.error(f"{lesson_id} failed after {elapsed:.1f} s")
    record = json.loads((site / "execution.json").read_text(encoding="utf-8"))[lesson_id]
    session.log(
        f"{lesson_id}: its cells ran in {record['runtime_seconds']:.1f} s in the run of {record['stamp']['started']} "
        f"(reused while its code and the environment are unchanged); the build took {elapsed:.1f} s."
    )
    session.log(f"Page: {site / 'lessons' / (lesson_id + '.html')}")


@nox.session
def serve(session: nox.Session) -> None:
    """Live preview with sphinx-autobuild; only lessons whose code changed re-execute."""
    install(session)
    args = session.posargs or ["--port", "8000"]
    session.run(
        "sphinx-autobuild",
        "-b",
        "html",
        "-D",
        "nb_execution_mode=cache",
        # Lessons write their figures while building; watching them would loop.
        "--ignore",
        str(ROOT / "figures"),
        "--ignore",
        str(BUILD),
        *args,
        ".",
        str(BUILD / "serve" / "html"),
    )


RUFF_ARGS = ["check", "--select", "E,F,W,I,UP,B", "--line-length", "120", "conf.py", "noxfile.py", "docs/_ext", "tests"]


def check_lessons(session: nox.Session, *lessons: str) -> None:
    session.run("python", "-m", "jaxcourse.checker", *lessons, env={"PYTHONPATH": str(ROOT / "docs" / "_ext")})


@nox.session
def lint(session: nox.Session) -> None:
    """Check every lesson's anatomy and code cells, and run ruff on the project's Python."""
    install(session)
    check_lessons(session, *session.posargs)
    session.run("ruff", *RUFF_ARGS)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the lesson checker, ruff and the test suite (sites build in temporary folders)."""
    install(session)
    check_lessons(session)
    session.run("ruff", *RUFF_ARGS)
    session.run("pytest", *(session.posargs or ["tests"]), env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmark builds (fresh, no-change, prose edit, parallel) and write _build/bench.json."""
    install(session)
    session.run("python", "tests/benchmark.py", *session.posargs)

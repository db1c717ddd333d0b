"""Build, check, preview, benchmark and maintain the course site: `nox -l` lists the sessions."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import nox

nox.options.sessions = ["docs"]
nox.options.reuse_venv = "yes"
# With uv on the PATH (pip install 'nox[uv]') the pinned packages install faster; else virtualenv and pip.
nox.options.default_venv_backend = "uv|virtualenv"

ROOT = Path(__file__).parent
BUILD = ROOT / "_build"
SITE = BUILD / "html"
REQUIREMENTS = "requirements.txt"
DIRECT_NEEDS = "requirements.in"
PIP_TOOLS = "pip-tools==7.6.2"
#: What an environment is built from: when one changes, install() runs again.
ENVIRONMENT_FILES = (REQUIREMENTS, "docs/_ext/pyproject.toml", "docs/_ext/jaxcourse/kernels/jaxcourse/kernel.json")
RUFF = ["ruff", "check", "--config", "docs/_ext/pyproject.toml", "conf.py", "noxfile.py", "docs/_ext", "tests"]


def install(session: nox.Session) -> None:
    """The pinned packages, and the course extension in place (both from requirements.txt).

    Skipped when this environment already holds exactly these pins: the extension is
    installed in place, so edits to its code need no reinstall, only edits to its metadata.
    """
    wanted = hashlib.sha256(b"".join((ROOT / name).read_bytes() for name in ENVIRONMENT_FILES)).hexdigest()
    stamp = Path(session.virtualenv.location) / ".course-requirements"
    if stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return
    # uv installs several times faster than pip but leaves compiling the .pyc files to the
    # first imports, which the first build would then pay for; compile them now, as pip does.
    session.install("-r", REQUIREMENTS, env={"UV_COMPILE_BYTECODE": "1"})
    # The course kernel spec, installed once here: builds only check it, so parallel builds never race on it.
    session.run("python", "-m", "jaxcourse.kernel", "install", silent=True)
    stamp.write_text(wanted, encoding="utf-8")


def site_build(session: nox.Session, site: Path, *options: str) -> bool:
    """Build into `site`.new with warnings as errors; swap it in only if it passed."""
    try:
        session.run("python", "-m", "jaxcourse.sitebuild", str(site), *options)
    except nox.command.CommandFailed:
        return False
    return True


@nox.session
def docs(session: nox.Session) -> None:
    """Re-execute every lesson and build the site into _build/html (kept if the build fails)."""
    install(session)
    shutil.rmtree(BUILD / "jupyter_execute", ignore_errors=True)  # no earlier recording survives
    if not site_build(session, SITE, "-j", "auto", "-D", "nb_execution_mode=force", *session.posargs):
        session.error("The build failed; see the problems above.")
    session.log(f"Site built: open {SITE / 'index.html'}")


@nox.session
def lesson(session: nox.Session) -> None:
    """Execute one page (cached) and build it: nox -s lesson -- transforms-04 (or -- docs/page.md)."""
    if len(session.posargs) != 1:
        session.error("Name one lesson id or notebook page, e.g. nox -s lesson -- transforms-04")
    name = session.posargs[0]
    install(session)
    site = BUILD / "lesson"
    started = time.perf_counter()
    ok = site_build(session, site, "--lesson", name, "-D", "nb_execution_mode=cache")
    elapsed = time.perf_counter() - started
    if not ok:
        session.error(f"{name} failed after {elapsed:.1f} s")
    # The other executed pages were stubs: the report holds this page alone.
    (record,) = json.loads((site / "execution.json").read_text(encoding="utf-8")).values()
    how = "run afresh by this build" if record["fresh"] else "reused: its code and the environment are unchanged"
    session.log(
        f"{record['docname']}: its cells ran in {record['runtime_seconds']:.1f} s in the run of {record['started']} "
        f"({how}); the build took {elapsed:.1f} s."
    )
    session.log(f"Page: {site / (record['docname'] + '.html')}")


@nox.session
def serve(session: nox.Session) -> None:
    """Live preview with sphinx-autobuild; only lessons whose code changed re-execute."""
    install(session)
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
        *(session.posargs or ["--port", "8000"]),
        ".",
        str(BUILD / "serve" / "html"),
    )


@nox.session
def lint(session: nox.Session) -> None:
    """Check every lesson's anatomy and code cells, and run ruff on the project's Python."""
    install(session)
    session.run("python", "-m", "jaxcourse.checker", *session.posargs)
    session.run(*RUFF)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the lesson checker, ruff and the test suite (sites build in temporary folders)."""
    install(session)
    session.run("python", "-m", "jaxcourse.checker")
    session.run(*RUFF)
    # Two workers, each taking whole test files (their tests share a site and run in order);
    # the course site is built once for both (tests/conftest.py).
    session.run(
        "pytest",
        *(session.posargs or ["tests", "-n", "2", "--dist", "loadfile"]),
        env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmark builds (fresh, no-change, prose edit, parallel) and write _build/bench.json."""
    install(session)
    session.run("python", "tests/benchmark.py", *session.posargs)


@nox.session
def new(session: nox.Session) -> None:
    """Start a lesson from the template: nox -s new -- transforms-09 "Title of the lesson"."""
    install(session)
    session.run("python", "-m", "jaxcourse.newlesson", *session.posargs)


@nox.session
def port(session: nox.Session) -> None:
    """Bring notebook pages written for another site into docs/: nox -s port -- JAX/docs docs/ported."""
    install(session)
    session.run("python", "-m", "jaxcourse.port", *session.posargs)


# pip-compile needs pip in its environment, which uv's environments lack.
@nox.session(venv_backend="virtualenv")
def lock(session: nox.Session) -> None:
    """Compile requirements.txt from requirements.in, keeping today's pins unless told to move them."""
    session.install(PIP_TOOLS)
    session.run(
        "pip-compile",
        "--quiet",
        "--strip-extras",
        "--allow-unsafe",  # pin setuptools too: every package the build uses is pinned
        "--no-emit-index-url",
        "--no-emit-find-links",
        "--output-file",
        REQUIREMENTS,
        DIRECT_NEEDS,
        *session.posargs,  # e.g. --upgrade-package jax --upgrade-package jaxlib
        env={"CUSTOM_COMPILE_COMMAND": "nox -s lock"},  # the command the file's header names
    )
    # pip-compile writes the in-place package as an absolute file: URL when it was pinned before;
    # keep it relative so the file works in every clone.
    path = ROOT / REQUIREMENTS
    path.write_text(
        path.read_text(encoding="utf-8").replace(f"-e {(ROOT / 'docs' / '_ext').as_uri()}", "-e ./docs/_ext")
    )

"""Build, check, preview, benchmark and maintain the course site: `nox -l` lists the sessions.

Every site session (docs, lesson, serve, lint, tests, new, port, bench, execute) runs in one shared
environment, `.nox/site`, built once from requirements.txt: a second session starts in seconds.
`nox -s compat` builds one environment per JAX version it tries, beside it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nox

nox.options.sessions = ["docs"]

ROOT = Path(__file__).parent
BUILD = ROOT / "_build"
SITE = BUILD / "html"
REQUIREMENTS = "requirements.txt"
DIRECT_NEEDS = "requirements.in"
PIP_TOOLS = "pip-tools==7.6.2"  # also pinned in requirements.txt: pip-sync keeps itself
#: The environment every site session shares.
SITE_ENV = ROOT / ".nox" / "site"
#: What an environment is built from: when one changes, it is filled again.
ENVIRONMENT_FILES = (
    REQUIREMENTS,
    "docs/_ext/pyproject.toml",
    "docs/_ext/jaxcourse/runtime/kernels/jaxcourse/kernel.json",
)
PYTHON_FILES = ["--config", "docs/_ext/pyproject.toml", "conf.py", "noxfile.py", "docs/_ext", "tests"]
RUFF = ["-m", "ruff", "check", *PYTHON_FILES]
RUFF_FORMAT = ["-m", "ruff", "format", "--check", *PYTHON_FILES]  # fails on a file ruff would reformat


def interpreter() -> str:
    """The Python that builds the environments: a change of it rebuilds them from scratch."""
    return f"{sys.implementation.name} {platform.python_version()} {Path(sys.executable).resolve()}"


def pinned(requirements: Path) -> dict[str, str]:
    """Distribution name -> version of every ``name==version`` line (the in-place package: 'jaxcourse' -> '')."""
    pins = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[canonical(name)] = version.strip()
        elif line.startswith("-e ") and "docs/_ext" in line:
            pins["jaxcourse"] = ""
    return pins


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


#: Installed with the environment's own pip, outside the pins: pip-sync leaves them alone too.
TOOLING = {"pip", "setuptools", "wheel"}


def installed(python: Path) -> dict[str, str]:
    """Distribution name -> version, as the environment's Python sees them (a fraction of a second)."""
    script = (
        "import importlib.metadata as m, json; "
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    )
    result = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=True)
    return {canonical(name): version for name, version in json.loads(result.stdout).items()}


def out_of_sync(python: Path, requirements: Path) -> list[str]:
    """What differs between the environment and the pins: missing, extra or other versions ([] if none)."""
    pins, have = pinned(requirements), installed(python)
    differences = [f"{name} missing" for name in pins if name not in have]
    differences += [f"{name} {have[name]} installed, {version} pinned" for name, version in pins.items()
                    if name in have and version and have[name] != version]  # fmt: skip
    differences += [f"{name} {have[name]} not pinned" for name in have if name not in pins and name not in TOOLING]
    return differences


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def environment(session: nox.Session, location: Path = SITE_ENV, requirements: str = REQUIREMENTS) -> Path:
    """A virtual environment holding exactly these pins and the course extension in place; its bin folder.

    Created on first use, and synced to the pins (a package dropped from them is removed; one changed by
    hand is put back) whenever the pins, the extension's metadata, the kernel spec or the interpreter
    change, or what is installed differs from the pins: uv's ``pip sync`` with uv on the PATH
    (pip install 'nox[uv]'), pip-tools' ``pip-sync`` otherwise. A new interpreter starts a new
    environment. The extension is installed in place, so edits to its code need nothing.
    """
    uv = shutil.which("uv")
    python = location / "bin" / "python"
    sources = [ROOT / requirements if not Path(requirements).is_absolute() else Path(requirements)]
    sources += [ROOT / name for name in ENVIRONMENT_FILES[1:]]
    wanted = json.dumps(
        {"interpreter": interpreter(), "files": hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()}
    )
    stamp = location / ".course-requirements"
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8")) if stamp.exists() else {}
    except ValueError:  # a stamp of an older noxfile: a bare digest
        recorded = {}
    if python.exists() and recorded.get("interpreter") not in (None, interpreter()):
        session.log(f"The interpreter changed ({recorded['interpreter']}): making {shown(location)} anew")
        shutil.rmtree(location)
    if not python.exists():
        session.log(f"Creating the environment {shown(location)} (once; later sessions reuse it)")
        if uv:
            session.run(uv, "venv", "--quiet", "--python", sys.executable, str(location), external=True)
        elif importlib.util.find_spec("virtualenv"):  # nox's own dependency: it seeds a current pip
            session.run(sys.executable, "-m", "virtualenv", "--quiet", str(location), external=True)
        else:  # the standard library's venv seeds the pip bundled with Python, slower to install the pins
            session.run(sys.executable, "-m", "venv", str(location), external=True)
    if stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        differences = out_of_sync(python, sources[0])
        if not differences:
            return python.parent
        session.log(f"{shown(location)} differs from {sources[0].name}: {', '.join(differences[:5])}")
    session.log(f"Syncing {shown(location)} with {sources[0].name} (a minute or two the first time)")
    if uv:
        # uv leaves compiling the .pyc files to the first imports, which the first build would then
        # pay for; compile them now, as pip does.
        session.run(
            uv, "pip", "sync", "--quiet", "--python", str(python), str(sources[0]),
            env={"UV_COMPILE_BYTECODE": "1"}, external=True,
        )  # fmt: skip
    else:
        # pip-sync runs inside the environment: it installs what is missing, then removes what is not pinned.
        session.run(str(python), "-m", "pip", "install", "--quiet", PIP_TOOLS, external=True)
        session.run(str(python), "-m", "piptools", "sync", "--quiet", str(sources[0]), external=True)
    if "jaxcourse" in pinned(sources[0]):
        # The course kernel spec, installed once here: builds only check it, so parallel builds never race on it.
        session.run(str(python), "-m", "jaxcourse.runtime.kernel", "install", silent=True, external=True)
    stamp.write_text(wanted, encoding="utf-8")
    return python.parent


def run(session: nox.Session, *command: str, bin_dir: Path | None = None, **kwargs) -> None:
    """Run a command of the shared environment (python, pytest, sphinx-autobuild, ...)."""
    bin_dir = bin_dir or environment(session)
    program = command[0] if os.sep in command[0] else str(bin_dir / command[0])
    session.run(program, *command[1:], external=True, **kwargs)


def site_build(session: nox.Session, site: Path, *options: str, bin_dir: Path | None = None) -> bool:
    """Build into `site`.new with warnings as errors; swap it in only if it passed."""
    try:
        run(session, "python", "-m", "jaxcourse.tools.sitebuild", str(site), *options, bin_dir=bin_dir)
    except nox.command.CommandFailed:
        return False
    return True


@nox.session(python=False)
def docs(session: nox.Session) -> None:
    """Re-execute every page and build the site into _build/html (kept if the build fails)."""
    environment(session)
    shutil.rmtree(BUILD / "jupyter_execute", ignore_errors=True)  # no earlier recording survives
    options = ["-j", "auto", "-D", "nb_execution_mode=force", "--progress"]
    if "--from" in session.posargs:  # assemble shards' recordings: nothing executes (see `execute`)
        options = ["-j", "auto", "--progress"]
    if not site_build(session, SITE, *options, *session.posargs):
        session.error("The build failed; see the problems above.")
    session.log(f"Site built: open {SITE / 'index.html'}")


@nox.session(python=False)
def lesson(session: nox.Session) -> None:
    """Execute one page (cached) and build it: nox -s lesson -- transforms-04 (or -- docs/page.ipynb)."""
    if len(session.posargs) != 1:
        session.error("Name one lesson id or notebook page, e.g. nox -s lesson -- transforms-04")
    name = session.posargs[0]
    environment(session)
    site = BUILD / "lesson"
    started = time.perf_counter()
    ok = site_build(session, site, "--lesson", name, "-D", "nb_execution_mode=cache")
    elapsed = time.perf_counter() - started
    if not ok:
        session.error(f"{name} failed after {elapsed:.1f} s")
    session.log(f"The build took {elapsed:.1f} s.")  # how the page ran is printed above, by sitebuild


@nox.session(python=False)
def execute(session: nox.Session) -> None:
    """Execute one shard of the pages into a folder: nox -s execute -- --shard 1/2 --into DIR."""
    if not session.posargs:
        session.error("Name the shard and the folder, e.g. nox -s execute -- --shard 1/2 --into _build/shard-1")
    run(session, "python", "-m", "jaxcourse.tools.shards", "execute", "-j", "auto", *session.posargs)


@nox.session(python=False)
def compat(session: nox.Session) -> None:
    """Build the whole course under other JAX versions: nox -s compat -- 0.10.1 [0.10.0 ...]."""
    versions = session.posargs or session.error("Name the JAX versions to try, e.g. nox -s compat -- 0.10.1")
    for version in versions:
        if not re.fullmatch(r"\d+(\.\d+)*", version):
            session.error(f"{version!r} is not a JAX version such as 0.10.1")
    site_bin = environment(session)
    verdicts = BUILD / "compat.json"
    for version in versions:
        # Its own environment: every pin of requirements.txt, with jax and jaxlib moved to this version.
        pinned = ROOT / ".nox" / f"compat-{version}" / "requirements.txt"
        run(session, "python", "-m", "jaxcourse.tools.compat", "pin", version, str(pinned), bin_dir=site_bin)
        bin_dir = environment(session, pinned.parent / "env", str(pinned))
        # Built from a copy of the sources, so the checkout's figures and the published site stay as they are.
        folder = BUILD / "compat" / version
        shutil.rmtree(folder, ignore_errors=True)
        run(session, "python", "-m", "jaxcourse.tools.compat", "copy", str(folder / "src"), bin_dir=site_bin)
        session.log(f"Building the course under JAX {version}")
        with session.chdir(folder / "src"):
            site_build(
                session, folder / "html", "-j", "auto", "-D", "nb_execution_mode=force", "--progress",
                # The site's run times balance the parallel processes, as they do for nox -s docs.
                "-D", f"course_runtime_hints={SITE / 'execution.json'}",
                "--compare-to", str(SITE), bin_dir=bin_dir,
            )  # fmt: skip
        run(session, "python", "-m", "jaxcourse.tools.compat", "record", version, str(folder / "html"), str(verdicts))
    session.log(f"Verdicts in {verdicts.relative_to(ROOT)}; the next nox -s docs shows them on the site.")


@nox.session(python=False)
def serve(session: nox.Session) -> None:
    """Live preview with sphinx-autobuild; only pages whose code changed re-execute."""
    run(
        session,
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


@nox.session(python=False)
def linkcheck(session: nox.Session) -> None:
    """Check the site's external links (needs network) and write the issue body the weekly workflow files."""
    out = BUILD / "linkcheck"
    # Exit status 1 means "some links are broken": the report below says which, and exits 1 itself.
    run(
        session, "python", "-m", "sphinx", "-b", "linkcheck", "-q", "-j", "auto", "-D", "nb_execution_mode=cache",
        *session.posargs, ".", str(out), success_codes=[0, 1],
    )  # fmt: skip
    run_url = os.environ.get("LINK_CHECK_RUN_URL")
    extra = ["--run-url", run_url] if run_url else []
    run(session, "python", "-m", "jaxcourse.tools.linkreport", str(out / "output.json"), str(out / "issue.md"), *extra)


@nox.session(python=False)
def lint(session: nox.Session) -> None:
    """Check every lesson's anatomy and code cells; lint the project's Python and check its format."""
    run(session, "python", "-m", "jaxcourse.tools.checker", *session.posargs)
    run(session, "python", *RUFF)
    run(session, "python", *RUFF_FORMAT)


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """Run the lesson checker, ruff and the test suite (sites build in temporary folders)."""
    run(session, "python", "-m", "jaxcourse.tools.checker")
    run(session, "python", *RUFF)
    run(session, "python", *RUFF_FORMAT)
    # Two workers, each taking whole test files (their tests share a site and run in order);
    # the course site is built once for both (tests/conftest.py).
    run(
        session,
        "python",
        "-m",
        "pytest",
        *(session.posargs or ["tests", "-n", "2", "--dist", "loadfile"]),
        env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
    )


#: Tests of the engine's pure modules: no site is built and no kernel starts (nox -s unit).
UNIT_TESTS = ["tests/unit"]
#: Small sites, each built once, that exercise the Sphinx and myst-nb integration end to end.
SMALL_SITE_TESTS = ["tests/test_notebook_pages.py", "tests/test_raises.py", "tests/test_failures.py"]


@nox.session(python=False)
def unit(session: nox.Session) -> None:
    """Run the unit tests of the engine's pure modules, in seconds: no site, no kernel."""
    run(session, "python", "-m", "pytest", "-q", *(session.posargs or UNIT_TESTS))


#: What the weekly upstream check moves to its newest release; every other package keeps its pin.
UPSTREAM = ("sphinx", "myst-nb", "myst-parser", "furo")


@nox.session(python=False)
def upstream(session: nox.Session) -> None:
    """Test the engine against the newest Sphinx, myst-nb and furo, in an environment of its own."""
    folder = ROOT / ".nox" / "upstream"
    folder.mkdir(parents=True, exist_ok=True)
    pins = folder / "requirements.txt"
    # pip-compile keeps the pins of the file it writes to: start from ours and move only these.
    shutil.copy(ROOT / REQUIREMENTS, pins)
    upgrades = [argument for name in UPSTREAM for argument in ("--upgrade-package", name)]
    run(
        session, "python", "-m", "piptools", "compile", "--quiet", "--strip-extras", "--allow-unsafe",
        "--no-emit-index-url", "--output-file", str(pins), *upgrades, DIRECT_NEEDS,
    )  # fmt: skip
    text = pins.read_text(encoding="utf-8")
    pins.write_text(re.sub(r"^-e .*docs/_ext$", f"-e {ROOT / 'docs' / '_ext'}", text, flags=re.M), encoding="utf-8")
    moved = {name: version for name, version in pinned(pins).items() if name in UPSTREAM}
    session.log("Newest releases: " + ", ".join(f"{name} {version}" for name, version in moved.items()))
    bin_dir = environment(session, folder / "env", str(pins))
    run(session, "python", "-m", "pytest", *(session.posargs or UNIT_TESTS + SMALL_SITE_TESTS), bin_dir=bin_dir)


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """Benchmark builds (fresh, no-change, prose edit, parallel) and write _build/bench.json."""
    run(session, "python", "tests/benchmark.py", *session.posargs)


@nox.session(python=False)
def new(session: nox.Session) -> None:
    """Start a lesson from the template: nox -s new -- transforms-09 "Title of the lesson"."""
    run(session, "python", "-m", "jaxcourse.tools.newlesson", *session.posargs)


@nox.session(python=False)
def port(session: nox.Session) -> None:
    """Bring notebook pages written for another site into docs/: nox -s port -- JAX/docs docs/ported."""
    run(session, "python", "-m", "jaxcourse.tools.port", *session.posargs)


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

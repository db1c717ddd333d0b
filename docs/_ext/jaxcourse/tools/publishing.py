"""Build a site beside the published one, and publish it only when the build passes.

:func:`build_and_publish` builds into ``SITE.new`` with warnings as errors (doctrees and kernel logs in
``SITE.new.doctrees``, never in the site), then swaps it in for ``SITE`` (:func:`publish`). A failed build leaves
``SITE`` as it was; a swap cut short by a kill is finished or undone by the next run (:func:`recover`), so the last
good site is never lost. :func:`sphinx_command` is the project's one sphinx-build command line: ``sitebuild``,
``shards``, the tests and the benchmark all use it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import plural

#: How Sphinx prints a warning or an error, located ("<path>:<line>: ERROR: <message>") or not.
PROBLEM = re.compile(r"(?:^|: )(?:WARNING|ERROR|CRITICAL): ")
#: The warning types of a page's failed run: a failed cell or a timeout (jaxcourse.execution.failures), a dead
#: kernel (jaxcourse.execution.parser).
RUN_FAILURE_TYPES = ("[course.exec]", "[course.kernel]")
#: Files Sphinx leaves in an output folder for its own incremental builds; never published.
BUILD_INTERNALS = (".doctrees", ".buildinfo", "reports")


def sphinx_command(
    srcdir: Path, outdir: Path, *options: str, doctrees: Path | None = None, pages: tuple[str, ...] = ()
) -> list[str]:
    """sphinx-build for HTML with warnings as errors, every problem shown, nothing else printed.

    With ``pages`` (docnames), a build of chosen pages: only they execute (``course_only_pages``), and
    Sphinx writes only their files, named after the output folder, and the pages whose table of contents
    lists them; ``jaxcourse.published.partialbuild`` stands in for the rest.
    """
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q"]
    if doctrees is not None:
        command += ["-d", str(doctrees)]
    if pages:
        command += ["-D", f"course_only_pages={','.join(pages)}"]
    # Imported here, not at the top: `compat versions` imports this module on a bare Python, and the
    # catalogue needs PyYAML.
    from ..source import catalogue

    files = [str(catalogue.page_file(srcdir, docname)) for docname in pages]
    return [*command, *options, str(srcdir), str(outdir), *files]


def sibling(site: Path, suffix: str) -> Path:
    """The folder beside ``site`` named with ``suffix`` (SITE.new, SITE.old...)."""
    return site.with_name(site.name + suffix)


def remove(path: Path) -> None:
    """Delete the file or folder at ``path``, if there is one."""
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def recover(site: Path) -> None:
    """Finish or undo a swap that a kill interrupted (see :func:`publish`)."""
    old = sibling(site, ".old")
    if not old.exists():
        return
    if site.exists():
        shutil.rmtree(old)  # the new site was in place; only the clean-up was cut short
    else:
        old.rename(site)  # cut between the two renames: the last good site comes back


def publish(staging: Path, site: Path) -> None:
    """Replace ``site`` with ``staging``: two renames, recoverable at every point by :func:`recover`."""
    recover(site)
    for name in BUILD_INTERNALS:
        remove(staging / name)
    old = sibling(site, ".old")
    if site.exists():
        site.rename(old)
    staging.rename(site)
    if old.exists():
        shutil.rmtree(old)


def build_and_publish(srcdir: Path, site: Path, options: list[str], pages: tuple[str, ...] = ()) -> int:
    """Return sphinx-build's exit status; publish to ``site`` only on success. ``pages``: see :func:`sphinx_command`."""
    recover(site)
    staging = sibling(site, ".new")
    doctrees = sibling(site, ".new.doctrees")
    warnings = sibling(site, ".warnings.log")
    for folder in (staging, doctrees):
        shutil.rmtree(folder, ignore_errors=True)
    warnings.unlink(missing_ok=True)
    command = sphinx_command(srcdir, staging, "-w", str(warnings), *options, doctrees=doctrees, pages=pages)
    started = time.time()
    status = subprocess.run(command, cwd=srcdir).returncode
    if status != 0:
        # Sphinx has already printed each problem once, located; the summary only counts them.
        problems = warnings.read_text(encoding="utf-8").splitlines() if warnings.exists() else []
        count = sum(1 for line in problems if PROBLEM.search(line))
        listed = f"{plural(count, 'problem')} listed above"
        if not count:  # Sphinx stopped before any page problem: its own message is above
            listed += f"; sphinx-build stopped with status {status}"
        kept = f"the last good site in {site} was kept" if site.exists() else "no site was published"
        print(f"\nBUILD FAILED ({listed}); {kept}. The failed build is in {staging}.", file=sys.stderr)
        # A failed run stops its page, and the problems after it on that page (a glued value never made, an
        # equation never labelled) may only follow from it: among many problems, the runs are named again.
        failed_runs = [line for line in problems if line.rstrip().endswith(RUN_FAILURE_TYPES)]
        if failed_runs and count > len(failed_runs):
            print("The failed runs, which problems on the same page may follow from:", file=sys.stderr)
            print("\n".join(f"  {line}" for line in failed_runs), file=sys.stderr)
        return status or 1
    publish(staging, site)
    shutil.rmtree(doctrees, ignore_errors=True)
    report = site.parent / "changes.json"
    if report.is_file() and report.stat().st_mtime >= started:
        data = json.loads(report.read_text(encoding="utf-8"))
        print(f"Change report: {data['summary']}")
        site.parent.joinpath("changes.md").write_text(changes_markdown(data), encoding="utf-8")
    return 0


def changes_markdown(data: dict) -> str:
    """The change report for a CI job summary: the summary, then each changed output's diff."""
    lines = ["## What changed in this build", "", data["summary"], ""]
    for page_id, page in data["pages"].items():
        for change in page["outputs"]:
            lines += [f"{page_id}, line {change['line']}:", "", "```diff", change["diff"], "```", ""]
    return "\n".join(lines)

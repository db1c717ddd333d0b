"""Build the site beside the published one and publish it only when the build passes.

``python -m jaxcourse.sitebuild OUTDIR [--lesson ID] [--compare-to DIR] [--from DIR...] [--progress]
[sphinx options...]`` builds into ``OUTDIR.new`` with warnings as errors (doctrees and kernel logs in
``OUTDIR.new.doctrees``, never in the site), then swaps it in for ``OUTDIR``.
A failed build leaves ``OUTDIR`` as it was, prints every problem once more at
the end, and exits non-zero. A swap interrupted by a kill is finished or undone
by the next run, so the last good site is never lost.

With ``--from``, the site is assembled from the recordings that shards of
``nox -s execute`` left in those folders, executing nothing (``jaxcourse.shards``).
With ``--progress`` it prints a line per executed page as it finishes.

A whole-site build compares its recordings with the site it replaces (or with
``--compare-to DIR``) and prints the change report's summary; the report is in
``changes.json`` beside the site, and ``changes.md`` for a CI job summary.

:func:`sphinx_command` is the project's one sphinx-build command line; the
tests and the benchmark use it too.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import catalogue, shards

#: How Sphinx prints a warning or an error, located ("<path>:<line>: ERROR: <message>") or not.
PROBLEM = re.compile(r"(?:^|: )(?:WARNING|ERROR|CRITICAL): ")
#: Files Sphinx leaves in an output folder for its own incremental builds; never published.
BUILD_INTERNALS = (".doctrees", ".buildinfo", "reports")


def sphinx_command(srcdir: Path, outdir: Path, *options: str, doctrees: Path | None = None) -> list[str]:
    """sphinx-build for HTML with warnings as errors, every problem shown, nothing else printed."""
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q"]
    if doctrees is not None:
        command += ["-d", str(doctrees)]
    return [*command, *options, str(srcdir), str(outdir)]


def _sibling(site: Path, suffix: str) -> Path:
    return site.with_name(site.name + suffix)


def recover(site: Path) -> None:
    """Finish or undo a swap that a kill interrupted (see :func:`publish`)."""
    old = _sibling(site, ".old")
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
        path = staging / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    old = _sibling(site, ".old")
    if site.exists():
        site.rename(old)
    staging.rename(site)
    if old.exists():
        shutil.rmtree(old)


def build_and_publish(srcdir: Path, site: Path, options: list[str]) -> int:
    """Return sphinx-build's exit status; publish to ``site`` only on success."""
    recover(site)
    staging = _sibling(site, ".new")
    doctrees = _sibling(site, ".new.doctrees")
    warnings = _sibling(site, ".warnings.log")
    for folder in (staging, doctrees):
        shutil.rmtree(folder, ignore_errors=True)
    warnings.unlink(missing_ok=True)
    command = sphinx_command(srcdir, staging, "-w", str(warnings), *options, doctrees=doctrees)
    started = time.time()
    status = subprocess.run(command, cwd=srcdir).returncode
    if status != 0:
        # Sphinx has already printed each problem once, located; the summary only counts them.
        problems = warnings.read_text(encoding="utf-8").splitlines() if warnings.exists() else []
        count = sum(1 for line in problems if PROBLEM.search(line))
        listed = f"{count} problem{'s' if count != 1 else ''} listed above"
        if not count:  # Sphinx stopped before any page problem: its own message is above
            listed += f"; sphinx-build stopped with status {status}"
        kept = f"the last good site in {site} was kept" if site.exists() else "no site was published"
        print(f"\nBUILD FAILED ({listed}); {kept}. The failed build is in {staging}.", file=sys.stderr)
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxcourse.sitebuild", description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, help="the published site folder, e.g. _build/html")
    parser.add_argument(
        "--lesson",
        help="execute this page only (a lesson id, or a notebook page's file such as docs/page.md); "
        "the other executed pages become title-only pages",
    )
    parser.add_argument(
        "--compare-to",
        type=Path,
        help="an earlier site (or its recordings.json) to compare with; default: the site being replaced",
    )
    parser.add_argument(
        "--from",
        dest="shards",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="assemble the site from these shards' recordings (nox -s execute --into DIR), executing nothing",
    )
    parser.add_argument("--progress", action="store_true", help="print a line per executed page as it finishes")
    arguments, options = parser.parse_known_args(argv)
    srcdir = Path.cwd()
    site = arguments.outdir.resolve()
    if arguments.progress:
        options += ["-D", "course_progress=1"]
    if arguments.shards:
        try:
            options += shards.assembly_options(srcdir, arguments.shards, _sibling(site, ".shards-cache"))
        except shards.ShardError as error:
            print(error, file=sys.stderr)
            return 2
    if arguments.lesson:
        try:
            docname = catalogue.page_docname(srcdir, arguments.lesson)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        options += ["-D", f"course_only_pages={docname}"]
    else:
        options += ["-D", f"course_compare_to={(arguments.compare_to or site).resolve()}"]
    return build_and_publish(srcdir, site, options)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Build the site beside the published one and publish it only when the build passes.

``python -m jaxcourse.tools.sitebuild OUTDIR [--lesson ID] [--compare-to DIR] [--from DIR...] [--progress]
[sphinx options...]`` builds into ``OUTDIR.new`` and swaps it in for ``OUTDIR`` (``jaxcourse.tools.publishing``).
With ``--from`` it assembles the site from shards' recordings, executing nothing (``jaxcourse.tools.shards``). A
whole-site build compares its recordings with the site it replaces (or ``--compare-to DIR``) and prints the change
report's summary; the report is in ``changes.json`` beside the site, and ``changes.md`` for a CI job summary.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..source import catalogue
from . import read_json, shards
from .publishing import build_and_publish, sibling


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxcourse.tools.sitebuild", description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, help="the published site folder, e.g. _build/html")
    parser.add_argument(
        "--lesson",
        help="execute and write this page only (a lesson id, or a notebook page's file such as docs/page.md), "
        "with the page whose table of contents lists it and the pages it pastes glued values from; the other "
        "pages are read for their titles, headings and labels, and each is written as a short page saying it "
        "is not part of this build",
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
            options += shards.assembly_options(srcdir, arguments.shards, sibling(site, ".shards-cache"))
        except shards.ShardError as error:
            print(error, file=sys.stderr)
            return 2
    if arguments.lesson:
        try:
            docname = catalogue.page_docname(srcdir, arguments.lesson)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        # A page that pastes values glued on other pages runs them too, or it would have nothing to paste.
        status = build_and_publish(srcdir, site, options, pages=(docname, *catalogue.pasted_from(srcdir, docname)))
        if status == 0:
            print(page_summary(site, docname))
        return status
    options += ["-D", f"course_compare_to={(arguments.compare_to or site).resolve()}"]
    return build_and_publish(srcdir, site, options)


def page_summary(site: Path, docname: str) -> str:
    """How the one page of a ``--lesson`` build ran, from the site's execution report."""
    # execution.json is keyed by page id (a lesson's id, or a page's docname); each row names its docname.
    rows = read_json(site / "execution.json", {}).values()
    record = next((row for row in rows if row["docname"] == docname), None)
    if record is None:  # a prose page: built and checked, with nothing to execute
        return f"{docname}: not a notebook, so nothing on it ran; page: {site / docname}.html"
    how = "run afresh by this build" if record["fresh"] else "reused: its code and the environment are unchanged"
    return (
        f"{docname}: its cells ran in {record['runtime_seconds']:.1f} s in the run of {record['started']} ({how}); "
        f"page: {site / docname}.html"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The change report as a site page ("What changed in this build") and as build files.

The ``{change-report}`` placeholder is filled, once every executed page has been read, from this build's
recordings compared with the earlier site's (``course_compare_to``). At the end of the build the recordings
are written into the site (``recordings.json``, for the next comparison), the report beside it (``changes.json``).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path, PurePosixPath

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from ..execution import changes
from .placeholders import change_report
from .report import page_link


class ChangeReport(SphinxDirective):
    """What changed in this build's recordings since the earlier site (filled after all pages are read)."""

    def run(self) -> list[nodes.Node]:
        self.env.get_domain("course").note_report_page(self.env.docname)
        return [change_report()]


def new_recordings(app: Sphinx) -> dict[str, dict]:
    """Every executed page's recording of this build, by page id."""
    pages = app.env.get_domain("course").pages
    return {page.page_id: page.recording for page in pages.values() if page.recording}


@functools.cache
def _earlier(location: str) -> dict | None:
    return changes.load_recordings(location)


def build_report(app: Sphinx) -> changes.ChangeReport | None:
    """None when this build was asked for no comparison (course_compare_to is empty)."""
    location = app.config.course_compare_to
    if not location:
        return None
    location = str(Path(app.srcdir, location))
    return changes.compare(_earlier(location), new_recordings(app), location)


def on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    placeholders = list(doctree.findall(change_report))
    if not placeholders:
        return
    report = build_report(app)
    for placeholder in placeholders:
        placeholder.replace_self(_render(app, docname, report))


def _render(app: Sphinx, docname: str, report: changes.ChangeReport | None) -> list[nodes.Node]:
    if report is None:
        return [nodes.paragraph("", "This build was not compared with an earlier site (nox -s docs compares).")]
    result: list[nodes.Node] = [nodes.paragraph("", report.summary(), classes=["change-summary"])]
    if report.compared_with is None:
        return result
    for page in report.changed:
        section = nodes.container(classes=["page-changes"])
        if page.status == "removed":
            name = nodes.Text(page.page)
        else:  # a link to its page, whose docname is its file without .md or .ipynb
            name = page_link(app, docname, PurePosixPath(page.source).with_suffix("").as_posix(), page.page)
        title = nodes.paragraph(classes=["page-changes-title"])
        title += nodes.strong("", "", name)
        title += nodes.Text(f": {changes.describe(page)}")
        section += title
        for change in page.outputs:
            where = f"line {change.line} of {page.source}" if change.line else f"a removed cell ({page.source})"
            section += nodes.paragraph("", f"Output of the cell at {where}:")
            section += nodes.literal_block(change.diff, change.diff, language="diff", classes=["output-diff"])
        result.append(section)
    varying = sum(page.varying for page in report.pages)
    if varying:
        result.append(
            nodes.paragraph(
                "",
                f"{varying} output{'s' if varying != 1 else ''} changed only in values their cells declare as "
                "varying (timings), as expected; those values are masked, and the rest of each output was compared.",
            )
        )
    return result


def write_files(app: Sphinx, exception: Exception | None) -> None:
    """recordings.json in the site, for the next build to compare with; changes.json beside the site."""
    if exception is not None or app.builder.format != "html":
        return
    changes.write_recordings(Path(app.outdir, changes.RECORDINGS), new_recordings(app))
    report = build_report(app)
    if report is not None:
        Path(app.outdir).parent.joinpath("changes.json").write_text(
            json.dumps(report.to_json(), indent=2), encoding="utf-8"
        )

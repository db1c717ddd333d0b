"""Turn an executed page's doctree into the published page, at ``doctree-read``.

For every executed page (a lesson or a notebook page in docs/), after myst-nb has run it: report the run's
problems, put the run stamp under the title, make the notebook that myst-nb's ``{nb-download}`` offers the one
the page shows, and record the page in the course domain; for a lesson, also check the figures, fill the
transcript and write the downloads.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from docutils import nodes
from sphinx.application import Sphinx

from ..execution import failures, progress, record
from ..output.render import RUN_ATTRIBUTE
from ..privateapi import executed_notebook_file, execution_data
from ..source import located, pages
from ..source.reader import SKIP_TAG
from . import compatpage, downloads, figures, header, pagerecord, stamps, transcript

#: myst-nb gives a cell's container a class for each of its tags.
_SKIPPED_CELL = f"tag_{SKIP_TAG}"


def say_which_cells_did_not_run(doctree: nodes.document) -> None:
    """Under each cell tagged skip-execution, a line saying the build did not run it: it shows no output."""
    for cell in doctree.findall(nodes.container):
        if _SKIPPED_CELL in cell["classes"]:
            said = [
                nodes.Text("Not run by this build: the cell is tagged "),
                nodes.literal("", SKIP_TAG),
                nodes.Text("."),
            ]
            cell += nodes.paragraph("", "", *said, classes=["cell-not-run"])


def on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    run = doctree.attributes.pop(RUN_ATTRIBUTE, None)
    page = pages.page_being_read(env.docname)
    if page is None:
        return  # a page that executes nothing
    if page.unrecorded:
        located.report(
            env.docname,
            1,
            f"no recording of this page in the shards' recordings ({page.recorded_in}): the --from folders "
            "lack it, or its code or environment changed since; run its shard again with nox -s execute",
            subtype="source",
        )
        progress.page_finished(app, page.page_id, "not recorded", None)
        return
    if run is None or run.notebook is None:
        # Not run: the reader could not read it, or its kernel died (jaxcourse.execution.parser reported that).
        for problem in page.problems:
            located.report(env.docname, problem.line, problem.message, subtype="source")
        progress.page_finished(app, page.page_id, "failed", None)
        return
    kernel = record.collect(run)
    say_which_cells_did_not_run(doctree)
    # What myst-nb's {nb-download} role hands a reader: the notebook as the page shows it, not the build's.
    notebook_file = executed_notebook_file(env, env.docname)
    if notebook_file.is_file():
        nbformat.write(downloads.reader_notebook(run.notebook), notebook_file)
    exec_data = execution_data(env, env.docname)
    failed = failures.report_run(app, page, run, kernel, exec_data)
    succeeded = not failed and bool(exec_data.get("succeeded")) and kernel.verdict is not None
    if not failed and not succeeded and kernel.verdict_index is not None:
        located.report(env.docname, 1, "the page stopped before its verdict cell ran")
    figures_dir = Path(app.srcdir, app.config.course_figures_dir)
    if succeeded:
        figures.check_figures(app, env.docname, doctree, (kernel.verdict or {}).get("figures", []))
    fresh = stamps.ran_in_this_build(kernel.stamp)
    progress.page_finished(
        app, page.page_id, ("fresh" if fresh else "reused") if succeeded else "failed", exec_data.get("runtime")
    )
    links = None
    # Only a site has the downloads; a link checker would find them missing from the sources.
    if page.lesson and succeeded and app.builder.format == "html":
        files = downloads.write_downloads(app, page, run, kernel)
        links = downloads.links(app, env.docname, files) if files else None
    versions = compatpage.header_line(app, page.page_id, env.docname)
    header.insert_header(doctree, page.front.lesson if page.lesson else None, kernel.stamp, fresh, links, versions)
    if page.lesson:
        transcript.fill_recorded_runs(doctree, kernel, succeeded)
    source = Path(env.doc2path(env.docname, base=False)).as_posix()
    env.get_domain("course").note_page(
        pagerecord.PageRecord(
            docname=env.docname,
            page_id=page.page_id,
            title=page.title,
            lesson=dict(page.front.lesson) if page.lesson else None,
            stamp=kernel.stamp,
            runtime=exec_data.get("runtime"),
            succeeded=succeeded,
            error=kernel.unexpected_error.ename if kernel.unexpected_error else exec_data.get("error"),
            recording=pagerecord.recording(kernel, run.shown, figures_dir, source) if succeeded else None,
            source=source,
            warnings=page.warnings,
            not_run=kernel.not_run,
        )
    )

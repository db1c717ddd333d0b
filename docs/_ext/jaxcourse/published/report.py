"""The execution report: every executed page of this build, as a site page and as execution.json."""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from .pagerecord import PageRecord
from .placeholders import execution_report
from .stamps import ran_in_this_build, stamp_iso, stamp_time

COLUMNS = ("Page", "Status", "Run time (s)", "JAX", "Run at (UTC)", "Recording")


def pages_to_reread(app: Sphinx, env, added, changed, removed) -> list[str]:
    """Report pages read what every page recorded, so they are read again each build."""
    return list(env.get_domain("course").report_pages)


def ordered_pages(app: Sphinx) -> list[PageRecord]:
    """Lessons in course order, then the other executed pages by name."""
    return sorted(app.env.get_domain("course").pages.values(), key=lambda page: page.sort_key)


def on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for placeholder in list(doctree.findall(execution_report)):
        placeholder.replace_self(_table(app, docname, ordered_pages(app)))


def table_row(cells: list[nodes.Node]) -> nodes.row:
    """A docutils table row, one entry per cell (a paragraph as it is, any other node wrapped in one)."""
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += cell if isinstance(cell, nodes.paragraph) else nodes.paragraph("", "", cell)
        row += entry
    return row


def build_table(classes: list[str], head: tuple[str, ...], rows: list[nodes.row]) -> nodes.table:
    """A docutils table of columns of equal width: a header row of ``head``, then ``rows``."""
    group = nodes.tgroup(cols=len(head))
    group.extend(nodes.colspec(colwidth=1) for _ in head)
    group += nodes.thead("", table_row([nodes.Text(text) for text in head]))
    group += nodes.tbody("", *rows)
    return nodes.table("", group, classes=classes)


def page_link(app: Sphinx, fromdocname: str, docname: str, text: str) -> nodes.reference:
    """A link to the page ``docname``, relative to the page ``fromdocname``."""
    return nodes.reference("", text, internal=True, refuri=app.builder.get_relative_uri(fromdocname, docname))


def _table(app: Sphinx, fromdocname: str, pages: list[PageRecord]) -> nodes.table:
    rows = []
    for page in pages:
        stamp = page.stamp or {}
        link = page_link(app, fromdocname, page.docname, page.page_id)
        status = "passed" if page.succeeded else f"failed ({page.error or 'no verdict'})"
        if page.warnings:
            lines = ", ".join(str(warning["line"]) for warning in page.warnings)
            status += f"; stderr shown at line{'s' if len(page.warnings) > 1 else ''} {lines}"
        if page.not_run:
            lines = ", ".join(map(str, page.not_run))
            status += f"; not run (skip-execution): the cell{'s' if len(page.not_run) > 1 else ''} at {lines}"
        runtime = f"{page.runtime:.1f}" if page.runtime is not None else "–"
        texts = [status, runtime, stamp.get("jax", "–"), stamp_time(stamp) if stamp else "–", recording(page)]
        row = table_row([link, *map(nodes.Text, texts)])
        row["classes"].append("passed" if page.succeeded else "failed")
        rows.append(row)
    return build_table(["execution-report"], COLUMNS, rows)


def recording(page: PageRecord) -> str:
    """'fresh' when this build's kernel ran the page, else where its recording came from.

    Decided now, not when the page was read: an unchanged page is not read again by
    an incremental build, and its recording is then an earlier build's.
    """
    if not page.stamp:
        return "–"
    if ran_in_this_build(page.stamp):
        return "fresh"
    return f"reused: recorded {stamp_time(page.stamp)}, code and environment unchanged since"


def write_json(app: Sphinx, exception: Exception | None) -> None:
    """The same report as data, for nox sessions and the benchmark: <outdir>/execution.json."""
    if exception is not None or app.builder.format != "html":
        return
    rows = {
        page.page_id: {
            "docname": page.docname,
            "kind": "lesson" if page.is_lesson else "page",
            "title": page.title,
            "succeeded": page.succeeded,
            "runtime_seconds": page.runtime,
            "fresh": ran_in_this_build(page.stamp),
            "stamp": page.stamp,
            "started": stamp_iso(page.stamp) if page.stamp else None,
            "warnings": page.warnings,
            "not_run": page.not_run,
        }
        for page in ordered_pages(app)
    }
    Path(app.outdir, "execution.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")

"""Fill the execution report table once every page has been read."""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from .lessonpage import ran_in_this_build, stamp_iso
from .nodes import execution_report

COLUMNS = ("Lesson", "Status", "Run time (s)", "JAX", "Run at (UTC)", "Recording")


def pages_to_reread(app: Sphinx, env, added, changed, removed) -> list[str]:
    """Report pages read what every lesson recorded, so they are read again each build."""
    return list(env.get_domain("course").report_pages)


def on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    placeholders = list(doctree.findall(execution_report))
    if not placeholders:
        return
    lessons = app.env.get_domain("course").lessons
    ordered = sorted(lessons.items(), key=lambda item: (item[1]["meta"]["phase"], item[1]["meta"]["order"]))
    for placeholder in placeholders:
        placeholder.replace_self(_table(app, docname, ordered))


def _row(cells: list[nodes.Node]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += cell if isinstance(cell, nodes.paragraph) else nodes.paragraph("", "", cell)
        row += entry
    return row


def _table(app: Sphinx, fromdocname: str, lessons: list[tuple[str, dict]]) -> nodes.table:
    table = nodes.table(classes=["execution-report"])
    group = nodes.tgroup(cols=len(COLUMNS))
    table += group
    group.extend(nodes.colspec(colwidth=1) for _ in COLUMNS)
    head = nodes.thead()
    head += _row([nodes.Text(column) for column in COLUMNS])
    group += head
    body = nodes.tbody()
    for docname, lesson in lessons:
        stamp = lesson["stamp"] or {}
        link = nodes.reference("", lesson["meta"]["id"], internal=True)
        link["refuri"] = app.builder.get_relative_uri(fromdocname, docname)
        status = "passed" if lesson["succeeded"] else f"failed ({lesson['error'] or 'no verdict'})"
        runtime = f"{lesson['runtime']:.1f}" if lesson["runtime"] is not None else "–"
        row = _row(
            [
                link,
                nodes.Text(status),
                nodes.Text(runtime),
                nodes.Text(stamp.get("jax", "–")),
                nodes.Text(stamp_iso(stamp) if stamp else "–"),
                nodes.Text(recording(lesson)),
            ]
        )
        row["classes"].append("passed" if lesson["succeeded"] else "failed")
        body += row
    group += body
    return table


def recording(lesson: dict) -> str:
    """'fresh' when this build's kernel ran the lesson, else where its recording came from.

    Decided now, not when the lesson was read: an unchanged lesson is not read again by
    an incremental build, and its recording is then an earlier build's.
    """
    if not lesson["stamp"]:
        return "–"
    if ran_in_this_build(lesson["stamp"]):
        return "fresh"
    return f"reused: recorded {stamp_iso(lesson['stamp'])}, code and environment unchanged since"


def write_json(app: Sphinx, exception: Exception | None) -> None:
    """The same report as data, for nox sessions and the benchmark: <outdir>/execution.json."""
    if exception is not None or app.builder.format != "html":
        return
    lessons = app.env.get_domain("course").lessons
    rows = {
        record["meta"]["id"]: {
            "docname": docname,
            "succeeded": record["succeeded"],
            "runtime_seconds": record["runtime"],
            "fresh": ran_in_this_build(record["stamp"]),
            "stamp": record["stamp"],
        }
        for docname, record in sorted(lessons.items())
    }
    Path(app.outdir, "execution.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")

"""Turn an executed lesson's doctree into the published page.

Runs at ``doctree-read``, after myst-nb has executed the lesson: it reports a
failed run as one located error, adds the header and run stamp under the
title, fills the "Recorded reference execution" transcript, checks that every
figure on the page was written by this run, and records the lesson in the
course domain.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from . import downloads, frontmatter, record
from .nodes import recorded_run

logger = logging.getLogger(__name__)


def is_lesson(app: Sphinx, docname: str) -> bool:
    prefix = app.config.course_lessons_dir.strip("/") + "/"
    return docname.startswith(prefix) and not Path(docname).name.startswith("_")


def on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    docname = env.docname
    if not is_lesson(app, docname):
        return
    path = Path(env.doc2path(docname))
    front, problems = frontmatter.read_lesson(path)
    if front is None or problems:
        return  # reported at source-read, and replaced by a stub page
    kernel = record.collect(doctree)
    exec_data = (getattr(env, "nb_metadata", {}).get(docname) or {}).get("exec_data") or {}
    succeeded = bool(exec_data.get("succeeded")) and kernel.verdict is not None
    if not succeeded:
        _report_failure(app, path, docname, front, kernel, exec_data)
    else:
        _check_figures(app, path, doctree, kernel)
    files = downloads.write_downloads(app, docname, path, front.lesson["title"]) if succeeded else None
    _insert_header(doctree, front.lesson, kernel.stamp, downloads.links(docname, files) if files else None)
    _fill_recorded_runs(doctree, kernel, succeeded)
    for cell in (kernel.setup_cell, kernel.verdict_cell):
        if cell is not None and cell.parent is not None:
            cell.parent.remove(cell)
    env.get_domain("course").note_lesson(
        docname,
        {
            "meta": dict(front.lesson),
            "stamp": kernel.stamp,
            "runtime": exec_data.get("runtime"),
            "method": exec_data.get("method"),
            "succeeded": succeeded,
            "error": exec_data.get("error"),
        },
    )


def _report_failure(
    app: Sphinx, path: Path, docname: str, front: frontmatter.FrontMatter, kernel: record.KernelRecord, exec_data: dict
) -> None:
    """One error naming the lesson file, the line of the failing cell and the error."""
    cell = record.failing_cell(kernel)
    error_name = exec_data.get("error") or "no verdict"
    summary, line_in_cell = record.error_summary(cell) if cell is not None else (None, None)
    if error_name == "CellTimeoutError":
        lesson_timeout = (front.data.get("mystnb") or {}).get("execution_timeout")
        where_set = "set in the lesson's front matter" if lesson_timeout else "nb_execution_timeout in conf.py"
        timeout = lesson_timeout or app.env.mystnb_config.execution_timeout
        summary = (
            f"CellTimeoutError: the cell ran past the per-cell timeout ({timeout} s, {where_set}; "
            "a lesson may change it with 'mystnb: {execution_timeout: N}' in its front matter)"
        )
    elif summary is None:
        summary = exec_data.get("error") or "the lesson stopped before its verdict cell ran"
    line = _cell_line(path, cell, line_in_cell)
    report = Path(app.outdir, "reports", *(docname + ".err.log").split("/"))
    where = f"; full traceback: {report}" if report.exists() else ""
    if cell is kernel.setup_cell and cell is not None:
        summary = f"the course runtime failed to start in the kernel: {summary}"
    logger.error(f"cell failed: {summary}{where}", location=(docname, line), type="course", subtype="exec")


def _cell_line(path: Path, cell: nodes.Element | None, line_in_cell: int | None) -> int:
    """1-based line in the lesson file of the failing statement (or the cell's first line)."""
    if cell is None:
        return 1
    sources = [block for block in cell.findall(nodes.literal_block) if "output" not in block["classes"]]
    if not sources:
        return cell.line or 1
    code_lines = sources[0].astext().splitlines()
    file_lines = path.read_text(encoding="utf-8").splitlines()
    # myst-nb marks a cell with a line inside it; find where its code really starts.
    first = next((text for text in code_lines if text.strip()), "")
    offset = next((i for i, text in enumerate(code_lines) if text.strip()), 0)
    candidates = [i + 1 - offset for i, text in enumerate(file_lines) if text == first]
    if not candidates:
        return cell.line or 1
    anchor = cell.line or candidates[0]
    start = min(candidates, key=lambda number: abs(number - anchor))
    return start + (line_in_cell - 1 if line_in_cell else 0)


def _check_figures(app: Sphinx, path: Path, doctree: nodes.document, kernel: record.KernelRecord) -> None:
    """Every image taken from figures/ must have been written by this run."""
    figures_dir = Path(app.srcdir, app.config.course_figures_dir).resolve()
    written = set(kernel.verdict.get("figures", []))
    for image in doctree.findall(nodes.image):
        target = (path.parent / image["uri"]).resolve()
        if target.parent == figures_dir and target.name not in written:
            logger.error(
                f"figure {target.relative_to(app.srcdir)} was not generated by this run; "
                "call save_figure(...) for it in a hidden cell of the lesson",
                location=image,
                type="course",
                subtype="figure",
            )
        if target.parent == figures_dir and not image.get("alt"):
            logger.error(
                "figure has no alt text; add ':alt:' to the figure", location=image, type="course", subtype="figure"
            )


def _stamp_time(stamp: dict) -> str:
    started = datetime.datetime.fromisoformat(stamp["started"])
    return started.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def stamp_iso(stamp: dict) -> str:
    """The run's start to the second, as ISO 8601 (the kernel records microseconds)."""
    started = datetime.datetime.fromisoformat(stamp["started"])
    return started.astimezone(datetime.UTC).isoformat(timespec="seconds")


def _insert_header(
    doctree: nodes.document, lesson: dict, stamp: dict | None, download_links: nodes.Node | None
) -> None:
    """Phase, time and device under the title, then where and when this page ran."""
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None or not section.children or not isinstance(section[0], nodes.title):
        return
    header = nodes.container(classes=["lesson-header"])
    phase = f"Phase {lesson['phase']:02d}: {lesson['phase_title']}"
    meta = f"{phase} · about {lesson['minutes']} minutes · {lesson['device']}"
    header += nodes.paragraph("", meta, classes=["lesson-meta"])
    if stamp:
        text = (
            f"Executed by this build on {stamp['backend'].upper()} ({stamp['device_kind']}) at "
            f"{_stamp_time(stamp)} · JAX {stamp['jax']} · jaxlib {stamp['jaxlib']} · Python {stamp['python']}"
        )
        stamp_node = nodes.paragraph("", "", classes=["run-stamp"])
        stamp_node += nodes.inline("", text)
        header += stamp_node
    if download_links is not None:
        header += download_links
    section.insert(1, header)


def _fill_recorded_runs(doctree: nodes.document, kernel: record.KernelRecord, succeeded: bool) -> None:
    for placeholder in list(doctree.findall(recorded_run)):
        if not succeeded or kernel.stamp is None:
            replacement = [nodes.paragraph("", "This lesson did not run to completion in this build.")]
        else:
            stamp = kernel.stamp
            summary = nodes.paragraph(
                "",
                f"{stamp['backend'].upper()} run: {stamp_iso(stamp)}. JAX {stamp['jax']}.",
                classes=["recorded-stamp"],
            )
            transcript = "".join(kernel.transcript)
            block = nodes.literal_block(transcript, transcript, classes=["recorded-transcript"], language="text")
            replacement = [summary, block]
        placeholder.replace_self(replacement)

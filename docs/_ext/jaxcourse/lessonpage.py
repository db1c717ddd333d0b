"""Turn an executed notebook's doctree into the published page.

Runs at ``doctree-read``, after myst-nb has executed the notebook. For every
executed notebook it reports a failed run as one located error (a cell that
raised without the ``raises-exception`` tag, or one with the tag that raised
nothing). For a lesson it also adds the header and run stamp under the title,
fills the "Recorded reference execution" transcript, checks that every figure
on the page was written by this run, writes the downloads and records the
lesson in the course domain.
"""

from __future__ import annotations

import datetime
import re
import time
from pathlib import Path

from docutils import nodes
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.application import Sphinx
from sphinx.util import logging

from . import changes, downloads, frontmatter, lessonsource, record
from .nodes import recorded_run
from .render import RUN_ATTRIBUTE

logger = logging.getLogger(__name__)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# When this build started (builder-inited, in the main process; parallel readers inherit it).
_build = {"started": time.time()}


def note_build_start(app: Sphinx) -> None:
    _build["started"] = time.time()


def ran_in_this_build(stamp: dict | None) -> bool:
    """Whether this build's own kernel took the stamp (else the recording came from a cache)."""
    return stamp is not None and stamp_seconds(stamp) >= _build["started"]


def is_lesson(app: Sphinx, docname: str) -> bool:
    prefix = app.config.course_lessons_dir.strip("/") + "/"
    return docname.startswith(prefix) and not Path(docname).name.startswith("_")


def on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    docname = env.docname
    run = doctree.attributes.pop(RUN_ATTRIBUTE, None)
    if run is None:
        return  # not an executed notebook
    path = Path(env.doc2path(docname))
    source = lessonsource.parse(path.read_text(encoding="utf-8"))
    kernel = record.collect(run)
    exec_data = NbMetadataCollector.get_exec_data(env, docname) or {}
    failed = _report_failures(app, path, docname, source, kernel, exec_data)
    if not is_lesson(app, docname):
        return
    front, problems = frontmatter.read_lesson(path)
    if front is None or problems:
        return  # reported at source-read, and replaced by a stub page
    succeeded = not failed and bool(exec_data.get("succeeded")) and kernel.verdict is not None
    if not failed and not succeeded and kernel.verdict_index is not None:
        _report(app, docname, 1, "the lesson stopped before its verdict cell ran")
    # (Without a verdict cell at all, an unclosed fence swallowed it: reported at source-read.)
    if succeeded:
        _check_figures(app, docname, doctree, kernel)
    fresh = ran_in_this_build(kernel.stamp)
    files = downloads.write_downloads(app, docname, path, front, run, source, kernel) if succeeded else None
    _insert_header(doctree, front.lesson, kernel.stamp, fresh, downloads.links(docname, files) if files else None)
    _fill_recorded_runs(doctree, kernel, succeeded)
    env.get_domain("course").note_lesson(
        docname,
        {
            "meta": dict(front.lesson),
            "stamp": kernel.stamp,
            "runtime": exec_data.get("runtime"),
            "succeeded": succeeded,
            "error": (kernel.unexpected_error.ename if kernel.unexpected_error else exec_data.get("error")),
            "recording": recording(app, path, source, run, kernel) if succeeded else None,
        },
    )


def recording(app: Sphinx, path: Path, source: lessonsource.LessonSource, run, kernel: record.KernelRecord) -> dict:
    """This run's entry of recordings.json: what each cell showed, by line, and each figure's hash."""
    cells = [
        {
            "line": fence.line,
            "code": changes.digest(kernel.sources[index].encode()),
            "tags": fence.tags,
            "shown": "".join(text for _, text in run.shown.get(index, [])),
        }
        for index, fence in zip(kernel.author_cells, source.code_cells(), strict=False)
    ]
    figures_dir = Path(app.srcdir, app.config.course_figures_dir)
    figures = {
        name: changes.digest((figures_dir / name).read_bytes())
        for name in kernel.verdict.get("figures", [])
        if (figures_dir / name).is_file()
    }
    return changes.lesson_recording(kernel.stamp, cells, figures, f"{app.config.course_lessons_dir}/{path.name}")


def _report(app: Sphinx, docname: str, line: int, message: str) -> None:
    logger.error(message, location=(docname, line), type="course", subtype="exec")


def _report_failures(
    app: Sphinx,
    path: Path,
    docname: str,
    source: lessonsource.LessonSource,
    kernel: record.KernelRecord,
    exec_data: dict,
) -> bool:
    """One located error per failure of this notebook's run; True if there was any."""
    cells = dict(zip(kernel.author_cells, source.code_cells(), strict=False))
    failed = False
    for index in kernel.quiet_raisers:
        cell = cells.get(index)
        _report(
            app,
            docname,
            cell.line if cell else 1,
            "expected an exception: this cell is tagged raises-exception but ran without raising",
        )
        failed = True
    if exec_data.get("succeeded", True) and kernel.unexpected_error is None:
        return failed
    where = ""
    if exec_data.get("traceback"):
        report = traceback_report(app, docname, exec_data["traceback"])
        where = f"; full traceback: {report}"
    error = kernel.unexpected_error
    if exec_data.get("error") == "CellTimeoutError" or (error and error.ename == "KeyboardInterrupt"):
        summary = _timeout_summary(app, path)
    elif error is not None:
        summary = error.summary.splitlines()[0] if error.summary else error.ename
    else:
        summary = exec_data.get("error") or "the notebook did not run to the end"
    index = error.cell_index if error is not None else kernel.last_started
    line_in_cell = error.line_in_cell if error is not None else None
    if index is not None and index == kernel.setup_index:
        summary = f"the course runtime failed to start in the kernel: {summary}"
        line = 1
    else:
        line = _code_line(cells.get(index), run_source(kernel, index), line_in_cell)
    _report(app, docname, line, f"cell failed: {summary}{where}")
    return True


def traceback_report(app: Sphinx, docname: str, traceback: str) -> Path:
    """Save a failed run's full traceback (from myst-nb's execution data) beside the failed build."""
    path = Path(app.outdir, "reports", *(docname + ".err.log").split("/"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_ANSI.sub("", traceback), encoding="utf-8")
    return path


def run_source(kernel: record.KernelRecord, index: int | None) -> str | None:
    return None if index is None else kernel.sources.get(index)


def _timeout_summary(app: Sphinx, path: Path) -> str:
    front, _ = frontmatter.read_lesson(path) if path.exists() else (None, [])
    lesson_timeout = ((front.data.get("mystnb") if front else None) or {}).get("execution_timeout")
    where_set = "set in the lesson's front matter" if lesson_timeout else "nb_execution_timeout in conf.py"
    timeout = lesson_timeout or app.config.nb_execution_timeout
    return (
        f"CellTimeoutError: the cell ran past the per-cell timeout ({timeout} s, {where_set}; "
        "a lesson may change it with 'mystnb: {execution_timeout: N}' in its front matter)"
    )


def _code_line(cell: lessonsource.Fence | None, executed: str | None, line_in_cell: int | None) -> int:
    """1-based line in the file of the cell's ``line_in_cell``-th line of code (or of the cell)."""
    if cell is None:
        return 1
    if not cell.body or line_in_cell is None:
        return cell.line
    # The executed source is the cell's body; find where it starts among the fence's lines.
    body = [text for _, text in cell.body]
    code = (executed or "").splitlines()
    start = next(
        (i for i in range(len(body)) if body[i : i + len(code)] == code),
        0,
    )
    position = start + line_in_cell - 1
    return cell.body[min(position, len(cell.body) - 1)][0]


def figure_file(app: Sphinx, docname: str, image: nodes.image) -> Path:
    """The file an image node shows, whichever way its uri is written at this point.

    Sphinx's image collector (itself a doctree-read handler) rewrites ``uri`` from
    the author's document-relative path to a source-root-relative one and adds
    ``candidates``; which one a handler sees depends on the order the handlers ran.
    Checked against Sphinx 9.0.4; tests/test_lessonpage.py covers both forms.
    """
    if "candidates" in image:  # already rewritten relative to the source root
        return Path(app.srcdir, image["uri"]).resolve()
    return Path(app.env.relfn2path(image["uri"], docname)[1]).resolve()


def _check_figures(app: Sphinx, docname: str, doctree: nodes.document, kernel: record.KernelRecord) -> None:
    """Every image taken from figures/ must have been written by this run and have alt text."""
    figures_dir = Path(app.srcdir, app.config.course_figures_dir).resolve()
    written = set(kernel.verdict.get("figures", []))
    for image in doctree.findall(nodes.image):
        target = figure_file(app, docname, image)
        if target.parent != figures_dir or not target.exists():
            continue  # a missing file is Sphinx's own "image file not readable" error
        line = image.line or (image.parent.line if image.parent is not None else None) or 1
        if target.name not in written:
            logger.error(
                f"figure {target.relative_to(Path(app.srcdir).resolve())} was not drawn by this run; "
                "call save_figure(...) for it in a hidden cell of the lesson",
                location=(docname, line),
                type="course",
                subtype="figure",
            )
        if not image.get("alt"):
            logger.error(
                "figure has no alt text; add ':alt:' to the figure",
                location=(docname, line),
                type="course",
                subtype="figure",
            )


def stamp_seconds(stamp: dict) -> float:
    return datetime.datetime.fromisoformat(stamp["started"]).timestamp()


def _stamp_time(stamp: dict) -> str:
    started = datetime.datetime.fromisoformat(stamp["started"])
    return started.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def stamp_iso(stamp: dict) -> str:
    """The run's start to the second, as ISO 8601 (the kernel records microseconds)."""
    started = datetime.datetime.fromisoformat(stamp["started"])
    return started.astimezone(datetime.UTC).isoformat(timespec="seconds")


def devices_text(stamp: dict) -> str | None:
    """'8 simulated CPU devices' for a lesson that asked for them, else None."""
    if not stamp.get("simulated_devices"):
        return None
    count = stamp.get("device_count", 1)
    return f"{count} simulated {stamp['backend'].upper()} device{'s' if count != 1 else ''}"


REUSE_REASON = "from the execution cache: its code and the build environment are unchanged since that run"


def stamp_text(stamp: dict, fresh: bool) -> str:
    where = f"on {stamp['backend'].upper()} ({stamp['device_kind']}) at {_stamp_time(stamp)}"
    parts = [f"Executed by this build {where}" if fresh else f"Recorded {where}, reused by this build {REUSE_REASON}"]
    if devices_text(stamp):
        parts.append(devices_text(stamp))
    parts += [f"JAX {stamp['jax']}", f"jaxlib {stamp['jaxlib']}", f"Python {stamp['python']}"]
    return " · ".join(parts)


def _insert_header(
    doctree: nodes.document, lesson: dict, stamp: dict | None, fresh: bool, download_links: nodes.Node | None
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
        stamp_node = nodes.paragraph("", "", classes=["run-stamp", "fresh" if fresh else "reused"])
        stamp_node += nodes.inline("", stamp_text(stamp, fresh))
        header += stamp_node
    if download_links is not None:
        header += download_links
    section.insert(1, header)


def transcript_summary(kernel: record.KernelRecord) -> str:
    stamp = kernel.stamp
    lines = "".join(kernel.transcript).splitlines()
    last = lines[-1] if lines else ""
    parts = [f"{stamp['backend'].upper()} run {stamp_iso(stamp)}", f"JAX {stamp['jax']}"]
    if devices_text(stamp):
        parts.append(devices_text(stamp))
    parts.append(f"{len(lines)} printed line{'s' if len(lines) != 1 else ''}, ending with {last}")
    return "Transcript: " + " · ".join(parts)


def _fill_recorded_runs(doctree: nodes.document, kernel: record.KernelRecord, succeeded: bool) -> None:
    for placeholder in list(doctree.findall(recorded_run)):
        if not succeeded or kernel.stamp is None:
            replacement = [nodes.paragraph("", "This lesson did not run to completion in this build.")]
        else:
            # Collapsed behind its summary: the transcript holds the answers to the experiments
            # and exercises that follow it on the page.
            box = nodes.admonition(classes=["dropdown", "recorded-run"])
            box += nodes.title("", transcript_summary(kernel))
            transcript = "".join(kernel.transcript)
            box += nodes.literal_block(transcript, transcript, classes=["recorded-transcript"], language="none")
            replacement = [box]
        placeholder.replace_self(replacement)

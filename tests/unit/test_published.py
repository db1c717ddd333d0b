"""The published stage on doctrees built in memory, with a fake ``app``: no site build, no kernel.

The executed page's doctree (``executedpage``, ``header``, ``transcript``), the course domain and the records
it keeps (``domain``, ``pagerecord``), the site's own pages and data (``report``, ``changepage``,
``compatpage``, ``directives``, ``searchsummaries``) and the placeholders they fill (``placeholders``).
"""

from __future__ import annotations

import json
import types
import warnings
from pathlib import Path
from unittest import mock

import nbformat
import pytest
import tiny
from docutils import nodes
from docutils.core import publish_doctree
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document
from jaxcourse.execution import changes, record
from jaxcourse.output.render import RUN_ATTRIBUTE, ExecutedRun
from jaxcourse.published import (
    changepage,
    compatpage,
    directives,
    domain,
    downloads,
    executedpage,
    header,
    pagerecord,
    placeholders,
    report,
    searchsummaries,
    stamps,
    transcript,
)
from jaxcourse.runtime import RECORD_MIME
from jaxcourse.source import frontmatter, lessonsource, located, pages, reader
from sphinx import addnodes
from sphinx.util.osutil import relative_uri
from tiny import lesson

STAMP = {"page": "p", **tiny.STAMP}
LESSON_META = {"id": "jit-01", "title": "Compile", "phase": 2, "phase_title": "Transformations", "order": 4}


def new_doc() -> nodes.document:
    return new_document("page.md", get_default_settings(Parser))


def titled_page(title: str = "The title", text: str = "First paragraph.") -> nodes.document:
    document = new_doc()
    section = nodes.section(ids=["the-title"])
    section += nodes.title("", title)
    section += nodes.paragraph("", text)
    document += section
    return document


class Builder:
    """Sphinx's HTML builder's addresses: <docname>.html, relative to the page that links."""

    format = "html"

    def get_relative_uri(self, from_: str, to: str) -> str:
        return relative_uri(f"{from_}.html", f"{to}.html")


def course_domain() -> domain.CourseDomain:
    return domain.CourseDomain(types.SimpleNamespace(domaindata={}))


def page_record(page_id: str, *, lesson_meta: dict | None = None, **fields) -> pagerecord.PageRecord:
    values = {
        "docname": f"lessons/{page_id}" if lesson_meta else page_id,
        "page_id": page_id,
        "title": page_id.title(),
        "lesson": lesson_meta,
        "stamp": STAMP,
        "runtime": 2.25,
        "succeeded": True,
        "error": None,
        "recording": None,
        "source": (f"lessons/{page_id}" if lesson_meta else page_id) + ".md",
        **fields,
    }
    return pagerecord.PageRecord(**values)


# --- placeholders -------------------------------------------------------------------------------------------------


def test_a_leftover_placeholder_is_skipped_with_everything_inside_it():
    document = new_doc()
    for placeholder in placeholders.PLACEHOLDERS:
        document += placeholder("", nodes.paragraph("", f"inside {placeholder.__name__}"))
    document += nodes.paragraph("", "after")
    seen = []

    class Visitor(nodes.SparseNodeVisitor):
        def visit_Text(self, node):
            seen.append(str(node))

    for placeholder in placeholders.PLACEHOLDERS:
        setattr(Visitor, f"visit_{placeholder.__name__}", placeholders.skip_placeholder)
    document.walkabout(Visitor(document))
    assert seen == ["after"]


# --- the course domain and its records ----------------------------------------------------------------------------


def test_the_domain_keeps_each_executed_page_and_forgets_a_page_that_is_read_again():
    course = course_domain()
    course.note_page(page_record("jit-01", lesson_meta=LESSON_META))
    course.note_page(page_record("docs/page"))
    course.fingerprints.update({"lessons/jit-01": "a", "docs/page": "b"})
    course.search_prose["lessons/jit-01"] = {"prose": "x"}
    course.math_characters["lessons/jit-01"] = "∑"
    course.note_report_page("docs/report")
    course.note_report_page("docs/report")
    assert course.report_pages == ["docs/report"]
    assert list(course.lessons) == ["lessons/jit-01"] and set(course.pages) == {"lessons/jit-01", "docs/page"}
    course.clear_doc("lessons/jit-01")
    course.clear_doc("docs/report")
    assert list(course.pages) == ["docs/page"] and course.fingerprints == {"docs/page": "b"}
    assert course.search_prose == {} and course.math_characters == {} and course.report_pages == []


def test_parallel_readers_merge_only_the_documents_they_read():
    course, other = course_domain(), course_domain()
    course.note_report_page("docs/report")
    for name in ("lessons/a", "lessons/b"):
        other.note_page(page_record(name.split("/")[1], lesson_meta=LESSON_META))
        other.fingerprints[name] = name
        other.search_prose[name] = {"prose": name}
        other.math_characters[name] = "x"
    other.note_report_page("docs/report")
    other.note_report_page("docs/changes")
    course.merge_domaindata(["lessons/a", "docs/report", "docs/changes"], other.data)
    assert list(course.pages) == ["lessons/a"] and course.fingerprints == {"lessons/a": "lessons/a"}
    assert course.search_prose == {"lessons/a": {"prose": "lessons/a"}} and list(course.math_characters) == [
        "lessons/a"
    ]
    assert course.report_pages == ["docs/report", "docs/changes"]


def test_lessons_come_in_course_order_then_the_other_pages_by_name():
    records = [
        page_record("docs/b"),
        page_record("late", lesson_meta={**LESSON_META, "phase": 3, "order": 1}),
        page_record("docs/a"),
        page_record("second", lesson_meta={**LESSON_META, "phase": 1, "order": 2}),
        page_record("first", lesson_meta={**LESSON_META, "phase": 1, "order": 1}),
    ]
    ordered = sorted(records, key=lambda page: page.sort_key)
    assert [page.page_id for page in ordered] == ["first", "second", "late", "docs/a", "docs/b"]
    assert [page.is_lesson for page in ordered] == [True, True, True, False, False]


def test_a_recording_holds_what_each_cell_showed_and_the_hash_of_each_figure_the_run_drew(tmp_path):
    (tmp_path / "drawn.svg").write_bytes(b"<svg/>")
    cells = [
        record.CodeCell(2, 10, 11, "print(1)", [], {}),
        record.CodeCell(3, 20, 21, "t = time()", ["varies"], {}),
    ]
    kernel = record.KernelRecord(stamp=STAMP, verdict={"figures": ["drawn.svg", "gone.svg"]}, cells=cells)
    shown = {2: [("stdout", "1\n"), ("display", "<Figure>\n")]}
    entry = pagerecord.recording(kernel, shown, tmp_path, "lessons/p.md")
    assert entry["source"] == "lessons/p.md" and entry["stamp"]["jax"] == "0.10.2"
    assert [(cell["line"], cell["shown"], cell["varies"]) for cell in entry["cells"]] == [
        (10, "1\n<Figure>\n", []),
        (20, "", [changes.NUMBER_PATTERN]),
    ]
    assert entry["cells"][0]["code"] == changes.digest(b"print(1)") != entry["cells"][1]["code"]
    assert entry["figures"] == {"drawn.svg": changes.digest(b"<svg/>")}  # a figure not on disk is not recorded


# --- the execution report -----------------------------------------------------------------------------------------


def report_app(course: domain.CourseDomain, outdir: Path | None = None):
    env = types.SimpleNamespace(get_domain=lambda name: course)
    return types.SimpleNamespace(env=env, builder=Builder(), outdir=str(outdir))


def test_the_execution_report_lists_every_executed_page_with_its_status_time_and_recording(monkeypatch):
    fresh = {**STAMP, "started": "2026-12-01T20:00:00+00:00"}
    course = course_domain()
    course.note_page(page_record("docs/nb", stamp=None, runtime=None, succeeded=False))
    course.note_page(page_record("jit-01", lesson_meta=LESSON_META, stamp=fresh))
    course.note_page(
        page_record("docs/a", succeeded=False, error="ZeroDivisionError", warnings=[{"line": 3}, {"line": 7}])
    )
    monkeypatch.setitem(stamps._build, "started", stamps.stamp_seconds(fresh) - 1)  # STAMP's run was before it
    document = new_doc()
    document += placeholders.execution_report()
    report.on_doctree_resolved(report_app(course), document, "docs/report")
    rows = [[entry.astext() for entry in row.findall(nodes.entry)] for row in document.findall(nodes.row)]
    assert rows[0] == list(report.COLUMNS)
    assert rows[1] == ["jit-01", "passed", "2.2", "0.10.2", "2026-12-01 20:00:00 UTC", "fresh"]
    assert rows[2] == [
        "docs/a",
        "failed (ZeroDivisionError); stderr shown at lines 3, 7",
        "2.2",
        "0.10.2",
        "2026-12-01 19:22:07 UTC",
        "reused: recorded 2026-12-01 19:22:07 UTC, code and environment unchanged since",
    ]
    assert rows[3] == ["docs/nb", "failed (no verdict)", "–", "–", "–", "–"]
    links = [reference["refuri"] for reference in document.findall(nodes.reference)]
    assert links == ["../lessons/jit-01.html", "a.html", "nb.html"]
    assert [row["classes"] for row in document.findall(nodes.row)][1:] == [["passed"], ["failed"], ["failed"]]
    assert not list(document.findall(placeholders.execution_report))


def test_execution_json_has_a_row_per_page_in_course_order(tmp_path, monkeypatch):
    monkeypatch.setitem(stamps._build, "started", stamps.stamp_seconds(STAMP) - 1)
    course = course_domain()
    course.note_page(page_record("docs/a", stamp=None))
    course.note_page(page_record("jit-01", lesson_meta=LESSON_META))
    course.note_report_page("docs/report")
    app = report_app(course, tmp_path)
    report.write_json(app, None)
    rows = json.loads((tmp_path / "execution.json").read_text(encoding="utf-8"))
    assert list(rows) == ["jit-01", "docs/a"]
    assert rows["jit-01"]["kind"] == "lesson" and rows["jit-01"]["fresh"] is True
    assert rows["jit-01"]["started"] == "2026-12-01T19:22:07+00:00" and rows["docs/a"]["started"] is None
    assert report.pages_to_reread(app, app.env, set(), set(), set()) == ["docs/report"]


# --- the change report --------------------------------------------------------------------------------------------


@pytest.fixture
def fresh_earlier_sites():
    changepage._earlier.cache_clear()
    yield
    changepage._earlier.cache_clear()


def recorded(page_id: str, shown: str, source: str, line: int = 5) -> pagerecord.PageRecord:
    cells = [{"line": line, "code": "c1", "tags": [], "varies": [], "shown": shown}]
    docname = source.rsplit(".", 1)[0]
    return page_record(
        page_id, docname=docname, source=source, recording=changes.page_recording(STAMP, cells, {}, source)
    )


def change_app(tmp_path: Path, course: domain.CourseDomain, compare_to: str = "earlier"):
    config = types.SimpleNamespace(course_compare_to=compare_to)
    env = types.SimpleNamespace(get_domain=lambda name: course)
    return types.SimpleNamespace(
        env=env, config=config, srcdir=str(tmp_path), outdir=str(tmp_path / "_build" / "html"), builder=Builder()
    )


def test_the_change_page_shows_each_changed_output_as_a_diff_with_a_link_to_its_page(tmp_path, fresh_earlier_sites):
    (tmp_path / "earlier").mkdir()
    old = {
        "jit-01": recorded("jit-01", "loss 0.5\n", "lessons/jit-01.md").recording,
        "gone": recorded("gone", "x\n", "lessons/gone.md").recording,
        "docs/same": recorded("docs/same", "same\n", "docs/same.md").recording,
    }
    changes.write_recordings(tmp_path / "earlier" / changes.RECORDINGS, old)
    course = course_domain()
    for page in (
        recorded("jit-01", "loss 0.4\n", "lessons/jit-01.md"),
        recorded("docs/same", "same\n", "docs/same.md"),
    ):
        course.note_page(page)
    document = new_doc()
    document += placeholders.change_report()
    changepage.on_doctree_resolved(change_app(tmp_path, course), document, "docs/changes")
    summary, *sections = document.children
    assert summary.astext() == "1 page unchanged; gone removed; jit-01 changed 1 output (line 5)"
    assert [section.next_node(nodes.strong).astext() for section in sections] == ["gone", "jit-01"]
    assert [reference["refuri"] for reference in document.findall(nodes.reference)] == ["../lessons/jit-01.html"]
    (diff,) = document.findall(nodes.literal_block)
    assert "-loss 0.5\n+loss 0.4" in diff.astext() and diff["language"] == "diff"
    assert "Output of the cell at line 5 of lessons/jit-01.md:" in sections[1].astext()


def test_a_changed_ipynb_page_is_linked_by_its_docname(tmp_path, fresh_earlier_sites):
    (tmp_path / "earlier").mkdir()
    old = {"docs/nb": recorded("docs/nb", "1\n", "docs/nb.ipynb").recording}
    changes.write_recordings(tmp_path / "earlier" / changes.RECORDINGS, old)
    course = course_domain()
    course.note_page(recorded("docs/nb", "2\n", "docs/nb.ipynb"))
    document = new_doc()
    document += placeholders.change_report()
    changepage.on_doctree_resolved(change_app(tmp_path, course), document, "docs/changes")
    assert [reference["refuri"] for reference in document.findall(nodes.reference)] == ["nb.html"]


def test_a_build_compared_with_nothing_says_so(tmp_path, fresh_earlier_sites):
    course = course_domain()
    course.note_page(recorded("jit-01", "1\n", "lessons/jit-01.md"))
    for compare_to, said in (("", "This build was not compared"), ("missing", "First build: there is no earlier site")):
        document = new_doc()
        document += placeholders.change_report()
        changepage.on_doctree_resolved(change_app(tmp_path, course, compare_to), document, "docs/changes")
        assert document.astext().startswith(said)


def test_the_recordings_go_into_the_site_and_the_report_beside_it(tmp_path, fresh_earlier_sites):
    course = course_domain()
    course.note_page(recorded("jit-01", "1\n", "lessons/jit-01.md"))
    course.note_page(page_record("docs/failed", succeeded=False, recording=None))
    app = change_app(tmp_path, course, "missing")
    Path(app.outdir).mkdir(parents=True)
    changepage.write_files(app, None)
    assert list(changes.load_recordings(app.outdir)) == ["jit-01"]
    written = json.loads((tmp_path / "_build" / "changes.json").read_text(encoding="utf-8"))
    assert written["compared_with"] is None and written["summary"].startswith("First build")


# --- compatibility with other JAX versions ------------------------------------------------------------------------


def write_lessons(folder: Path, *specs: tuple[str, int, int, int, str]) -> None:
    """(id, phase, order, minutes, phase title) each, as valid lessons titled 'Title of <id>'."""
    folder.mkdir(parents=True, exist_ok=True)
    for lesson_id, phase, order, minutes, phase_title in specs:
        text = (
            lesson(lesson_id, "", title=f"Title of {lesson_id}")
            .replace("phase: 9", f"phase: {phase}")
            .replace("order: 1", f"order: {order}")
            .replace("minutes: 5", f"minutes: {minutes}")
            .replace("phase_title: Test phase", f"phase_title: {phase_title}")
        )
        (folder / f"{lesson_id}.md").write_text(text, encoding="utf-8")


VERDICTS = {
    "0.10.0": {"b-01": {"status": "fail", "where": "lessons/b-01.md:12", "message": "TypeError: `x`"}},
    "0.9.2": {
        "a-01": {"status": "pass", "changed_outputs": 1},
        "b-01": {"status": "pass", "changed_outputs": 0},
        "docs/page": {"status": "pass", "changed_outputs": 2},
    },
}


def compat_app(tmp_path: Path, verdicts: dict | None = VERDICTS):
    if verdicts is not None:
        (tmp_path / "_build").mkdir(exist_ok=True)
        (tmp_path / "_build" / "compat.json").write_text(json.dumps(verdicts), encoding="utf-8")
    dependencies = []
    config = types.SimpleNamespace(course_compatibility="_build/compat.json", course_lessons_dir="lessons")
    env = types.SimpleNamespace(
        note_dependency=dependencies.append,
        srcdir=str(tmp_path),
        found_docs={"lessons/a-01", "lessons/b-01"},
        docname="docs/compatibility",
        config=config,
    )
    app = types.SimpleNamespace(srcdir=str(tmp_path), config=config, env=env, outdir=str(tmp_path / "html"))
    app.builder = Builder()
    env.app = app
    return app, dependencies


def test_verdicts_are_read_in_version_order_not_text_order(tmp_path):
    app, _ = compat_app(tmp_path)
    assert list(compatpage.read_verdicts(compatpage.verdicts_file(app))) == ["0.9.2", "0.10.0"]
    assert compatpage.read_verdicts(tmp_path / "absent.json") == {}


def test_a_page_s_header_says_where_it_passed_and_failed_and_links_to_all_versions(tmp_path):
    app, dependencies = compat_app(tmp_path)
    line = compatpage.header_line(app, "b-01", "lessons/b-01")
    assert line.astext() == "Checked by nox -s compat: passes on JAX 0.9.2; fails on JAX 0.10.0 (all versions)."
    (link,) = line.findall(addnodes.pending_xref)
    assert link["reftarget"] == "/docs/compatibility" and link["refdoc"] == "lessons/b-01"
    assert dependencies == [str(compatpage.verdicts_file(app))]  # read again when the verdicts change
    assert compatpage.header_line(app, "never-checked", "lessons/x") is None
    assert compatpage.header_line(compat_app(tmp_path / "none", None)[0], "b-01", "lessons/b-01") is None


def test_the_compatibility_matrix_has_a_row_per_page_and_a_column_per_version(tmp_path):
    write_lessons(tmp_path / "lessons", ("b-01", 1, 2, 30, "One"), ("a-01", 1, 1, 30, "One"))
    app, _ = compat_app(tmp_path)
    directive = object.__new__(compatpage.CompatibilityMatrix)
    directive.state = types.SimpleNamespace(document=types.SimpleNamespace(settings=types.SimpleNamespace(env=app.env)))
    (table,) = directive.run()
    rows = [[entry.astext() for entry in row.findall(nodes.entry)] for row in table.findall(nodes.row)]
    assert rows == [
        ["Page", "JAX 0.9.2", "JAX 0.10.0"],
        ["Title of a-01", "pass (1 output differs)", "not run"],
        ["Title of b-01", "pass", "fail at lessons/b-01.md:12: TypeError: `x`"],
        ["docs/page", "pass (2 outputs differ)", "not run"],
    ]
    assert [link["reftarget"] for link in table.findall(addnodes.pending_xref)] == ["/lessons/a-01", "/lessons/b-01"]
    message = list(table.findall(nodes.literal))[-1]
    assert message.astext() == "TypeError: `x`"  # a literal: no markup or smart quotes touch the code it quotes


def test_without_verdicts_the_page_is_left_out_and_the_site_publishes_none(tmp_path):
    app, _ = compat_app(tmp_path, None)
    config = types.SimpleNamespace(exclude_patterns=["_build"])
    compatpage.leave_out_page_without_verdicts(app, config)
    assert config.exclude_patterns == ["_build", "docs/compatibility.md"]
    app, _ = compat_app(tmp_path)
    compatpage.leave_out_page_without_verdicts(app, config := types.SimpleNamespace(exclude_patterns=[]))
    assert config.exclude_patterns == []
    Path(app.outdir).mkdir()
    compatpage.publish_verdicts(app, None)
    assert json.loads(Path(app.outdir, "compat.json").read_text(encoding="utf-8")) == VERDICTS


def test_the_execution_report_links_to_the_compatibility_page_when_there_are_verdicts(tmp_path):
    app, _ = compat_app(tmp_path)
    document = new_doc()
    document += [placeholders.execution_report(), nodes.paragraph("", "after")]
    compatpage.link_from_report(app, document, "docs/report")
    assert document[1].astext() == "The same pages under other JAX versions: Which JAX versions this course runs on."
    assert document[1].next_node(nodes.reference)["refuri"] == "compatibility.html"


# --- the home page's directives -----------------------------------------------------------------------------------


def test_a_study_time_reads_as_minutes_or_hours():
    shown = [directives.duration(minutes) for minutes in (1, 45, 60, 245)]
    assert shown == ["1 minute", "45 minutes", "1 h", "4 h 5 min"]


def test_start_here_names_the_first_lesson_and_sums_each_phase(tmp_path):
    write_lessons(
        tmp_path / "lessons",
        ("b-02", 1, 2, 25, "JAX foundations"),
        ("a-01", 1, 1, 45, "JAX foundations"),
        ("c-01", 2, 1, 30, "Transformations"),
        ("unbuilt", 3, 1, 500, "Not in this build"),
    )
    dependencies = []
    env = types.SimpleNamespace(
        srcdir=str(tmp_path),
        found_docs={"lessons/a-01", "lessons/b-02", "lessons/c-01"},
        note_dependency=dependencies.append,
        docname="index",
        config=types.SimpleNamespace(course_lessons_dir="lessons/"),
    )
    directive = object.__new__(directives.StartHere)
    directive.state = types.SimpleNamespace(document=types.SimpleNamespace(settings=types.SimpleNamespace(env=env)))
    (box,) = directive.run()
    first, course, phases = box.children
    assert first.astext() == "Start here: Title of a-01 · a-01 · about 45 minutes"
    assert first.next_node(addnodes.pending_xref)["reftarget"] == "/lessons/a-01"
    assert course.astext().startswith("The course has 2 phases and 3 lessons, about 1 h 40 min of study in all.")
    assert [item.astext() for item in phases.findall(nodes.list_item)] == [
        "Phase 01: JAX foundations · 2 lessons · about 1 h 10 min",
        "Phase 02: Transformations · 1 lesson · about 30 minutes",
    ]
    assert [reference["refid"] for reference in phases.findall(nodes.reference)] == [
        "phase-01-jax-foundations",
        "phase-02-transformations",
    ]
    assert str(tmp_path / "lessons") in dependencies  # a new lesson file changes the home page


# --- the executed page --------------------------------------------------------------------------------------------


def executed_notebook(code_outputs: list, *, succeeded: bool = True) -> nbformat.NotebookNode:
    v4 = nbformat.v4

    def record_output(item):
        return v4.new_output("display_data", data={RECORD_MIME: item})

    setup = v4.new_code_cell("setup", metadata={"tags": ["remove-cell", reader.SETUP_TAG]}, execution_count=1)
    setup.outputs = [record_output({"kind": "stamp", **STAMP})]
    code = v4.new_code_cell("x = 1\nprint(x)\ny = 1 / 0" if not succeeded else "print(1)", execution_count=2)
    code.outputs = code_outputs
    cells = [setup, code]
    if succeeded:
        verdict = v4.new_code_cell("finish", metadata={"tags": ["remove-cell", reader.VERDICT_TAG]}, execution_count=3)
        verdict.outputs = [record_output({"kind": "verdict", "page": "p", "figures": [], "backend": "cpu"})]
        cells.append(verdict)
    notebook = v4.new_notebook(cells=cells)
    notebook.metadata[reader.METADATA_KEY] = {"cells": {"1": {"line": 10, "code_line": 11}}}
    return notebook


@pytest.fixture
def executing(tmp_path, monkeypatch):
    """Read docs/page, a notebook page, as myst-nb leaves it at doctree-read; returns (app, doctree, reported)."""
    monkeypatch.setattr(pages, "_now", {})
    monkeypatch.setitem(stamps._build, "started", stamps.stamp_seconds(STAMP) + 1)  # the run was reused
    text = "---\njupytext: {text_representation: {format_name: myst}}\nkernelspec: {name: python3}\n---\n# A page\n"
    front = frontmatter.parse(text)
    page = pages.Page(
        "docs/page",
        tmp_path / "docs/page.md",
        "docs/page",
        False,
        front,
        frontmatter.execution_settings(front),
        "f",
        tmp_path / "figures",
        source=lessonsource.parse(text),  # the reader's parse, which gives the page its title
    )
    course = course_domain()
    env = types.SimpleNamespace(
        docname="docs/page",
        get_domain=lambda name: course,
        doc2path=lambda docname, base=True: Path(f"{docname}.md"),
        nb_metadata={},
        mystnb_config=types.SimpleNamespace(output_folder=str(tmp_path / "jupyter_execute")),
    )
    config = types.SimpleNamespace(
        course_figures_dir="figures", course_compatibility="_build/compat.json", course_progress=False
    )
    app = types.SimpleNamespace(
        env=env, srcdir=str(tmp_path), outdir=str(tmp_path / "html"), config=config, builder=Builder()
    )

    def read(notebook, exec_data, *, reading=page):
        pages.start_reading(pages.Reading("docs/page", page.path, reading))
        env.nb_metadata["docs/page"] = {"exec_data": exec_data}
        run = ExecutedRun()
        run.notebook = notebook
        run.shown = {1: [("stdout", "1\n")]}
        document = titled_page("A page")
        document[RUN_ATTRIBUTE] = run
        with mock.patch.object(located.logger, "error") as error:
            executedpage.on_doctree_read(app, document)
        reported = [(call.kwargs["location"][1], call.args[0]) for call in error.call_args_list]
        return document, reported, course

    read.page = page
    return read


def test_an_executed_page_gets_its_stamp_under_the_title_and_a_record_in_the_domain(executing):
    stdout = nbformat.v4.new_output("stream", name="stdout", text="1\n")
    document, reported, course = executing(executed_notebook([stdout]), {"succeeded": True, "runtime": 1.5})
    assert reported == [] and RUN_ATTRIBUTE not in document
    section = document[0]
    assert section[1]["classes"] == ["page-header"]
    assert section[1].astext().startswith("Recorded on CPU at 2026-12-01 19:22:07 UTC, reused by this build")
    page = course.pages["docs/page"]
    assert (page.page_id, page.title, page.succeeded, page.runtime, page.error) == (
        "docs/page",
        "A page",
        True,
        1.5,
        None,
    )
    assert page.source == "docs/page.md" and page.recording["cells"][0]["shown"] == "1\n"


def test_a_failed_run_is_reported_at_its_statement_and_recorded_without_a_recording(executing):
    error_output = nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=[])
    line_record = nbformat.v4.new_output(
        "display_data", data={RECORD_MIME: {"kind": "error", "ename": "ZeroDivisionError", "line": 3}}
    )
    notebook = executed_notebook([line_record, error_output], succeeded=False)
    document, reported, course = executing(notebook, {"succeeded": False, "runtime": 0.5})
    assert reported == [(13, "cell failed: ZeroDivisionError: division by zero")]
    page = course.pages["docs/page"]
    assert (page.succeeded, page.error, page.recording) == (False, "ZeroDivisionError", None)


def test_a_page_that_did_not_run_or_was_not_recorded_is_reported_and_not_recorded(executing):
    executing.page.problems = [frontmatter.Problem(7, "the reader and myst-nb disagree")]
    document, reported, course = executing(None, {})
    assert reported == [(7, "the reader and myst-nb disagree")] and course.pages == {}
    executing.page.unrecorded = True
    _, reported, course = executing(None, {})
    ((line, message),) = reported
    assert line == 1 and message.startswith("no recording of this page in the shards' recordings")
    _, reported, course = executing(None, {}, reading=None)  # a prose page: nothing to do
    assert reported == [] and course.pages == {}


def test_a_lesson_header_shows_its_phase_time_device_and_stamp_before_the_versions_and_downloads():
    document = titled_page()
    versions, downloads = nodes.paragraph("", "versions"), nodes.paragraph("", "downloads")
    meta = {**LESSON_META, "minutes": 55, "device": "CPU"}
    header.insert_header(document, meta, STAMP, True, downloads, versions)
    box = document[0][1]
    assert box["classes"] == ["lesson-header"]
    assert [child.astext() for child in box.children] == [
        "Phase 02: Transformations · about 55 minutes · CPU",
        stamps.stamp_text(STAMP, True),
        "versions",
        "downloads",
    ]
    assert box[1]["classes"] == ["run-stamp", "fresh"]


def test_a_page_without_a_stamp_or_a_title_gets_no_header():
    document = titled_page()
    header.insert_header(document, None, None, False, None)
    assert len(document[0]) == 2
    untitled = new_doc()
    untitled += nodes.section("", nodes.paragraph("", "no title"))
    header.insert_header(untitled, LESSON_META, STAMP, True, None)
    assert len(untitled[0]) == 1


def test_the_transcript_is_collapsed_behind_a_summary_of_the_run():
    kernel = record.KernelRecord(stamp=STAMP, transcript=["loss 0.5\n", "loss 0.4\n", "PASS: p\n"])
    summary = transcript.transcript_summary(kernel)
    assert summary == (
        "Transcript: CPU run at 2026-12-01 19:22:07 UTC · JAX 0.10.2 · 8 simulated CPU devices · "
        "3 printed lines, ending with PASS: p"
    )
    document = new_doc()
    document += [placeholders.recorded_run(), placeholders.recorded_run()]
    transcript.fill_recorded_runs(document, kernel, True)
    boxes = list(document.findall(nodes.admonition))
    assert len(boxes) == 2 and boxes[0]["classes"] == ["dropdown", "recorded-run"]
    assert boxes[0][0].astext() == summary and boxes[0][1].astext() == "loss 0.5\nloss 0.4\nPASS: p\n"
    failed = new_doc()
    failed += placeholders.recorded_run()
    transcript.fill_recorded_runs(failed, kernel, False)
    assert failed.astext() == "This lesson did not run to completion in this build."


# --- search summaries ---------------------------------------------------------------------------------------------

SEARCHED_PAGE = r"""
Compile a function
==================

.. container:: lesson-header

   Phase 02 · about 55 minutes · CPU

What you will be able to do
---------------------------

- Compile a function with *jit*
- Measure :math:`\frac{a}{b}` in seconds.

Why compile
-----------

A compiled function runs :math:`\mathrm{fast}` once traced.

.. code-block:: python

   jax.jit(f)

.. container:: dropdown

   The answer, hidden.

Last words.
"""


def test_a_search_snippet_quotes_the_objectives_and_the_prose_without_header_code_or_answers():
    prose = searchsummaries.page_prose(publish_doctree(SEARCHED_PAGE))
    assert prose == {
        "objectives": "Compile a function with jit. Measure fracab in seconds.",
        "prose": "A compiled function runs mathrmfast once traced. Last words.",
    }


def test_a_search_snippet_keeps_a_page_s_opening_prose_within_its_limit_cut_at_a_word():
    document = new_doc()
    paragraphs = [f"Paragraph {number} says something." for number in range(100)]
    document += [nodes.paragraph("", text) for text in paragraphs]
    prose = searchsummaries.page_prose(document)["prose"]
    everything = " ".join(paragraphs)
    assert searchsummaries.PROSE_LIMIT - 20 < len(prose) <= searchsummaries.PROSE_LIMIT
    assert everything.startswith(prose) and everything[len(prose)] == " "  # cut between two words


def test_search_uses_the_course_scorer_and_one_data_file_of_the_pages_in_the_site(tmp_path):
    config = types.SimpleNamespace(html_search_scorer="", html_show_search_summary=True)
    searchsummaries.configure(None, config)
    assert config.html_search_scorer == str(searchsummaries.SCORER) and config.html_show_search_summary is False
    own = types.SimpleNamespace(html_search_scorer="mine.js", html_show_search_summary=True)
    searchsummaries.configure(None, own)
    assert own.html_search_scorer == "mine.js"
    course = course_domain()
    course.search_prose.update({"b": {"prose": "é"}, "a": {"prose": "x"}, "removed": {"prose": "y"}})
    env = types.SimpleNamespace(get_domain=lambda name: course, all_docs={"a": 0, "b": 0})
    app = types.SimpleNamespace(
        env=env, outdir=str(tmp_path), builder=types.SimpleNamespace(format="html", search=True)
    )
    searchsummaries.write_data(app, None)
    written = (tmp_path / "_static" / searchsummaries.DATA_FILE).read_text(encoding="utf-8")
    assert written.startswith('window.COURSE_SEARCH = {"a":{"prose":"x"},"b":{"prose":"é"}};\n')
    assert written.endswith(searchsummaries.SNIPPETS.read_text(encoding="utf-8"))
    scripts = []
    app.add_js_file = scripts.append
    searchsummaries.add_to_search_page(app, "index", "page.html", {}, None)
    searchsummaries.add_to_search_page(app, "search", "search.html", {}, None)
    assert scripts == [searchsummaries.DATA_FILE]


def test_a_build_of_chosen_pages_has_no_search_and_a_short_page_for_each_page_it_did_not_write(tmp_path):
    from jaxcourse.published import partialbuild
    from sphinx.builders.html import StandaloneHTMLBuilder

    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "chosen.html").write_text("written by Sphinx", encoding="utf-8")
    titles = {"docs/index": "Home", "lessons/chosen": "Chosen", "lessons/other": "<Other> & more"}
    builder = types.SimpleNamespace(
        format="html", search=True, get_target_uri=lambda docname, typ=None: f"{docname}.html"
    )
    builder.get_relative_uri = lambda source, target: StandaloneHTMLBuilder.get_relative_uri(builder, source, target)
    app = types.SimpleNamespace(
        config=types.SimpleNamespace(course_only_pages=["lessons/chosen"], root_doc="docs/index"),
        builder=builder,
        outdir=str(tmp_path),
        env=types.SimpleNamespace(
            found_docs=set(titles), titles={name: nodes.title(text=title) for name, title in titles.items()}
        ),
    )
    partialbuild.leave_out_search(app)
    assert builder.search is False
    partialbuild.write_placeholders(app, None)
    assert (tmp_path / "lessons" / "chosen.html").read_text(encoding="utf-8") == "written by Sphinx"
    other = (tmp_path / "lessons" / "other.html").read_text(encoding="utf-8")
    assert "<title>&lt;Other&gt; &amp; more</title>" in other and "<h1>&lt;Other&gt; &amp; more</h1>" in other
    assert f"“&lt;Other&gt; &amp; more” {partialbuild.LEFT_OUT}" in other and '<a href="../docs/index.html">' in other
    assert partialbuild.SEARCH_LEFT_OUT in (tmp_path / "search.html").read_text(encoding="utf-8")
    assert "Home</a>" not in (tmp_path / "docs" / "index.html").read_text(encoding="utf-8")  # it is home

    whole = types.SimpleNamespace(**{**vars(app), "config": types.SimpleNamespace(course_only_pages=[])})
    (tmp_path / "lessons" / "other.html").unlink()
    whole.builder.search = True
    partialbuild.leave_out_search(whole)
    partialbuild.write_placeholders(whole, None)
    assert whole.builder.search is True and not (tmp_path / "lessons" / "other.html").exists()


def test_the_notebook_a_reader_downloads_is_the_page_s_cells_and_shown_outputs_in_their_own_kernel():
    """What {nb-download} offers on any executed page: nothing of the build's, nothing the page did not show."""
    v4 = nbformat.v4
    shown = v4.new_output("display_data", data={"text/html": "<b>bold</b><script>alert(1)</script>"})
    recorded = v4.new_output("display_data", data={RECORD_MIME: {"cell": 1}})
    cells = [
        v4.new_code_cell("setup()", metadata={"tags": ["remove-cell", reader.SETUP_TAG]}),
        v4.new_markdown_cell("# A page"),
        v4.new_code_cell("show()", outputs=[shown, recorded], metadata={"tags": ["hide-input"]}),
        v4.new_code_cell("finish()", metadata={"tags": ["remove-cell", reader.VERDICT_TAG]}),
    ]
    metadata = {
        "kernelspec": {"name": "jaxcourse", "display_name": "jaxcourse"},
        reader.METADATA_KEY: {"page": "docs/page"},
        "source_map": [0, 3, 5, 9],
        "mystnb": {"render_image_options": {"alt": "A plot."}},
    }
    kept = downloads.reader_notebook(v4.new_notebook(cells=cells, metadata=metadata))
    assert [cell.source for cell in kept.cells] == ["# A page", "show()"]
    assert kept.cells[1].metadata["tags"] == ["hide-input"]
    assert [output.data for output in kept.cells[1].outputs] == [{"text/html": "<b>bold</b>"}]
    assert kept.metadata == {"kernelspec": downloads.KERNELSPEC, "mystnb": metadata["mystnb"]}
    # A notebook of format 4.4 (JAX's older .ipynb pages) has cells without ids: written as 4.4, it is valid.
    older = v4.new_notebook(cells=[v4.new_code_cell("x = 1")], metadata=metadata)
    older.nbformat_minor = 4
    del older.cells[0]["id"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nbformat's MissingIDFieldWarning, printed in the middle of a build
        nbformat.validate(downloads.reader_notebook(older))

"""The execution stage, without a kernel: every problem of a run located (``failures``) and the progress lines.

A run is built in memory (``record.KernelRecord``, ``render.ExecutedRun``) and the messages are read where
Sphinx's logger would receive them.
"""

from __future__ import annotations

import types
from pathlib import Path
from unittest import mock

import pytest
from jaxcourse.execution import failures, progress, record
from jaxcourse.output.render import ExecutedRun
from jaxcourse.source import frontmatter, located, pages
from jaxcourse.source.exercisechecks import Check
from tiny import code_cell, lesson, line_of, page_being_read

# --- one executed page --------------------------------------------------------------------------------------------


def make_page(text: str, docname: str = "lessons/run") -> pages.Page:
    return page_being_read(text, docname)


def cell(index: int, source: str, line: int, **metadata) -> record.CodeCell:
    """A code cell whose fence is at ``line`` and whose code starts on the next line."""
    return record.CodeCell(index, line, line + 1, source, list(metadata.pop("tags", [])), metadata)


def error(index: int, ename: str, message: str, line_in_cell: int | None) -> record.CellError:
    return record.CellError(index, ename, f"{ename}: {message}" if message else ename, line_in_cell, False, [ename])


def app_at(tmp_path: Path, timeout: int = 120):
    return types.SimpleNamespace(outdir=str(tmp_path), config=types.SimpleNamespace(nb_execution_timeout=timeout))


def report_run(app, page, run, kernel, exec_data) -> tuple[bool, list[tuple[int, str, str]]]:
    """report_run's answer, and what it reported: (line, subtype, message) each."""
    with mock.patch.object(located.logger, "error") as logged:
        found = failures.report_run(app, page, run, kernel, exec_data)
    for call in logged.call_args_list:
        assert call.kwargs["location"][0] == page.docname and call.kwargs["type"] == "course"
    return found, [(call.kwargs["location"][1], call.kwargs["subtype"], call.args[0]) for call in logged.call_args_list]


LESSON = lesson("run", code_cell("x = 1\nassert x == 2, 'x is 1'"), extra="  cpu_devices: 4\n")


def test_a_failed_cell_is_summed_up_by_its_first_line_and_the_next_when_the_first_announces_it():
    """As pybind11 words a bad call (autodidax under a newer jaxlib): the types come on the line after ':'."""
    pybind = "TypeError: f(): incompatible function arguments. The following argument types are supported:\n"
    pybind += "    1. f(arg: int, /) -> None\n\nInvoked with types: str"
    assert failures.headline(pybind).endswith("are supported: 1. f(arg: int, /) -> None")
    assert failures.headline("ValueError: bad value\nmore about it") == "ValueError: bad value"
    assert failures.headline("") == ""


def test_a_failed_assert_is_reported_at_its_statement_and_quoted(tmp_path):
    page = make_page(LESSON)
    kernel = record.KernelRecord(
        cells=[cell(2, "x = 1\nassert x == 2, 'x is 1'", 20)], errors=[error(2, "AssertionError", "x is 1", 2)]
    )
    found, reported = report_run(app_at(tmp_path), page, ExecutedRun(), kernel, {"succeeded": False})
    assert found
    assert reported == [(22, "exec", "cell failed: AssertionError at \"assert x == 2, 'x is 1'\": x is 1")]


def test_a_run_that_failed_in_the_setup_cell_is_the_runtime_failing_at_the_setting_that_asked_for_devices(tmp_path):
    text = "---\nkernelspec: {name: python3}\nexecution:\n  cpu_devices: 4\n---\n# T\n"
    kernel = record.KernelRecord(setup_index=0, errors=[error(0, "RuntimeError", "4 devices asked, 1 found", 3)])
    _, reported = report_run(
        app_at(tmp_path), make_page(text, "docs/page"), ExecutedRun(), kernel, {"succeeded": False}
    )
    assert reported == [
        (
            line_of(text, "cpu_devices: 4"),
            "exec",
            "cell failed: the course runtime failed to start in the kernel: RuntimeError: 4 devices asked, 1 found",
        )
    ]
    without = make_page("---\nkernelspec: {name: python3}\n---\n# T\n", "docs/page")
    _, ((line, _, _),) = report_run(app_at(tmp_path), without, ExecutedRun(), kernel, {"succeeded": False})
    assert line == 1


def test_a_lessons_runtime_that_failed_to_start_is_reported_at_its_lesson_cpu_devices(tmp_path):
    kernel = record.KernelRecord(setup_index=0, errors=[error(0, "RuntimeError", "4 devices asked, 1 found", 3)])
    _, ((line, _, _),) = report_run(app_at(tmp_path), make_page(LESSON), ExecutedRun(), kernel, {"succeeded": False})
    assert line == line_of(LESSON, "cpu_devices: 4")


def test_a_timeout_names_the_limit_that_applied_and_the_full_traceback_is_saved_without_colours(tmp_path):
    text = lesson("run", code_cell("while True: pass"), extra="").replace(
        "---\n\n#", "execution:\n  timeout: 30\n---\n\n#"
    )
    page = make_page(text)
    kernel = record.KernelRecord(cells=[cell(2, "while True: pass", 20)], last_started=2)
    exec_data = {"succeeded": False, "error": "CellTimeoutError", "traceback": "\x1b[31mCellTimeoutError\x1b[0m: 30 s"}
    _, reported = report_run(app_at(tmp_path), page, ExecutedRun(), kernel, exec_data)
    saved = tmp_path / "reports" / "lessons" / "run.err.log"
    ((line, _, message),) = reported
    assert line == 20  # no statement known: the cell's fence
    assert message == (
        "cell failed: CellTimeoutError: the cell ran past the per-cell timeout (30 s, set by 'execution: "
        "{timeout: N}' in the front matter; a page may change it with 'execution: {timeout: N}' in its front "
        f"matter); full traceback: {saved}"
    )
    assert saved.read_text(encoding="utf-8") == "CellTimeoutError: 30 s"


def test_the_timeout_comes_from_the_page_else_myst_nb_s_setting_else_conf_py(tmp_path):
    plain = make_page(lesson("run", ""))
    assert "(45 s, nb_execution_timeout in conf.py;" in failures.timeout_summary(app_at(tmp_path, 45), plain)
    per_page = make_page(lesson("run", "").replace("lesson:\n", "mystnb:\n  execution_timeout: 9\nlesson:\n"))
    assert "(9 s, set by 'mystnb: {execution_timeout: N}'" in failures.timeout_summary(app_at(tmp_path), per_page)


def test_an_error_that_looks_intended_is_reported_with_how_to_show_it(tmp_path):
    source = "if True:\n    raise ValueError('negative sizes are refused')"
    kernel = record.KernelRecord(
        cells=[cell(2, source, 20)], errors=[error(2, "ValueError", "negative sizes are refused", 2)]
    )
    page = make_page(lesson("run", code_cell(source)))
    _, ((line, _, message),) = report_run(app_at(tmp_path), page, ExecutedRun(), kernel, {"succeeded": False})
    assert line == 22
    assert message == (
        "cell failed: ValueError: negative sizes are refused. If this cell is meant to show this error, give it "
        "':raises: ValueError': the page then shows the error, and the build fails if the cell stops raising it"
    )
    notebook_page = make_page("---\nkernelspec: {name: python3}\n---\n# T\n", docname="docs/page")
    assert "tag it raises-exception" in failures.how_to_show(notebook_page, "ValueError")


def test_an_import_of_a_package_the_site_does_not_install_says_where_packages_are_added(tmp_path):
    """As optax's gradient accumulation example imports flax, whose prose talks of errors: no raises hint."""
    source = "import jax\nfrom jaxcourse_no_such_package import nnx"
    missing = error(2, "ModuleNotFoundError", "No module named 'jaxcourse_no_such_package'", 2)
    kernel = record.KernelRecord(cells=[cell(2, source, 20)], errors=[missing])
    page = make_page("---\nkernelspec: {name: python3}\n---\n# T\n\nIt fails.\n\n" + code_cell(source), docname="p")
    _, ((line, _, message),) = report_run(app_at(tmp_path), page, ExecutedRun(), kernel, {"succeeded": False})
    assert line == 22
    assert message == (
        "cell failed: ModuleNotFoundError: No module named 'jaxcourse_no_such_package'. jaxcourse_no_such_package "
        "is not among the site's packages: every page runs on exactly requirements.txt; a package the page needs "
        "goes in requirements.in (then `nox -s lock`)"
    )
    # A module missing from a package the site has is a mistake of the page's, which the lock cannot mend.
    assert failures.missing_package(error(2, "ModuleNotFoundError", "No module named 'jax.no_such_module'", 1)) is None
    assert failures.missing_package(error(2, "ImportError", "cannot import name 'x' from 'jax'", 1)) is None
    # As NumPy's SVD tutorial meets it in scipy.datasets: a library's own words for a package it needs.
    optional = "Missing optional dependency 'jaxcourse_no_such_package' required for scipy.datasets module."
    assert failures.missing_package(error(2, "ImportError", optional, 1)) == "jaxcourse_no_such_package"
    assert failures.missing_package(error(2, "ImportError", "Missing optional dependency 'numpy'.", 1)) is None


def test_every_problem_of_a_run_that_finished_is_reported_at_its_cell(tmp_path):
    page = make_page(LESSON)
    page.problems = [frontmatter.Problem(3, "the reader and myst-nb disagree")]
    run = ExecutedRun()
    run.problems = [(2, "a JavaScript output cannot be published")]
    run.sizes, run.oversized = {3: 2_500_000}, {3: 1_000_000}
    run.shown = {2: [("stdout", "took 0.5 s\n")], 3: [("stdout", "steady\n")]}
    kernel = record.KernelRecord(
        cells=[cell(2, "a", 10), cell(3, "b", 20, varies="[0-9.]+(?= ms)")],
        unmet_raises=[(2, "expected KeyError: this cell has ':raises: KeyError' but ran without raising")],
    )
    found, reported = report_run(app_at(tmp_path), page, run, kernel, {"succeeded": True})
    assert found
    assert [(line, subtype) for line, subtype, _ in reported] == [
        (3, "source"),
        (10, "output"),
        (20, "output"),
        (10, "exec"),
        (20, "varies"),
    ]
    assert reported[2][2].startswith("this cell's output is 2.5 MB, over the page's limit of 1.0 MB;")
    assert reported[4][2].startswith("the varies pattern '[0-9.]+(?= ms)' matches nothing this cell showed")


def test_a_clean_run_reports_nothing(tmp_path):
    run = ExecutedRun()
    run.shown = {2: [("stdout", "took 0.5 s\n")]}
    kernel = record.KernelRecord(cells=[cell(2, "a", 10, tags=["varies"])])
    assert report_run(app_at(tmp_path), make_page(LESSON), run, kernel, {"succeeded": True}) == (False, [])


def test_stderr_fails_a_lesson_at_the_statement_a_warning_names_and_is_listed_on_a_page_that_shows_it(tmp_path):
    run = ExecutedRun()
    run.shown = {
        2: [("stdout", "fine\n"), ("stderr", "\n<cell>:2: UserWarning: careful\n  warnings.warn('careful')\n")],
        3: [("stderr", "x" * 200)],
        4: [("stdout", "no stderr here\n")],
    }
    kernel = record.KernelRecord(cells=[cell(2, "import w\nw.warn()", 10), cell(3, "b", 20), cell(4, "c", 30)])
    assert failures.stderr_notes(run, kernel) == [(12, "<cell>:2: UserWarning: careful"), (21, "x" * 157 + "...")]
    _, reported = report_run(app_at(tmp_path), make_page(LESSON), run, kernel, {"succeeded": True})
    assert [(line, subtype) for line, subtype, _ in reported] == [(12, "stderr"), (21, "stderr")]
    assert reported[0][2].startswith("this cell wrote to stderr: '<cell>:2: UserWarning: careful'; fix what")
    shown = make_page("---\nkernelspec: {name: python3}\nexecution: {stderr: show}\n---\n# T\n", docname="docs/page")
    assert report_run(app_at(tmp_path), shown, run, kernel, {"succeeded": True}) == (False, [])
    assert shown.warnings == [
        {"line": 12, "stderr": "<cell>:2: UserWarning: careful"},
        {"line": 21, "stderr": "x" * 157 + "..."},
    ]


@pytest.mark.parametrize(
    ("scaffold", "solution", "expected"),
    [
        (None, None, "the check of Foundation did not run: the lesson stopped before it"),
        ({"passed": True}, {"passed": True}, "the check of Foundation (check_sum) passes on the untouched scaffold"),
        (
            {"passed": False, "error": "NameError", "message": "name 'total' is not defined"},
            {"passed": True},
            "the check of Foundation (check_sum) raised NameError on the untouched scaffold (name 'total' is not "
            "defined): fail with an AssertionError",
        ),
        (
            {"passed": False, "error": "AssertionError", "message": "expected 6"},
            {"passed": False, "error": "AssertionError", "message": "expected 6, found 5"},
            "the check of Foundation (check_sum) fails on the lesson's own solution: AssertionError: expected 6, "
            "found 5",
        ),
        ({"passed": False, "error": "AssertionError", "message": "expected 6"}, {"passed": True}, None),
    ],
)
def test_an_exercise_check_must_fail_on_the_scaffold_and_pass_on_the_solution(tmp_path, scaffold, solution, expected):
    page = make_page(LESSON)
    page.checks = [Check("sum", "Foundation", 40, "check_sum", "def check_sum(): ...", "total = ...")]
    results = [
        {"kind": "check", "label": "sum", "against": against, **result}
        for against, result in (("scaffold", scaffold), ("solution", solution))
        if result is not None
    ]
    kernel = record.KernelRecord(check_results=results)
    found, reported = report_run(app_at(tmp_path), page, ExecutedRun(), kernel, {"succeeded": True})
    if expected is None:
        assert (found, reported) == (False, [])
    else:
        ((line, subtype, message),) = reported
        assert found and (line, subtype) == (40, "check") and message.startswith(expected)


def test_the_assert_that_failed_is_quoted_on_one_line_and_cut_at_a_word_when_long():
    source = "x = 1\nassert (\n    x == 2\n), 'x'\ny = 2"
    assert failures.failing_assert(source, 3) == "assert ( x == 2 ), 'x'"
    assert failures.failing_assert(source, 1) is None and failures.failing_assert(source, None) is None
    long = "assert " + " and ".join(f"value_{n} == {n}" for n in range(20))
    quoted = failures.failing_assert(long, 1)
    assert quoted.endswith(" ...") and len(quoted) <= failures.QUOTE_LIMIT + 4 and long.startswith(quoted[:-4])
    assert failures.failing_assert("%timeit f()\nassert f() == 1", 2) == "assert f() == 1"  # IPython syntax


def test_an_error_looks_intended_when_the_cell_raises_it_jax_s_tracer_raises_it_or_the_prose_announces_it():
    def intended(source, ename="ValueError", line=1, prose=""):
        return failures.looks_intended(source, record.CellError(2, ename, ename, line, False), prose)

    assert intended("raise ValueError('no')")
    assert intended("f(x)", "ConcretizationTypeError")
    assert intended("f(x)", prose="Calling it with a string fails:")
    assert not intended("f(x)", prose="Calling it returns a number:")
    assert not intended("f(x)\nraise ValueError", line=1)


def test_only_the_prose_right_above_a_cell_speaks_of_it():
    text = lesson(
        "run",
        "This next cell raises an error.\n\n"
        + code_cell("f(1)")
        + "\nFar above.\n\n## Section\n\n\n\n\n"
        + code_cell("g()"),
    )
    page = make_page(text)
    first, second = (fence.line for fence in page.source.code_cells())
    assert failures._prose_before(page, first) == "This next cell raises an error."
    assert failures._prose_before(page, second) == ""


# --- progress -----------------------------------------------------------------------------------------------------


@pytest.fixture
def site(tmp_path):
    """Pages of three kinds under <tmp>: a lesson, a notebook page and a prose page."""
    (tmp_path / "lessons").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notebook.md").write_text(
        "---\njupytext: {text_representation: {format_name: myst}}\nkernelspec: {name: python3}\n---\n# N\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "prose.md").write_text("# Prose\n", encoding="utf-8")
    env = types.SimpleNamespace(doc2path=lambda docname: tmp_path / f"{docname}.md")

    def app(**config):
        settings = {"course_lessons_dir": "lessons", "course_only_pages": [], "course_progress": True, **config}
        return types.SimpleNamespace(config=types.SimpleNamespace(**settings))

    return types.SimpleNamespace(env=env, app=app)


def test_the_pages_a_build_executes_are_its_lessons_and_notebook_pages(site):
    docnames = ["lessons/a-01", "docs/notebook", "docs/prose"]
    assert progress.executed_documents(site.app(), site.env, docnames) == ["lessons/a-01", "docs/notebook"]
    only = site.app(course_only_pages=["docs/notebook", "docs/prose"])
    assert progress.executed_documents(only, site.env, docnames) == ["docs/notebook"]


def test_an_ipynb_page_the_build_executes_is_counted(site, tmp_path):
    (tmp_path / "docs" / "tutorial.ipynb").write_text('{"cells": [], "metadata": {}}', encoding="utf-8")
    site.env.doc2path = lambda docname: tmp_path / f"{docname}.ipynb"
    assert progress.executed_documents(site.app(), site.env, ["docs/tutorial"]) == ["docs/tutorial"]


def test_each_executed_page_prints_its_count_its_id_how_it_ran_and_its_time(site, monkeypatch, capsys):
    monkeypatch.setattr(progress, "_counter", {})
    app = site.app()
    progress.page_finished(app, "early", "fresh", 1.0)  # before counting starts: nothing
    docnames = [f"lessons/l-{n:02d}" for n in range(11)] + ["docs/prose"]
    progress.start_counting(app, site.env, docnames)
    progress.page_finished(app, "l-00", "fresh", 4.25)
    progress.page_finished(app, "l-01", "failed", None)
    assert capsys.readouterr().out == "[ 1/11] l-00: fresh, 4.2 s\n[ 2/11] l-01: failed\n"


def test_no_progress_lines_unless_asked(site, monkeypatch, capsys):
    monkeypatch.setattr(progress, "_counter", {})
    app = site.app(course_progress=False)
    progress.start_counting(app, site.env, ["lessons/a-01"])
    progress.page_finished(app, "a-01", "fresh", 1.0)
    assert progress._counter == {} and capsys.readouterr().out == ""

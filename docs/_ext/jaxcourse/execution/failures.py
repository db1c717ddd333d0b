"""Every problem of an executed page's run, as one located message each (a dead kernel: ``parser``).

A failed run is reported at the line of the statement that failed: the kernel records it, and the reader
recorded where each cell's code starts.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from sphinx.application import Sphinx

from ..output.render import ExecutedRun, size_text, strip_ansi, without_machine_paths
from ..source import pages
from ..source.lessonsource import Paragraph
from ..source.located import report
from . import changes, record


def report_run(app: Sphinx, page: pages.Page, run: ExecutedRun, kernel: record.KernelRecord, exec_data: dict) -> bool:
    """Report every problem of this run; True if there was any."""

    def at(index: int) -> int:
        cell = kernel.cell(index)
        return cell.line if cell else 1

    problems = [(problem.line, problem.message, "source") for problem in page.problems]
    problems += [(at(index), message, "output") for index, message in run.problems]
    problems += [
        (
            at(index),
            f"this cell's output is {size_text(run.sizes[index])}, over the page's limit of {size_text(limit)}; "
            "print less, or raise the limit with 'execution: {output_limit: BYTES}' in the front matter",
            "output",
        )
        for index, limit in run.oversized.items()
    ]
    problems += [(at(index), message, "exec") for index, message in kernel.unmet_raises]
    notes = stderr_notes(run, kernel)
    if page.settings.stderr == "fail":
        fix = "fix what it reports, or, if it is noise the reader need not see, tag the cell remove-stderr"
        problems += [(line, f"this cell wrote to stderr: {text!r}; {fix}", "stderr") for line, text in notes]
    else:
        page.warnings = [{"line": line, "stderr": text} for line, text in notes]
    failed = not exec_data.get("succeeded", True) or kernel.unexpected_error is not None
    if not failed:
        problems += _check_problems(page, kernel) + _varies_problems(run, kernel)
    for line, message, subtype in problems:
        report(page.docname, line, message, subtype=subtype)
    if failed:
        _report_failed_cell(app, page, kernel, exec_data)
    return failed or bool(problems)


def _varies_problems(run: ExecutedRun, kernel: record.KernelRecord) -> list[tuple[int, str, str]]:
    """A cell's ``varies`` patterns must each match what it showed."""
    problems = []
    for cell in kernel.cells:
        patterns = changes.varying_patterns(cell.metadata, cell.tags)
        shown = "".join(text for _, text in run.shown.get(cell.index, []))
        if patterns and (problem := changes.pattern_problem(patterns, shown)):
            problems.append((cell.line, problem, "varies"))
    return problems


#: Where Python's warnings module says a warning came from, once the cell's file is ``<cell>``.
_WARNING_LINE = re.compile(r"^<cell>:(\d+): ")


def stderr_notes(run: ExecutedRun, kernel: record.KernelRecord) -> list[tuple[int, str]]:
    """(line, first line of text) for each author's cell that wrote to stderr, once per cell.

    The line is the statement's when the text is a warning that names it (``<cell>:3: UserWarning: ...``),
    else the cell's first line of code.
    """
    notes = []
    for cell in kernel.cells:
        written = "".join(text for kind, text in run.shown.get(cell.index, []) if kind == "stderr")
        first = next((line.strip() for line in without_machine_paths(written).splitlines() if line.strip()), "")
        if not first:
            continue
        located = _WARNING_LINE.match(first)
        line = cell.line_of(int(located[1])) if located else cell.code_line
        notes.append((line, first if len(first) <= 160 else first[:157] + "..."))
    return notes


def _check_problems(page: pages.Page, kernel: record.KernelRecord) -> list[tuple[int, str, str]]:
    """Each exercise check must fail on the untouched scaffold (with an AssertionError) and pass on the solution."""
    problems = []
    results = {(result["label"], result["against"]): result for result in kernel.check_results}
    for check in page.checks:
        scaffold = results.get((check.label, "scaffold"))
        solution = results.get((check.label, "solution"))
        problem = None
        if scaffold is None or solution is None:
            problem = f"the check of {check.level} did not run: the lesson stopped before it"
        elif scaffold["passed"]:
            problem = (
                f"the check of {check.level} ({check.function}) passes on the untouched scaffold: "
                "it must fail until the reader's answer is right"
            )
        elif scaffold["error"] != "AssertionError":
            problem = (
                f"the check of {check.level} ({check.function}) raised {scaffold['error']} on the untouched scaffold "
                f"({scaffold['message']}): fail with an AssertionError that says what was expected and what was found"
            )
        elif not solution["passed"]:
            problem = (
                f"the check of {check.level} ({check.function}) fails on the lesson's own solution: "
                f"{solution['error']}: {solution['message']}"
            )
        if problem:
            problems.append((check.exercise_line, problem, "check"))
    return problems


def how_to_show(page: pages.Page, ename: str) -> str:
    """The suggestion for an error that looks intended: the course's strict option on a lesson."""
    if page.lesson:
        return (
            f"If this cell is meant to show this error, give it ':raises: {ename}': the page then shows the "
            "error, and the build fails if the cell stops raising it"
        )
    return (
        "If this cell is meant to show this error, tag it raises-exception (:tags: [raises-exception]), "
        f"or give it ':raises: {ename}' for the build to fail if it stops raising"
    )


def _report_failed_cell(app: Sphinx, page: pages.Page, kernel: record.KernelRecord, exec_data: dict) -> None:
    where = ""
    if exec_data.get("traceback"):
        saved = traceback_report(app, page.docname, exec_data["traceback"])
        where = f"; full traceback: {saved}"
    error = kernel.unexpected_error
    if exec_data.get("error") == "CellTimeoutError" or (error and error.ename == "KeyboardInterrupt"):
        summary = timeout_summary(app, page)
    elif error is not None:
        summary = headline(error.summary) or error.ename
        cell = kernel.cell(error.cell_index)
        statement = (
            failing_assert(cell.source, error.line_in_cell) if cell and error.ename == "AssertionError" else None
        )
        if statement:
            detail = summary.removeprefix("AssertionError").removeprefix(":").strip()
            summary = f'AssertionError at "{statement}"' + (f": {detail}" if detail else "")
        elif package := missing_package(error):
            summary = (
                f"{summary.rstrip('.')}. {package} is not among the site's packages: every page runs on exactly "
                "requirements.txt; a package the page needs goes in requirements.in (then `nox -s lock`)"
            )
        # A failed shell command ('!nvidia-smi' on a machine without a GPU) may be what the page means to show.
        elif cell and (
            error.ename == "ShellCommandFailed" or looks_intended(cell.source, error, _prose_before(page, cell.line))
        ):
            summary = f"{summary.rstrip('.')}. {how_to_show(page, error.ename)}"
    else:
        summary = exec_data.get("error") or "the notebook did not run to the end"
    index = error.cell_index if error is not None else kernel.last_started
    if index is not None and index == kernel.setup_index:
        summary = f"the course runtime failed to start in the kernel: {summary}"
        # The setting the runtime failed on: 'execution.cpu_devices' on a page, 'lesson.cpu_devices' in a lesson.
        declared = [key for key in ("execution.cpu_devices", "lesson.cpu_devices") if key in page.front.key_lines]
        line = page.front.line_of(declared[0]) if page.settings.cpu_devices and declared else 1
    else:
        cell = kernel.cell(index)
        line = cell.line_of(error.line_in_cell if error is not None else None) if cell else 1
    report(page.docname, line, f"cell failed: {summary}{where}")


#: How a failed import names what it could not find: Python's words, and those of a library missing an optional
#: package (scipy.datasets: "Missing optional dependency 'pooch' required for ...", as pandas says it too).
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'|Missing optional dependency '([\w.]+)'")


def missing_package(error: record.CellError) -> str | None:
    """The package an import failed to find because the site does not install it (flax), if that is the error.

    A module missing from an installed package ('jax.no_such_module') is the page's mistake, not the lock's.
    """
    found = error.ename in ("ModuleNotFoundError", "ImportError") and _MISSING_MODULE.search(error.summary)
    package = (found[1] or found[2]).split(".")[0] if found else None
    # The kernel runs in the build's own environment: what it cannot find, the build cannot either.
    return package if package and importlib.util.find_spec(package) is None else None


def headline(summary: str) -> str:
    """An error's first line, and the line after it when it ends in ':' (pybind11's 'The following argument
    types are supported:' names them on the next line)."""
    lines = [line.strip() for line in summary.splitlines() if line.strip()]
    return " ".join(lines[:2]) if len(lines) > 1 and lines[0].endswith(":") else "".join(lines[:1])


#: Longest assert statement quoted in a message; a longer one is cut at a word with "...".
QUOTE_LIMIT = 120
#: Words in the prose just before a cell that announce an error (the author meant it to raise).
ANNOUNCES_AN_ERROR = re.compile(r"\b(rais\w*|errors?|exceptions?|fails?|refuses?)\b", re.I)
#: JAX's own errors for misusing a traced value: what a lesson shows on purpose, almost always.
JAX_TRACER_ERRORS = {
    "ConcretizationTypeError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerArrayConversionError",
    "UnexpectedTracerError",
    "KeyReuseError",
}


def failing_assert(source: str, line_in_cell: int | None) -> str | None:
    """The assert statement of ``source`` (a cell) on ``line_in_cell``, on one line; None if there is none."""
    if line_in_cell is None:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (magics): fall back to the line itself
        line = source.splitlines()[line_in_cell - 1].strip() if line_in_cell <= len(source.splitlines()) else ""
        return line if line.startswith("assert ") else None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.lineno <= line_in_cell <= (node.end_lineno or node.lineno):
            statement = " ".join((ast.get_source_segment(source, node) or "").split())
            if len(statement) > QUOTE_LIMIT:
                statement = statement[:QUOTE_LIMIT].rsplit(" ", 1)[0] + " ..."
            return statement
    return None


def looks_intended(source: str, error: record.CellError, prose_before: str) -> bool:
    """Whether an untagged cell's error looks like one its author meant to show.

    It does when the statement that raised is a ``raise`` of the cell's own, when it is
    one of JAX's tracer errors, or when the prose just before the cell talks of an error.
    """
    lines = source.splitlines()
    line = lines[error.line_in_cell - 1].strip() if error.line_in_cell and error.line_in_cell <= len(lines) else ""
    return (
        line.startswith("raise ") or error.ename in JAX_TRACER_ERRORS or bool(ANNOUNCES_AN_ERROR.search(prose_before))
    )


def _prose_before(page: pages.Page, cell_line: int) -> str:
    """The paragraph of the page's text that ends just before the cell's fence, if any."""
    if page.source is None:
        return ""
    before = [block for block in page.source.blocks if isinstance(block, Paragraph) and block.line < cell_line]
    if not before:
        return ""
    last = max(before, key=lambda block: block.line)
    # Only the prose right above the cell: a paragraph sections away does not speak of it.
    return last.text if cell_line - (last.line + last.text.count("\n")) <= 3 else ""


def traceback_report(app: Sphinx, docname: str, traceback: str) -> Path:
    """Save a failed run's full traceback (from myst-nb's execution data) beside the failed build."""
    path = Path(app.outdir, "reports", *(docname + ".err.log").split("/"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(strip_ansi(traceback), encoding="utf-8")
    return path


def timeout_summary(app: Sphinx, page: pages.Page) -> str:
    """What a cell timeout means, with the limit that applied and where it was set."""
    per_page = (page.front.data.get("mystnb") or {}).get("execution_timeout")
    if page.settings.timeout is not None:
        timeout, where_set = page.settings.timeout, "set by 'execution: {timeout: N}' in the front matter"
    elif per_page:
        timeout, where_set = per_page, "set by 'mystnb: {execution_timeout: N}' in the front matter"
    else:
        timeout, where_set = app.config.nb_execution_timeout, "nb_execution_timeout in conf.py"
    return (
        f"CellTimeoutError: the cell ran past the per-cell timeout ({timeout} s, {where_set}; "
        "a page may change it with 'execution: {timeout: N}' in its front matter)"
    )

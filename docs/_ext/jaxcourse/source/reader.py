"""The course's notebook reader: myst-nb's documented ``nb_custom_formats`` hook for ``.md`` and ``.ipynb``.

It starts from myst-nb's own reader, so cells and their source map are myst-nb's, and adds the hidden setup and
verdict cells as notebook cells: the author's text is not rewritten, so every line keeps its number. It records
each code cell's lines (``notebook.metadata["jaxcourse"]``) for the rest of the build. A page that does not
execute gets execution turned off (myst-nb's per-notebook ``mystnb`` settings), so no kernel starts for it.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from pathlib import Path

from myst_nb.core.read import MystMetadataParsingError, is_myst_markdown_notebook, read_myst_markdown_notebook
from myst_parser.config.main import MdParserConfig
from nbformat import NotebookNode, v4

from ..runtime import kernel
from . import cellscan, exercisechecks, ipynbpages, lessonsource, pages
from .frontmatter import Problem, is_python_kernel

#: myst-nb's and nbclient's tag: the cell MAY raise, and the run goes on (its standard meaning).
RAISES_TAG = "raises-exception"
#: myst-nb's tag: the cell is shown and never run (the execution report and the page say so).
SKIP_TAG = "skip-execution"
#: The course's cell option: the cell MUST raise this exception or a subclass (``:raises: TypeError``).
RAISES_OPTION = "raises"
SETUP_TAG = "jaxcourse-setup"
VERDICT_TAG = "jaxcourse-verdict"
#: Notebook metadata key where the reader leaves what it found (never part of the cache key).
METADATA_KEY = "jaxcourse"
_RUNTIME_NAME = "_jaxcourse_runtime"
#: myst-nb's per-notebook settings for a page that does not execute.
_NOT_RUN = {"execution_mode": "off"}
#: A string in a cell's code, which may name a file beside the page: Image("images/fish.png").
_QUOTED = re.compile(r"""(['"])(?P<text>[^'"\n\\]{1,300})\1""")


def read_page(text: str, myst_extensions: list[str] | tuple[str, ...] = ()) -> NotebookNode:
    """The notebook of one page (myst-nb passes the text; conf.py's MyST extensions come as a keyword)."""
    reading = pages.reading()
    config = MdParserConfig(enable_extensions=set(myst_extensions))
    path = str(reading.path) if reading else None
    page = reading.page if reading else None
    try:
        notebook = read_myst_markdown_notebook(text, config=config, add_source_map=True, path=path)
    except MystMetadataParsingError as error:
        if page is None:
            raise
        # "Code cell 3 at line 40 could not be read: ...": the page is reported there, and not run.
        line = re.search(r"at line (\d+)", str(error))
        page.problems.append(Problem(int(line[1]) if line else 1, f"cell options are not valid YAML: {error}"))
        return v4.new_notebook(cells=[v4.new_markdown_cell(f"# {page.title}")], metadata={"mystnb": _NOT_RUN})
    lines = text.splitlines()
    even_markdown_lines(notebook, lines)  # a prose page's warnings, too, are at their own lines
    if page is None or not is_myst_markdown_notebook(text):
        return _not_run(notebook)
    page.source = lessonsource.parse(text)
    page.checks, problems = exercisechecks.add_proofs(notebook, page.source)
    cells = code_cell_lines(notebook, lines)
    # Every cell the author wrote must run: one that the markup swallowed is reported where it stands.
    lost = cellscan.lost_cells(text, {cell["line"] for cell in cells.values()}, set(myst_extensions))
    page.problems += [*problems, *pairing_problems(page.source, cells), *(Problem(*found) for found in lost)]
    page.problems.extend(
        Problem(fence.line, f"this {fence.name or 'code'} block is never closed: end it with a line of its fence")
        for fence in page.source.fences(top_level=True)
        if not fence.closed and not any(line > fence.line for line, _ in lost)  # said at the lost cell
    )
    return _prepare_run(notebook, page, cells, len(lines))


def _not_run(notebook: NotebookNode) -> NotebookNode:
    notebook.metadata.setdefault("mystnb", {}).update(_NOT_RUN)
    return notebook


def _prepare_run(notebook: NotebookNode, page: pages.Page, cells: dict[int, dict], line_count: int) -> NotebookNode:
    """Add the course's cells and keep the notebook on the page; unrun when its recorded run is missing."""
    spec = notebook.metadata.get("kernelspec")
    if isinstance(spec, dict) and is_python_kernel(spec):  # 'python', 'python3.11': the course's, as python3 is
        spec["name"] = "python3"
    allow_promised_errors(notebook)
    add_course_cells(notebook, page, cells, line_count)
    if page.recorded_in is not None and not has_recorded_run(page.recorded_in, notebook):
        page.unrecorded = True
        _not_run(notebook)
    page.notebook = notebook
    return notebook


def allow_promised_errors(notebook: NotebookNode) -> None:
    """A cell given ``:raises:`` is also tagged raises-exception, so its error does not stop the run.

    Whether it raised what it promised is checked afterwards (``record.unmet_raises``).
    """
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get(RAISES_OPTION):
            tags = cell.metadata.setdefault("tags", [])
            if RAISES_TAG not in tags:
                tags.append(RAISES_TAG)


def read_ipynb_page(text: str, myst_extensions: list[str] | tuple[str, ...] = ()) -> NotebookNode:
    """The notebook of an ``.ipynb`` page, with the course's cells and its lines in the JSON (``ipynbpages``)."""
    reading = pages.reading()
    page = reading.page if reading else None
    if not ipynbpages.is_notebook_json(text):  # the stub a partial build puts in its place
        body = text.split("\n---\n", 1)[-1] if text.startswith("---\n") else text
        return v4.new_notebook(cells=[v4.new_markdown_cell(body)], metadata={"mystnb": _NOT_RUN, "orphan": True})
    notebook = ipynbpages.read(text)
    if page is None:
        return _not_run(notebook)
    source_lines = ipynbpages.source_lines(text, notebook) or [0] * len(notebook.cells)
    # myst-nb reports a markdown cell's first line of text at its entry + 2, and a code cell at its entry.
    pairs = zip(source_lines, notebook.cells, strict=True)
    notebook.metadata["source_map"] = [line if cell.cell_type == "markdown" else line + 1 for line, cell in pairs]
    cells = {
        index: {"line": source_lines[index] + 1, "code_line": source_lines[index] + 2}
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
    }
    prose = "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    page.source = lessonsource.parse(prose)  # for the title
    return _prepare_run(notebook, page, cells, len(text.splitlines()))


def has_recorded_run(cache_path: Path, notebook: NotebookNode) -> bool:
    """Whether the execution cache holds a run of exactly this notebook (its code and environment)."""
    from jupyter_cache import get_cache

    # myst-nb caches the notebook it executed, whose kernel is the course's (extension.configure_notebooks).
    aliased = copy.deepcopy(notebook)
    if aliased.metadata.get("kernelspec", {}).get("name") == "python3":
        aliased.metadata["kernelspec"]["name"] = kernel.NAME
    try:
        get_cache(cache_path).match_cache_notebook(aliased)
    except KeyError:
        return False
    return True


def even_markdown_lines(notebook: NotebookNode, lines: list[str]) -> None:
    """Point each markdown cell's source map entry at the line before its first line of text.

    myst-nb records a markdown cell as starting on the line after the block before it, drops the cell's opening
    empty lines, and reports the cell's first line of text at that entry + 2 (1-based). So the entry must be the
    0-based index of the first line of text, minus one: text after k empty lines, or right after a closing fence,
    is then reported at its own line.
    """
    source_map = notebook.metadata["source_map"]
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "markdown":
            continue
        first = source_map[index]
        while first < len(lines) and lines[first] == "":
            first += 1
        source_map[index] = first - 1


def code_cell_lines(notebook: NotebookNode, lines: list[str]) -> dict[int, dict]:
    """Per code cell index: the 1-based line of its opening fence and of its first line of code."""
    found = {}
    source_map = notebook.metadata["source_map"]
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or exercisechecks.is_proof(cell):
            continue
        fence = source_map[index]  # myst-nb: the opening fence's 1-based line
        code = cell.source.splitlines()
        # The code follows the fence and the cell's options; find where, among the lines after the fence.
        start = next((i for i in range(fence, len(lines)) if lines[i : i + len(code)] == code), fence)
        found[index] = {"line": fence, "code_line": start + 1}
    return found


def pairing_problems(source: lessonsource.LessonSource, cells: dict[int, dict]) -> list[Problem]:
    """The course's block parse must find myst-nb's code cells, at the same lines, and no others."""
    ours = {fence.line for fence in source.code_cells()}
    theirs = {cell["line"] for cell in cells.values()}
    return [
        Problem(line, "myst-nb runs a code cell here that the course's reading of the page does not see")
        for line in sorted(theirs - ours)
    ] + [
        Problem(line, "the course's reading of the page sees a code cell here that myst-nb does not run")
        for line in sorted(ours - theirs)
    ]


def files_named_beside(folder: Path, sources: list[str]) -> dict[str, str]:
    """Each file under the page's ``folder`` that its code names by a relative path: path -> absolute path.

    A kernel runs in a scratch folder (``nb_execution_in_temp``), so that a page cannot write into the
    checkout; these files are copied there first, and the page reads them as it would beside its file.
    """
    found = {}
    root = folder.resolve()
    for match in _QUOTED.finditer("\n".join(sources)):
        named = match["text"].strip()
        if named in found or Path(named).is_absolute() or "://" in named:
            continue
        path = (root / named).resolve()
        if path.is_file() and path.is_relative_to(root) and not path.name.startswith("."):
            found[named] = os.fspath(path)
    return found


def setup_code(page: pages.Page, files: dict[str, str] | None = None) -> str:
    arguments = [
        repr(page.page_id),
        f"figures_dir={os.fspath(page.figures_dir)!r}",
        f"environment={page.fingerprint!r}",
    ]
    if page.settings.cpu_devices is not None:
        arguments.append(f"cpu_devices={page.settings.cpu_devices!r}")
    if files:
        # Their contents go into the code, and so into the cache key: a changed data file runs the page again.
        digest = hashlib.sha256(b"".join(Path(path).read_bytes() for path in files.values())).hexdigest()[:16]
        arguments += [f"files={files!r}", f"files_digest={digest!r}"]
    return f"from jaxcourse import runtime as {_RUNTIME_NAME}; {_RUNTIME_NAME}.begin({', '.join(arguments)})"


def add_course_cells(notebook: NotebookNode, page: pages.Page, cells: dict[int, dict], line_count: int) -> None:
    """The hidden setup cell first, the hidden verdict cell last, and what the reader found, in metadata."""
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    files = files_named_beside(page.path.parent, code)
    setup = v4.new_code_cell(setup_code(page, files), metadata={"tags": ["remove-cell", SETUP_TAG]})
    verdict = v4.new_code_cell(f"{_RUNTIME_NAME}.finish()", metadata={"tags": ["remove-cell", VERDICT_TAG]})
    notebook.cells = [setup, *notebook.cells, verdict]
    notebook.metadata["source_map"] = [0, *notebook.metadata["source_map"], line_count]
    notebook.metadata[METADATA_KEY] = {
        "page": page.page_id,
        # shifted by the setup cell; JSON keys are strings
        "cells": {str(index + 1): lines for index, lines in cells.items()},
        "output_limit": page.settings.output_limit,
    }
    if page.settings.timeout is not None:
        # jupyter-cache's documented notebook-level override, read by myst-nb's executors.
        notebook.metadata.setdefault("execution", {})["timeout"] = page.settings.timeout


def cell_lines(notebook: NotebookNode) -> dict[int, dict]:
    """What :func:`read_page` recorded: code cell index -> {"line", "code_line"} (author's cells only)."""
    recorded = notebook.get("metadata", {}).get(METADATA_KEY, {}).get("cells", {})
    return {int(index): lines for index, lines in recorded.items()}

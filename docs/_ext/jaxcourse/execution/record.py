"""What a notebook's kernel recorded, read from the executed notebook (nbformat).

The setup and verdict cells, and the course's IPython extension for a cell that raised, publish their records
as ``runtime.RECORD_MIME`` display data; cell lines are the ones the reader recorded (``reader.cell_lines``).
"""

from __future__ import annotations

import dataclasses

from nbformat import NotebookNode

from ..output.render import ExecutedRun, error_line
from ..runtime import RECORD_MIME
from ..source.reader import RAISES_OPTION, RAISES_TAG, SETUP_TAG, SKIP_TAG, VERDICT_TAG, cell_lines

#: What the verdict adds to the stamp: the devices are read at the end of the run (runtime.devices).
DEVICE_FIELDS = ("backend", "device_kind", "device_count", "simulated_devices")


@dataclasses.dataclass
class CellError:
    cell_index: int
    ename: str
    summary: str  # "Type: message", as the page shows it
    line_in_cell: int | None  # 1-based line of the cell's code that raised, from the kernel
    expected: bool  # the cell may raise: tagged raises-exception, or given ':raises:'
    classes: list[str] = dataclasses.field(default_factory=list)  # the exception's class and its bases


@dataclasses.dataclass
class CodeCell:
    """One of the author's code cells, where it sits and what it ran."""

    index: int  # in the executed notebook
    line: int  # 1-based line of its opening fence
    code_line: int  # 1-based line of its first line of code
    source: str
    tags: list[str]
    metadata: dict

    def line_of(self, line_in_cell: int | None) -> int:
        """The file's line of the cell's ``line_in_cell``-th line of code (the fence's without one)."""
        if line_in_cell is None or not self.source:
            return self.line
        return self.code_line + min(line_in_cell, len(self.source.splitlines())) - 1


@dataclasses.dataclass
class KernelRecord:
    stamp: dict | None = None
    verdict: dict | None = None
    transcript: list[str] = dataclasses.field(default_factory=list)
    errors: list[CellError] = dataclasses.field(default_factory=list)
    #: the author's code cells (not the hidden setup and verdict cells), in order
    cells: list[CodeCell] = dataclasses.field(default_factory=list)
    #: (cell index, message): cells given ':raises: Name' that raised nothing, or something else
    unmet_raises: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    last_started: int | None = None  # notebook index of the last code cell the kernel started, if any
    setup_index: int | None = None
    verdict_index: int | None = None
    #: how each exercise check went: runtime.prove_check's records, in order
    check_results: list[dict] = dataclasses.field(default_factory=list)
    #: lines of the author's code cells that the build did not run, as myst-nb's skip-execution tag asks
    not_run: list[int] = dataclasses.field(default_factory=list)

    @property
    def unexpected_error(self) -> CellError | None:
        return next((error for error in self.errors if not error.expected), None)

    def cell(self, index: int | None) -> CodeCell | None:
        return next((cell for cell in self.cells if cell.index == index), None)


def cell_tags(cell: NotebookNode) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def records(cell: NotebookNode) -> list[dict]:
    return [
        output["data"][RECORD_MIME]
        for output in cell.get("outputs", [])
        if output.get("output_type") == "display_data" and RECORD_MIME in output.get("data", {})
    ]


def collect_cells(notebook: NotebookNode) -> list[CodeCell]:
    """The author's code cells of a notebook the reader produced (not the hidden setup and verdict cells)."""
    lines = cell_lines(notebook)
    return [
        CodeCell(
            index, lines[index]["line"], lines[index]["code_line"], cell.source, cell_tags(cell), dict(cell.metadata)
        )
        for index, cell in enumerate(notebook.cells)
        if index in lines and cell.cell_type == "code"
    ]


def unmet_raises(expected: str, errors: list[CellError]) -> str | None:
    """Why a cell given ``:raises: expected`` broke its promise, or None if it raised that (or a subclass)."""
    if not errors:
        return (
            f"expected {expected}: this cell has ':raises: {expected}' but ran without raising; "
            "if JAX no longer raises here, rewrite the prose around it"
        )
    error = errors[0]
    if expected in error.classes:
        return None
    return f"expected {expected}, but this cell raised {error.summary.splitlines()[0]}"


def collect(run: ExecutedRun) -> KernelRecord:
    """Everything the build needs to know about one executed notebook."""
    record = KernelRecord(transcript=run.transcript())
    notebook = run.notebook
    if notebook is None:
        return record
    record.cells = collect_cells(notebook)
    record.not_run = [cell.line for cell in record.cells if SKIP_TAG in cell.tags]
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        tags = cell_tags(cell)
        published = records(cell)
        if SETUP_TAG in tags:
            record.setup_index = index
            record.stamp = next((item for item in published if item.get("kind") == "stamp"), None)
        elif VERDICT_TAG in tags:
            record.verdict_index = index
            record.verdict = next((item for item in published if item.get("kind") == "verdict"), None)
        ran = cell.get("execution_count") is not None
        if ran:
            record.last_started = index
        record.check_results += [item for item in published if item.get("kind") == "check"]
        raised = [item for item in published if item.get("kind") == "error"]
        errors = [output for output in cell.get("outputs", []) if output.get("output_type") == "error"]
        first = len(record.errors)
        for number, output in enumerate(errors):
            kernel_record = raised[number] if number < len(raised) else {}
            record.errors.append(
                CellError(
                    index,
                    str(output.get("ename", "")),
                    error_line(output),
                    kernel_record.get("line"),
                    RAISES_TAG in tags,
                    list(kernel_record.get("classes") or [output.get("ename", "")]),
                )
            )
        expected = cell.get("metadata", {}).get(RAISES_OPTION)
        if expected and ran and (problem := unmet_raises(str(expected), record.errors[first:])):
            record.unmet_raises.append((index, problem))
    if record.stamp is not None and record.verdict is not None:
        record.stamp = {**record.stamp, **{field: record.verdict.get(field) for field in DEVICE_FIELDS}}
    if record.verdict is not None:
        record.transcript.append(f"PASS: {record.verdict['page']}\n")
    return record

"""Exercise checks: a reader checks an answer in the starter notebook, and the build proves each check.

A check is a code cell tagged ``exercise-check`` (option ``exercise: <label>``) after the exercise's scaffold,
defining one ``check_...`` function that raises ``AssertionError`` on a wrong answer. On the page it becomes a
one-line note; two hidden cells prove it (``runtime.prove_check``): it must fail on the untouched scaffold and
pass after the exercise's last solution cell. Nothing here imports Sphinx.
"""

from __future__ import annotations

import ast
import dataclasses

from nbformat import NotebookNode, v4

from .frontmatter import Problem
from .lessonsource import Fence, LessonSource

CHECK_TAG = "exercise-check"
SCAFFOLD_TAG = "exercise-scaffold"
EXERCISE_KEY = "exercise"
#: The hidden cells the build adds to prove a check; never an author's cell.
PROOF_TAG = "jaxcourse-check-proof"
_RUNTIME_NAME = "_jaxcourse_runtime"


@dataclasses.dataclass
class Check:
    label: str
    level: str  # Foundation, Practice or Challenge
    exercise_line: int
    function: str  # the check_... function the cell defines
    source: str  # the check cell's code
    scaffold: str  # the code of the exercise's starter scaffold


def check_function(code: str) -> str | None:
    """The one ``check_...`` function a check cell defines, or None if it defines none or several."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("check")]
    return names[0] if len(names) == 1 else None


def _tags(cell: NotebookNode) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def scaffold_of(source: LessonSource, exercise: Fence, before: int) -> Fence | None:
    """The exercise's starter scaffold: the last ```python block between the exercise and ``before``."""
    scaffolds = [fence for fence in source.fences("python", top_level=True) if exercise.end < fence.line < before]
    return scaffolds[-1] if scaffolds else None


def solution_range(source: LessonSource, label: str) -> tuple[int, int] | None:
    """The lines of ``{solution-start} label`` and of the ``{solution-end}`` after it."""
    start = next((fence for fence in source.fences("solution-start") if fence.argument == label), None)
    if start is None:
        return None
    end = next((fence for fence in source.fences("solution-end") if fence.line > start.line), None)
    return (start.line, end.line if end else len(source.lines) + 1)


def add_proofs(notebook: NotebookNode, source: LessonSource) -> tuple[list[Check], list[Problem]]:
    """Hide each check cell behind its one-line note, and add the cells that prove it; return the checks."""
    source_map = notebook.metadata["source_map"]
    exercises = {fence.options.get("label", ""): fence for fence in source.fences("exercise")}
    checks: list[Check] = []
    problems: list[Problem] = []
    insertions: list[tuple[int, list[NotebookNode], int]] = []  # (after index, cells, source line)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or CHECK_TAG not in _tags(cell):
            continue
        line = source_map[index]
        label = str(cell.get("metadata", {}).get(EXERCISE_KEY, "")).strip()
        exercise = exercises.get(label)
        function = check_function(cell.source)
        if exercise is None:
            problems.append(Problem(line, f"this check names exercise {label!r}, which the lesson does not have"))
            continue
        if function is None:
            problems.append(Problem(line, "a check cell defines exactly one function named check_... (no arguments)"))
            continue
        scaffold = scaffold_of(source, exercise, line)
        solution = solution_range(source, label)
        if scaffold is None or solution is None or not line < solution[0]:
            problems.append(
                Problem(line, f"the check of {label!r} sits between the exercise's scaffold and its solution")
            )
            continue
        check = Check(label, exercise.argument, exercise.line, function, cell.source, scaffold.code)
        checks.append(check)
        cell.metadata.setdefault("tags", []).append("remove-cell")
        note = v4.new_markdown_cell(
            f"The starter notebook checks your answer: after your code, run `{function}()`.",
            metadata={"tags": [PROOF_TAG]},
        )
        against_scaffold = _proof(f"{_RUNTIME_NAME}.prove_check({label!r}, {function!r}, scaffold={scaffold.code!r})")
        insertions.append((index, [note, against_scaffold], line))
        in_solution = [
            position
            for position, candidate in enumerate(notebook.cells)
            if candidate.cell_type == "code" and solution[0] < source_map[position] < solution[1]
        ]
        if not in_solution:
            problems.append(Problem(exercise.line, f"the solution of {label!r} has no code cell to check"))
            continue
        against_solution = _proof(f"{_RUNTIME_NAME}.prove_check({label!r}, {function!r})")
        insertions.append((in_solution[-1], [against_solution], source_map[in_solution[-1]]))
    for after, cells, line in sorted(insertions, key=lambda item: item[0], reverse=True):
        notebook.cells[after + 1 : after + 1] = cells
        source_map[after + 1 : after + 1] = [line] * len(cells)
    return checks, problems


def _proof(code: str) -> NotebookNode:
    return v4.new_code_cell(code, metadata={"tags": ["remove-cell", PROOF_TAG]})


def is_proof(cell: NotebookNode) -> bool:
    """Whether ``cell`` is one the build added to prove a check."""
    return PROOF_TAG in _tags(cell)

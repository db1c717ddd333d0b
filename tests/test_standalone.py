"""Each lesson's "whole lesson in one cell" runs alone: copied into a fresh kernel, it needs nothing else.

The first code cell under "## Run the example" is the lesson in one piece, the cell a reader copies
into their own notebook. It must not lean on names that earlier cells defined. Each one runs here in
a fresh Jupyter kernel, with the lesson's simulated devices and nothing of the lesson before it.
"""

from __future__ import annotations

import nbformat
import pytest
from conftest import LESSON_FILES
from jaxcourse.runtime import DEVICE_COUNT_FLAG
from jaxcourse.source import frontmatter, lessonsource
from nbclient import NotebookClient


def whole_lesson_cell(text: str) -> lessonsource.Fence:
    source = lessonsource.parse(text)
    heading = next(h for h in source.headings() if h.level == 2 and h.text == "Run the example")
    return next(cell for cell in source.code_cells() if cell.line > heading.line)


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda path: path.stem)
def test_the_whole_lesson_cell_runs_alone_in_a_fresh_kernel(path, tmp_path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    cell = whole_lesson_cell(text)
    devices = frontmatter.execution_settings(frontmatter.parse(text)).cpu_devices
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    if devices:
        monkeypatch.setenv("XLA_FLAGS", f"{DEVICE_COUNT_FLAG}={devices}")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell.code)])
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    try:
        client.execute()
    except Exception as error:  # nbclient's CellExecutionError carries the traceback
        pytest.fail(f"{path.name}:{cell.line}: the whole-lesson cell does not run alone: {error}")


#: Every lesson: issue 29 freed Phase 04 and scale-04 of capture harness, and foundations-05 followed.
HARNESS_FREE = sorted(LESSON_FILES)
#: Tags that keep a cell off the page: what they run is harness by definition.
HIDDEN = {"remove-cell", "remove-input"}


@pytest.mark.parametrize("path", HARNESS_FREE, ids=lambda path: path.stem)
def test_no_visible_cell_captures_output_with_redirect_stdout(path):
    """A visible cell teaches JAX: printing is shown as printed, never captured and re-read."""
    source = lessonsource.parse(path.read_text(encoding="utf-8"))
    visible = [cell for cell in source.code_cells() if not HIDDEN & set(cell.tags)]
    assert len(visible) > 5, f"{path.name}: only {len(visible)} visible cells found"
    found = [f"{path.name}:{cell.line}" for cell in visible if "redirect_stdout" in cell.code]
    assert found == [], f"visible cells capture their output with redirect_stdout: {found}"

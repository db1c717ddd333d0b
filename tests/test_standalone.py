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

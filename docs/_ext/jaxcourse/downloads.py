"""Per-lesson downloads: the executed notebook, the MyST source and a starter notebook.

Written into ``<outdir>/_downloads/lessons/`` when the lesson is read, and
linked from the lesson header. The build's hidden cells (run stamp, verdict,
figure drawing) are left out, so every notebook runs anywhere JAX does. A
lesson that asks for simulated CPU devices gets a first cell that asks for
them the same way, before anything imports JAX.
"""

from __future__ import annotations

import copy
import posixpath
import shutil
from pathlib import Path

import nbformat
from docutils import nodes
from nbformat import NotebookNode
from sphinx.application import Sphinx

from . import lessonsource, pages, record, sanitize
from .reader import SETUP_TAG, VERDICT_TAG
from .render import REFUSED, ExecutedRun, error_line, without_machine_paths
from .runtime import DEVICE_COUNT_FLAG, RECORD_MIME

DOWNLOADS = "_downloads/lessons"
HIDDEN_TAGS = {SETUP_TAG, VERDICT_TAG, "remove-cell"}
# Downloads run in the reader's own Python 3 kernel, not the build's (kernels/jaxcourse).
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def _tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def device_cells(cpu_devices: int | None) -> list[NotebookNode]:
    """The cells that give a reader's kernel the lesson's simulated devices, or none."""
    if cpu_devices is None:
        return []
    note = nbformat.v4.new_markdown_cell(
        f"This lesson runs on {cpu_devices} simulated CPU devices. Run the next cell first, in a fresh "
        "kernel: XLA reads the device count once, when JAX starts."
    )
    code = nbformat.v4.new_code_cell(
        "import os\n\n"
        "# Must run before anything imports JAX.\n"
        f'os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " {DEVICE_COUNT_FLAG}={cpu_devices}"\n'
        'os.environ.setdefault("JAX_PLATFORMS", "cpu")'
    )
    return [note, code]


def safe_data(data: dict) -> dict:
    """A display's data as the page published it: sanitized HTML and markdown, no scripts, no records."""
    kept = {}
    for kind, value in data.items():
        if kind == "text/html":
            kept[kind] = sanitize.html("".join(value) if isinstance(value, list) else value)
        elif kind == "text/markdown":
            kept["text/html"] = sanitize.markdown("".join(value) if isinstance(value, list) else value)
        elif kind not in REFUSED and kind != RECORD_MIME:
            kept[kind] = value
    return kept


def _without_comments(markdown: str) -> str:
    """A markdown cell without MyST comment lines (``%``), which Jupyter would show as text."""
    return "\n".join(line for line in markdown.splitlines() if not line.lstrip().startswith("%")).strip()


def _outputs(cell: NotebookNode) -> list[NotebookNode]:
    """The cell's outputs as its page shows them: short errors, safe displays, no kernel records."""
    tags = set(cell.get("metadata", {}).get("tags", []))
    outputs: list[NotebookNode] = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            if f"remove-{output.get('name')}" not in tags:
                outputs.append(nbformat.v4.new_output("stream", name=output["name"], text=output["text"]))
        elif kind == "error":
            outputs.append(
                nbformat.v4.new_output(
                    "error",
                    ename=output.get("ename", ""),
                    evalue=without_machine_paths(str(output.get("evalue", ""))),
                    traceback=[error_line(output)],
                )
            )
        elif kind in ("display_data", "execute_result"):
            kept = copy.deepcopy(output)
            kept["data"] = safe_data(kept["data"])
            if kept["data"]:
                outputs.append(kept)
    return outputs


def executed_notebook(run: ExecutedRun, cpu_devices: int | None = None) -> NotebookNode:
    """This build's notebook without the build's hidden cells."""
    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    notebook.cells = device_cells(cpu_devices)
    for cell in run.notebook.cells:
        if _tags(cell) & HIDDEN_TAGS:
            continue
        if cell.cell_type == "markdown":
            text = _without_comments(cell.source)
            if text:
                notebook.cells.append(nbformat.v4.new_markdown_cell(text))
        elif cell.cell_type == "code":
            copied = nbformat.v4.new_code_cell(
                cell.source, execution_count=cell.get("execution_count"), metadata=copy.deepcopy(cell.metadata)
            )
            copied.outputs = _outputs(cell)
            notebook.cells.append(copied)
    return notebook


def starter_notebook(
    run: ExecutedRun,
    source: lessonsource.LessonSource,
    kernel: record.KernelRecord,
    title: str,
    cpu_devices: int | None = None,
) -> NotebookNode:
    """The lesson's own code to run first, then each exercise with its scaffold; no solutions."""
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# {title}: exercises\n\nRun the lesson's code cells first; then fill in each scaffold's `TODO`s."
        ),
        *device_cells(cpu_devices),
        nbformat.v4.new_markdown_cell("## The lesson's code"),
    ]
    solutions = [
        (start.line, next((end.line for end in source.fences("solution-end") if end.line > start.line), start.line))
        for start in source.fences("solution-start")
    ]
    for cell in kernel.cells:
        in_solution = any(start < cell.line < end for start, end in solutions)
        if in_solution or set(cell.tags) & HIDDEN_TAGS:
            continue
        cells.append(nbformat.v4.new_code_cell(cell.source))
    for exercise in source.fences("exercise"):
        nested = source.inside(exercise)
        nested_lines = {
            number
            for block in nested
            if isinstance(block, lessonsource.Fence)
            for number in range(block.line, block.end + 1)
        }
        prompt = [text for number, text in exercise.body if number not in nested_lines]
        hints = [
            " ".join(text.strip() for _, text in block.body if text.strip())
            for block in nested
            if isinstance(block, lessonsource.Fence) and block.name == "hint"
        ]
        markdown = f"## {exercise.argument}\n\n" + "\n".join(prompt).strip()
        if hints:
            markdown += "\n\n" + "\n".join(f"*Hint:* {hint}" for hint in hints)
        cells.append(nbformat.v4.new_markdown_cell(markdown))
        scaffold = next((fence for fence in source.fences("python", top_level=True) if fence.line > exercise.end), None)
        if scaffold is not None:
            cells.append(nbformat.v4.new_code_cell(scaffold.code))
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})


def write_downloads(
    app: Sphinx, page: pages.Page, run: ExecutedRun, kernel: record.KernelRecord
) -> list[tuple[str, str]] | None:
    """Write the three files of a lesson; return (label, path relative to outdir) pairs, or None without a run."""
    if run.notebook is None or page.source is None:
        return None
    stem = page.path.stem
    cpu_devices = page.settings.cpu_devices
    folder = Path(app.outdir, DOWNLOADS)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(executed_notebook(run, cpu_devices), folder / f"{stem}.ipynb")
    shutil.copyfile(page.path, folder / f"{stem}.md")
    starter = starter_notebook(run, page.source, kernel, page.title, cpu_devices)
    nbformat.write(starter, folder / f"{stem}-exercises.ipynb")
    return [
        ("executed notebook", f"{DOWNLOADS}/{stem}.ipynb"),
        ("MyST source", f"{DOWNLOADS}/{stem}.md"),
        ("starter notebook (exercises)", f"{DOWNLOADS}/{stem}-exercises.ipynb"),
    ]


def links(docname: str, files: list[tuple[str, str]]) -> nodes.paragraph:
    paragraph = nodes.paragraph("", "Download: ", classes=["lesson-downloads"])
    here = posixpath.dirname(docname)
    for index, (label, target) in enumerate(files):
        if index:
            paragraph += nodes.Text(" · ")
        uri = posixpath.relpath(target, here or ".")
        paragraph += nodes.reference("", label, refuri=uri, classes=["download"], download=posixpath.basename(uri))
    return paragraph

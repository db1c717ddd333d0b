"""Per-lesson downloads: the executed notebook, the MyST source and a starter notebook.

Written into ``<outdir>/_downloads/lessons/`` when the lesson is read, and
linked from the lesson header. The build's hidden cells (run stamp, verdict,
figure drawing) are left out, so every notebook runs anywhere JAX does.
"""

from __future__ import annotations

import posixpath
import shutil
from pathlib import Path

import nbformat
from docutils import nodes
from sphinx.application import Sphinx

from .inject import SETUP_TAG, VERDICT_TAG
from .mdblocks import blocks

DOWNLOADS = "_downloads/lessons"
HIDDEN_TAGS = {SETUP_TAG, VERDICT_TAG, "remove-cell"}
# Downloads run in the reader's own Python 3 kernel, not the build's (kernels/jaxcourse).
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def _tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def executed_notebook(executed: nbformat.NotebookNode, merged_streams: bool) -> nbformat.NotebookNode:
    """This build's notebook without the build's hidden cells."""
    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    notebook.cells = [cell for cell in executed.cells if not (_tags(cell) & HIDDEN_TAGS)]
    if merged_streams:
        # myst-nb's nb_merge_streams appends later stream text to a cell's first stream
        # output in place and leaves the later outputs behind: keep the merged one only.
        for cell in notebook.cells:
            if cell.cell_type == "code":
                seen: set[str] = set()
                kept = []
                for output in cell.outputs:
                    if output.output_type == "stream":
                        if output.name in seen:
                            continue
                        seen.add(output.name)
                    kept.append(output)
                cell.outputs = kept
    return notebook


def _in_solution(markdown: str, inside: bool) -> bool:
    """Whether code after this markdown cell sits between {solution-start} and {solution-end}."""
    start, end = markdown.rfind("{solution-start}"), markdown.rfind("{solution-end}")
    if start == end == -1:
        return inside
    return start > end


def starter_notebook(executed: nbformat.NotebookNode, source: str, title: str) -> nbformat.NotebookNode:
    """The lesson's own code to run first, then each exercise with its scaffold; no solutions."""
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# {title}: exercises\n\nRun the lesson's code cells first; then fill in each scaffold's `TODO`s."
        ),
        nbformat.v4.new_markdown_cell("## The lesson's code"),
    ]
    inside = False
    for cell in executed.cells:
        if cell.cell_type == "markdown":
            inside = _in_solution(cell.source, inside)
        elif cell.cell_type == "code" and not inside and not (_tags(cell) & HIDDEN_TAGS):
            cells.append(nbformat.v4.new_code_cell(cell.source))
    lines = source.splitlines()
    found = blocks(lines)
    for exercise in (block for block in found if block.kind == "exercise"):
        prompt, hints = [], []
        nested = [block for block in found if exercise.line < block.line < exercise.end]
        nested_lines = {number for block in nested for number in range(block.line, block.end + 1)}
        for number, text in exercise.body:
            if number not in nested_lines:
                prompt.append(text)
        for block in nested:
            if block.kind == "hint":
                hints.append(" ".join(text.strip() for _, text in block.body if text.strip()))
        markdown = f"## {exercise.argument}\n\n" + "\n".join(prompt).strip()
        if hints:
            markdown += "\n\n" + "\n".join(f"*Hint:* {hint}" for hint in hints)
        cells.append(nbformat.v4.new_markdown_cell(markdown))
        scaffold = next(
            (block for block in found if block.kind == "python" and block.line > exercise.end),
            None,
        )
        if scaffold is not None:
            cells.append(nbformat.v4.new_code_cell("\n".join(text for _, text in scaffold.body)))
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})


def write_downloads(app: Sphinx, docname: str, source_path: Path, title: str) -> list[tuple[str, str]] | None:
    """Write the three files; return (label, path relative to outdir) pairs, or None without a run."""
    executed_path = Path(app.env.mystnb_config.output_folder, docname + ".ipynb")
    if not executed_path.exists():
        return None
    executed = nbformat.read(executed_path, as_version=4)
    stem = source_path.stem
    folder = Path(app.outdir, DOWNLOADS)
    folder.mkdir(parents=True, exist_ok=True)
    merged = app.env.mystnb_config.merge_streams
    nbformat.write(executed_notebook(executed, merged), folder / f"{stem}.ipynb")
    shutil.copyfile(source_path, folder / f"{stem}.md")
    source = source_path.read_text(encoding="utf-8")
    nbformat.write(starter_notebook(executed, source, title), folder / f"{stem}-exercises.ipynb")
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

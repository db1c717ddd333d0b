"""Per-lesson downloads: the executed notebook, the MyST source and a starter notebook.

Written into ``<outdir>/_downloads/lessons/`` when the lesson is read and linked from the lesson header; the
starter notebooks also go to ``course_notebooks_dir``, which the Pages workflow publishes to the branch that
"Open in Colab" links to. The executed notebook has the run stamp first, notebook markdown (no raw MyST),
this build's outputs as the page shows them, and the reference solutions after the exercises; the starter
notebook has the lesson's code (with its cell tags), then each exercise with its scaffold, and no solutions.
The build's hidden cells are left out, so every notebook runs anywhere JAX does; a lesson with simulated CPU
devices gets a first cell that asks for them the same way, before anything imports JAX.
"""

from __future__ import annotations

import copy
import json
import posixpath
import re
import shutil
from pathlib import Path

import nbformat
from docutils import nodes
from nbformat import NotebookNode
from sphinx.application import Sphinx

from ..execution import record
from ..output import safesvg, sanitize
from ..output.render import REFUSED, ExecutedRun, error_line, shown_stream, strip_ansi, without_machine_paths
from ..runtime import DEVICE_COUNT_FLAG, RECORD_MIME
from ..source import exercisechecks, notebookmarkdown, pages
from ..source.reader import METADATA_KEY, SETUP_TAG, VERDICT_TAG
from . import stamps

DOWNLOADS = "_downloads/lessons"
HIDDEN_TAGS = {SETUP_TAG, VERDICT_TAG, "remove-cell"}
# Downloads run in the reader's own Python 3 kernel, not the build's (kernels/jaxcourse).
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
_SOLUTION = re.compile(r"^(`{3,}|:{3,})\{solution-(?P<which>start|end)\}[ \t]*(?P<label>\S*)", re.M)


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


def version_check_cell(stamp: dict) -> NotebookNode:
    """A first cell that says plainly whether this runtime's JAX is the one the lesson was written for."""
    jax_version = stamp["jax"]
    return nbformat.v4.new_code_cell(
        "# The lesson was written for, and checked with, this JAX; another version may print other numbers\n"
        "# or error messages, or lack a function.\n"
        "from importlib.metadata import version\n\n"
        f'WRITTEN_FOR = "{jax_version}"\n'
        'if version("jax") == WRITTEN_FOR:\n'
        '    print(f"JAX {WRITTEN_FOR}: the version this lesson was written for.")\n'
        "else:\n"
        "    print(\n"
        "        f\"This runtime has JAX {version('jax')}; the lesson was written for JAX {WRITTEN_FOR}. \"\n"
        '        "Printed values, error messages and the functions available may differ. To match it, run "\n'
        "        f\"'%pip install jax=={WRITTEN_FOR}' and restart the runtime.\"\n"
        "    )"
    )


def safe_data(data: dict) -> dict:
    """A display's data as the page published it: sanitized HTML, markdown and SVG, no scripts, no records.

    A display's markdown stands in for its HTML only when it has none, as on the page, whose HTML
    builder prefers ``text/html`` to ``text/markdown``; an SVG that cannot be made safe is left out.
    """
    text = {kind: "".join(value) if isinstance(value, list) else value for kind, value in data.items()}
    kept = {}
    for kind, value in data.items():
        if kind == "text/html":
            kept[kind] = sanitize.html(text[kind])
        elif kind == "text/markdown":
            if "text/html" not in data:
                kept["text/html"] = sanitize.markdown(text[kind])
        elif kind == "image/svg+xml":
            try:
                kept[kind] = safesvg.clean(text[kind])
            except safesvg.UnsafeSvg:
                continue
        elif kind == "text/plain":
            kept[kind] = strip_ansi(text[kind])
        elif kind not in REFUSED and kind != RECORD_MIME:
            kept[kind] = value
    return kept


def _outputs(cell: NotebookNode) -> list[NotebookNode]:
    """The cell's outputs as its page shows them: short errors, safe displays, no kernel records."""
    tags = _tags(cell)
    outputs: list[NotebookNode] = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            if f"remove-{output.get('name')}" not in tags:
                outputs.append(
                    nbformat.v4.new_output("stream", name=output["name"], text=strip_ansi(shown_stream(output["text"])))
                )
        elif kind == "error":
            outputs.append(
                nbformat.v4.new_output(
                    "error",
                    ename=output.get("ename", ""),
                    evalue=strip_ansi(without_machine_paths(str(output.get("evalue", "")))),
                    traceback=[error_line(output)],
                )
            )
        elif kind in ("display_data", "execute_result"):
            kept = copy.deepcopy(output)
            kept["data"] = safe_data(kept["data"])
            if kept["data"]:
                outputs.append(kept)
    return outputs


def _markdown_cell(converted: notebookmarkdown.Converted) -> NotebookNode | None:
    if not converted.text.strip():
        return None
    cell = nbformat.v4.new_markdown_cell(converted.text)
    if converted.attachments:
        cell["attachments"] = {
            name: notebookmarkdown.attachment(data, name) for name, data in converted.attachments.items()
        }
    return cell


def _split_at_solutions(text: str) -> list[tuple[str, str | None]]:
    """A markdown cell's text in pieces, each with what follows it: 'start <label>', 'end', or None."""
    pieces = []
    position = 0
    for match in _SOLUTION.finditer(text):
        # The directive runs to the line that closes exactly its opening fence (not a longer one), or to the end.
        closing = re.compile("\n" + re.escape(match[1]) + r"[ \t]*(?=\n|$)").search(text, match.end())
        marker = f"start {match['label']}" if match["which"] == "start" else "end"
        pieces.append((text[position : match.start()], marker))
        position = closing.end() if closing else len(text)
    pieces.append((text[position:], None))
    return pieces


def reader_notebook(notebook: NotebookNode) -> NotebookNode:
    """A page's executed notebook as myst-nb's ``{nb-download}`` role offers it: as the page shows it.

    The cells as written, with the outputs the page shows; none of the build's hidden cells, its kernel, its
    records or the build machine's paths, so that it runs in a reader's own Python 3 kernel.
    """
    kept = nbformat.v4.new_notebook(metadata=copy.deepcopy(notebook.metadata))
    # A notebook of format 4.4 (older JAX notebooks) has cells without ids, which 4.5 requires: keep its format.
    kept.nbformat_minor = notebook.get("nbformat_minor", kept.nbformat_minor)
    for key in (METADATA_KEY, "source_map"):
        kept.metadata.pop(key, None)
    kept.metadata["kernelspec"] = KERNELSPEC
    for cell in notebook.cells:
        if _tags(cell) & {SETUP_TAG, VERDICT_TAG}:
            continue
        copied = copy.deepcopy(cell)
        if cell.cell_type == "code":
            copied.outputs = _outputs(cell)
        kept.cells.append(copied)
    return kept


def executed_notebook(page: pages.Page, run: ExecutedRun, kernel: record.KernelRecord) -> NotebookNode:
    """This build's notebook, as notebook markdown, solutions after the exercises, the stamp first."""
    stamp = kernel.stamp
    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC})
    intro = (
        f"*{page.title}.* Executed by the course build on {stamps.backend_name(stamp)} at "
        f"{stamps.stamp_time(stamp)} with JAX {stamp['jax']}, jaxlib {stamp['jaxlib']} and Python "
        f"{stamp['python']}: every output below is that run's. The lesson's page is "
        f"[{page.docname}.html](doc:/{page.docname})."
    )
    notebook.cells = [nbformat.v4.new_markdown_cell(intro), *device_cells(page.settings.cpu_devices)]
    solutions: list[NotebookNode] = []
    exercises = {
        fence.options.get("label"): fence.argument for fence in (page.source.fences("exercise") if page.source else [])
    }
    figure_file = notebookmarkdown.figure_resolver(page.path)
    transcript = "".join(kernel.transcript)
    into = notebook.cells
    for cell in run.notebook.cells:
        if _tags(cell) & HIDDEN_TAGS:
            continue
        if cell.cell_type == "markdown":
            for text, marker in _split_at_solutions(cell.source):
                converted = notebookmarkdown.convert(text, figure_file=figure_file, transcript=transcript)
                if (markdown := _markdown_cell(converted)) is not None:
                    into.append(markdown)
                if marker and marker.startswith("start"):
                    label = marker.split(" ", 1)[1]
                    into = solutions
                    into.append(nbformat.v4.new_markdown_cell(f"### Solution: {exercises.get(label, label)}"))
                elif marker == "end":
                    into = notebook.cells
        elif cell.cell_type == "code":
            copied = nbformat.v4.new_code_cell(
                cell.source, execution_count=cell.get("execution_count"), metadata=copy.deepcopy(cell.metadata)
            )
            copied.outputs = _outputs(cell)
            into.append(copied)
    if solutions:
        notebook.cells.append(
            nbformat.v4.new_markdown_cell("## Solutions\n\nThe reference solutions, as this build ran them.")
        )
        notebook.cells.extend(solutions)
    return notebook


def starter_notebook(page: pages.Page, kernel: record.KernelRecord) -> NotebookNode:
    """The lesson's own code to run first, the checks, then each exercise with its scaffold and its check call.

    The scaffold cells are tagged ``exercise-scaffold`` and the check calls after them ``exercise-check``,
    each with the exercise's label as metadata; the checks' code sits, collapsed, in one cell before the
    exercises. No solutions.
    """
    source = page.source
    checks = {check.label: check for check in page.checks}
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# {page.title}: exercises\n\nRun the lesson's code cells first; then fill in each scaffold's "
            "`TODO`s and run the check under it."
        ),
        *device_cells(page.settings.cpu_devices),
        version_check_cell(kernel.stamp),
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
        # The tags travel: a cell tagged raises-exception must not stop a run of the notebook.
        cells.append(nbformat.v4.new_code_cell(cell.source, metadata={"tags": list(cell.tags)} if cell.tags else {}))
    if checks:
        cells.append(
            nbformat.v4.new_markdown_cell(
                "## The checks\n\nRun the next cell once: it defines the checks that the exercises call. "
                "Each tests what your code computes, not how it is written."
            )
        )
        cells.append(
            nbformat.v4.new_code_cell(
                "\n\n\n".join(check.source for check in checks.values()),
                metadata={"tags": ["exercise-checks"], "jupyter": {"source_hidden": True}},
            )
        )
    figure_file = notebookmarkdown.figure_resolver(page.path)
    for exercise in source.fences("exercise"):
        label = exercise.options.get("label", "")
        text = "\n".join(source.lines[exercise.line - 1 : exercise.end])
        converted = notebookmarkdown.convert(text, figure_file=figure_file)
        cells.append(nbformat.v4.new_markdown_cell(converted.text.replace("### Exercise:", "## Exercise:", 1)))
        check = checks.get(label)
        scaffold = exercisechecks.scaffold_of(source, exercise, solution_line(source, label))
        if scaffold is not None:
            cells.append(_exercise_cell(scaffold.code, exercisechecks.SCAFFOLD_TAG, label))
        if check is not None:
            cells.append(_exercise_cell(f"{check.function}()", exercisechecks.CHECK_TAG, label))
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})


def _exercise_cell(code: str, tag: str, label: str) -> NotebookNode:
    return nbformat.v4.new_code_cell(code, metadata={"tags": [tag], "exercise": label})


def solution_line(source, label: str) -> int:
    """The line of the exercise's {solution-start}, or the end of the page."""
    found = exercisechecks.solution_range(source, label)
    return found[0] if found else len(source.lines) + 1


def write_downloads(
    app: Sphinx, page: pages.Page, run: ExecutedRun, kernel: record.KernelRecord
) -> list[tuple[str, str]] | None:
    """Write the three files of a lesson; return (label, path relative to outdir) pairs, or None without a run."""
    if run.notebook is None or page.source is None:
        return None
    stem = page.path.stem
    folder = Path(app.outdir, DOWNLOADS)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(executed_notebook(page, run, kernel), folder / f"{stem}.ipynb")
    shutil.copyfile(page.path, folder / f"{stem}.md")
    starter = starter_notebook(page, kernel)
    nbformat.write(starter, folder / f"{stem}-exercises.ipynb")
    if app.config.course_notebooks_dir:
        published = Path(app.srcdir, app.config.course_notebooks_dir, f"{page.docname}.ipynb")
        published.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(starter, published)
    return [
        ("executed notebook", f"{DOWNLOADS}/{stem}.ipynb"),
        ("MyST source", f"{DOWNLOADS}/{stem}.md"),
        ("starter notebook (exercises)", f"{DOWNLOADS}/{stem}-exercises.ipynb"),
    ]


def colab_url(app: Sphinx, docname: str) -> str | None:
    """Where Colab opens a lesson's starter notebook: the published notebooks branch (course_notebooks_on_github)."""
    setting = app.config.course_notebooks_on_github
    if not setting:
        return None
    repository, _, branch = setting.partition("@")
    return f"https://colab.research.google.com/github/{repository}/blob/{branch or 'notebooks'}/{docname}.ipynb"


def links(app: Sphinx, docname: str, files: list[tuple[str, str]]) -> nodes.paragraph:
    paragraph = nodes.paragraph("", "Download: ", classes=["lesson-downloads"])
    here = posixpath.dirname(docname)
    for index, (label, target) in enumerate(files):
        if index:
            paragraph += nodes.Text(" · ")
        uri = posixpath.relpath(target, here or ".")
        paragraph += nodes.reference("", label, refuri=uri, classes=["download"], download=posixpath.basename(uri))
    if url := colab_url(app, docname):
        paragraph += nodes.Text(" · ")
        paragraph += nodes.reference("", "Open the exercises in Colab", refuri=url, classes=["colab"])
    return paragraph


def resolve_download_links(app: Sphinx, exception: Exception | None) -> None:
    """At the end of the build, when every page has been read: doc: and ref: links become hosted addresses."""
    if exception is not None or app.builder.format != "html":
        return
    env = app.env
    documents = {docname: title.astext() for docname, title in env.titles.items()}
    labels = dict(env.get_domain("std").labels)
    base_url = app.config.html_baseurl
    targets = list(Path(app.outdir, DOWNLOADS).glob("*.ipynb"))
    if app.config.course_notebooks_dir:
        targets += list(Path(app.srcdir, app.config.course_notebooks_dir).rglob("*.ipynb"))
    for path in targets:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        docname = f"{app.config.course_lessons_dir.strip('/')}/{path.stem.removesuffix('-exercises')}"
        changed = False
        for cell in notebook["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            resolved = notebookmarkdown.resolve_links(
                text, base_url=base_url, from_docname=docname, documents=documents, labels=labels
            )
            if resolved != text:
                cell["source"] = resolved
                changed = True
        if changed:
            path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

"""The course's myst-nb render plugin (``nb_render_plugin = "jaxcourse"``, a ``myst_nb.renderers`` entry point).

- An error output shows as plain ``Type: message`` (as ``%xmode minimal``): no library frames, no paths of
  the build machine, no Pygments traceback lexer to trip over a backtick in JAX's messages.
- Outputs are untrusted: HTML and markdown are sanitized (``jaxcourse.output.sanitize``), SVG cleaned,
  JavaScript and widget views refused, and an image needs alt text. A refused output, or a cell that shows
  more than the page's output limit, is a problem of the page, reported at the cell's line.
- The kernel's records (``runtime.RECORD_MIME``) are never shown.
- What each cell showed is kept, in page order, with the executed notebook (``document["jaxcourse_run"]``),
  for the transcript, the recordings and the downloads.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import site
import sys
import tempfile
from typing import Any

from docutils import nodes
from myst_nb.core.render import MimeData, NbElementRenderer, strip_ansi
from nbformat import NotebookNode

from ..privateapi import executed_notebook
from ..runtime import RECORD_MIME
from . import safesvg, sanitize

#: The document attribute holding this run's ``ExecutedRun`` until the course reads it at doctree-read.
RUN_ATTRIBUTE = "jaxcourse_run"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: Outputs a static page cannot show safely: they are code for the reader's browser.
REFUSED = {"application/javascript": "a JavaScript output", WIDGET_VIEW: "a widget view"}
#: Set on the raw HTML nodes this renderer made from sanitized outputs: every other raw node came from a
#: page's text, which the course refuses (``jaxcourse.output.rawhtml``). A directive cannot set this attribute.
OUTPUT_MARK = "jaxcourse_sanitized_output"


def _machine_paths() -> tuple[list[tuple[re.Pattern, str]], list[tuple[re.Pattern, str]]]:
    """Paths that name this machine, and what a page shows instead: where code lives (a cell's compiled file,
    the installed packages), then the build's own folders, most specific first."""
    # ipykernel compiles each cell to <tmp>/ipykernel_<pid>/<hash>.py.
    code = [(re.compile(re.escape(tempfile.gettempdir()) + r"/ipykernel_\d+/\d+\.py"), "<cell>")]
    for folder in {*site.getsitepackages(), site.getusersitepackages()}:
        code.append((re.compile(re.escape(folder.rstrip(os.sep)) + re.escape(os.sep)), "<site-packages>/"))
    folders = []
    for folder in {sys.prefix, sys.base_prefix, os.getcwd(), os.path.expanduser("~"), tempfile.gettempdir()}:
        if len(folder) > 1:
            folders.append((re.compile(re.escape(folder.rstrip(os.sep)) + r"(?=[/\s:'\"]|$)"), "<build>"))
    return code, folders


_CODE_PATHS, _BUILD_FOLDERS = _machine_paths()


def without_machine_paths(text: str, *, folders: bool = True) -> str:
    """``text`` with this machine's paths replaced by placeholders such as ``<cell>``.

    Without ``folders``, only where code lives is replaced: what a cell prints may name a path of its own
    choosing under the build's folders (orbax saves to ``/tmp/ckpt``), which must read as it was written.
    """
    for pattern, replacement in _CODE_PATHS + (_BUILD_FOLDERS if folders else []):
        text = pattern.sub(replacement, text)
    return text


def shown_stream(text: str) -> str:
    """A stream output's text as the page shows it: a warning names its file as '<site-packages>/jax/...'."""
    return without_machine_paths(text, folders=False)


def error_line(output: NotebookNode) -> str:
    """An error output as one reader-facing line: ``Type: message`` (message may span lines)."""
    message = strip_ansi(without_machine_paths(str(output.get("evalue", "")))).rstrip()
    return f"{output.get('ename', 'Error')}: {message}" if message else str(output.get("ename", "Error"))


def shown_text(output: NotebookNode) -> str:
    """What a display output records: its ``text/plain`` form, or the kinds of data it holds."""
    data = output.get("data", {})
    if "text/plain" in data:
        text = data["text/plain"]
        text = "".join(text) if isinstance(text, list) else str(text)
        return text if text.endswith("\n") else text + "\n"
    kinds = ", ".join(sorted(kind for kind in data if kind != RECORD_MIME))
    return f"<{kinds} output>\n" if kinds else ""


def output_size(output: NotebookNode) -> int:
    """Bytes an output adds to the page: stream text, an error's message, or all of its data."""
    kind = output.get("output_type")
    if kind == "stream":
        return len(str(output.get("text", "")).encode())
    if kind == "error":
        return len(str(output.get("evalue", "")).encode())
    data = output.get("data", {})
    return sum(
        len(value if isinstance(value, str) else str(value)) for key, value in data.items() if key != RECORD_MIME
    )


class ExecutedRun:
    """What one notebook's execution produced, as the page shows it."""

    def __init__(self) -> None:
        self.notebook: NotebookNode | None = None
        #: cell index -> [(output kind, text)], in the order the page shows them
        self.shown: dict[int, list[tuple[str, str]]] = {}
        #: (cell index or None, message): outputs the page cannot publish
        self.problems: list[tuple[int | None, str]] = []
        #: cell index -> bytes of output it showed
        self.sizes: dict[int, int] = {}
        #: cell index -> the output limit its output went over
        self.oversized: dict[int, int] = {}
        #: (cell index, output index) of each display output recorded -> whether the page shows it
        self.displays: dict[tuple[int, int], bool] = {}

    def transcript(self) -> list[str]:
        return [text for index in sorted(self.shown) for _, text in self.shown[index]]

    def problem(self, cell_index: int | None, message: str) -> None:
        if (cell_index, message) not in self.problems:
            self.problems.append((cell_index, message))


class CourseRenderer(NbElementRenderer):
    """myst-nb's default renderer, with minimal errors, safe outputs and hidden kernel records."""

    @property
    def run(self) -> ExecutedRun:
        document = self.renderer.document
        if RUN_ATTRIBUTE not in document:
            document[RUN_ATTRIBUTE] = ExecutedRun()
        return document[RUN_ATTRIBUTE]

    # What each cell showed, and how much.

    def _keep(self, cell_index: int, kind: str, text: str) -> None:
        # Colour codes (rich, IPython) are for a terminal: the transcript, recordings and downloads keep the text.
        self.run.shown.setdefault(cell_index, []).append((kind, strip_ansi(text)))

    def _output_limit(self) -> int:
        from ..source.frontmatter import DEFAULT_OUTPUT_LIMIT
        from ..source.reader import METADATA_KEY

        metadata = executed_notebook(self.renderer).metadata.get(METADATA_KEY, {})
        return int(metadata.get("output_limit", DEFAULT_OUTPUT_LIMIT))

    def _over_limit(self, cell_index: int | None, output: NotebookNode) -> list[nodes.Element] | None:
        """Nothing (a note, the first time) instead of an output that takes its cell over the page's limit."""
        if cell_index is None:
            return None
        run = self.run
        run.sizes[cell_index] = run.sizes.get(cell_index, 0) + output_size(output)
        limit = self._output_limit()
        if run.sizes[cell_index] <= limit:
            return None
        if cell_index in run.oversized:
            return []
        run.oversized[cell_index] = limit
        return [nodes.paragraph("", "(output left out: over the page's output limit)", classes=["output-left-out"])]

    def render_stdout(self, output, cell_metadata: dict[str, Any], cell_index: int, source_line: int):
        return self._stream(super().render_stdout, output, cell_metadata, cell_index, source_line)

    def render_stderr(self, output, cell_metadata: dict[str, Any], cell_index: int, source_line: int):
        return self._stream(super().render_stderr, output, cell_metadata, cell_index, source_line)

    def _stream(self, render, output, cell_metadata: dict[str, Any], cell_index: int, source_line: int):
        """A stream as the page shows it (``shown_stream``), unless it takes its cell over the output limit."""
        if (placeholder := self._over_limit(cell_index, output)) is not None:
            return placeholder
        output = NotebookNode({**output, "text": shown_stream(output["text"])})
        self._keep(cell_index, output["name"], output["text"])
        return render(output, cell_metadata, cell_index, source_line)

    def render_error(self, output, cell_metadata: dict[str, Any], cell_index: int, source_line: int):
        text = error_line(output)
        self._keep(cell_index, "error", text + "\n")
        # Plain text: the full traceback, with its frames and paths, goes to the build report only.
        node = self.renderer.create_highlighted_code_block(text, "none", source=self.source, line=source_line)
        node["classes"] += ["output", "traceback", "error-summary"]
        return [node]

    def _display_shown(self, data: MimeData) -> bool:
        """Record a display output once, at its first mime type (its text/plain form); False if over the limit."""
        if data.cell_index is None or data.output_index is None:
            return True  # an inline value ({glue}, {eval}), not an output of a cell
        key = (data.cell_index, data.output_index)
        if key not in self.run.displays:
            output = executed_notebook(self.renderer).cells[data.cell_index].outputs[data.output_index]
            shown = self._over_limit(data.cell_index, output) is None
            self.run.displays[key] = shown
            if shown and (text := shown_text(output)):
                self._keep(data.cell_index, "display", text)
        return self.run.displays[key]

    # Which outputs reach the page, and how.

    def render_mime_type(self, data: MimeData) -> list[nodes.Element]:
        if data.mime_type == RECORD_MIME or not self._display_shown(data):
            return []
        return self._safe_output(data, inline=False)

    def render_mime_type_inline(self, data: MimeData) -> list[nodes.Element]:
        if data.mime_type == RECORD_MIME:
            return []
        return self._safe_output(data, inline=True)

    def _safe_output(self, data: MimeData, *, inline: bool) -> list[nodes.Element]:
        """A display's chosen mime type as the page may publish it: refused, sanitized, or myst-nb's own."""
        if data.mime_type in REFUSED:
            why = "which a static page cannot show safely; display text, HTML or an image instead"
            return self._refuse(data, f"{REFUSED[data.mime_type]} ({data.mime_type}), {why}")
        if data.mime_type in ("text/html", "text/markdown"):
            clean = sanitize.html(data.string) if data.mime_type == "text/html" else sanitize.markdown(data.string)
            shown = sanitize.images(clean)
            if missing := sum(1 for _, alt in shown if not alt):
                return self._refuse(data, f"HTML with {missing} image(s) without alt text; give every <img> an alt")
            if addressed := [src for src, _ in shown if src and not src.lower().startswith("data:")]:
                return self._refuse(
                    data,
                    f"an image by its address ({addressed[0]}), which the page's URL would read and the site does "
                    "not publish; display the image file itself (IPython.display.Image or SVG, filename=...)",
                )
            kind = data.mime_type.replace("/", "_")
            return [nodes.raw(text=clean, format="html", classes=["output", kind], **{OUTPUT_MARK: True})]
        if data.mime_type == "image/svg+xml":
            try:
                data = dataclasses.replace(data, content=safesvg.clean(data.string))
            except safesvg.UnsafeSvg as error:
                return self._refuse(data, f"{error}, which the site cannot publish safely")
        parent = super().render_mime_type_inline if inline else super().render_mime_type
        return parent(data)

    def _refuse(self, data: MimeData, what: str) -> list[nodes.Element]:
        self.run.problem(data.cell_index, f"this cell displays {what}")
        return []

    def render_image(self, data: MimeData) -> list[nodes.Element]:
        rendered = super().render_image(data)
        if not all(node.get("alt") for node in rendered if isinstance(node, nodes.image)):
            self.run.problem(
                data.cell_index,
                f"this cell displays an image ({data.mime_type}) without alt text; describe it in the cell's "
                "metadata: 'mystnb: {image: {alt: ...}}' (or in the page's front matter: "
                "'mystnb: {render_image_options: {alt: ...}}')",
            )
        return rendered

    def render_nb_finalise(self, metadata: dict) -> None:
        # The executed notebook (from the execution cache too), before Sphinx pickles anything.
        self.run.notebook = copy.deepcopy(executed_notebook(self.renderer))
        # Widget views are refused, so their saved state would only add a script element to the page.
        super().render_nb_finalise({key: value for key, value in metadata.items() if key != "widgets"})


def size_text(count: int) -> str:
    """A byte count for a message: '20.0 MB', '1.5 kB', '300 bytes'."""
    for unit, size in (("MB", 1_000_000), ("kB", 1_000)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"

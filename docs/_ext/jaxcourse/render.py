"""The course's myst-nb render plugin (``nb_render_plugin = "jaxcourse"``).

myst-nb loads it through its documented ``myst_nb.renderers`` entry point (see
``pyproject.toml``). It changes three things about how a notebook's outputs
become a page:

- An error output shows as ``Type: message``, the shape of ``%xmode minimal``,
  as plain text: no library frames, no paths of the build machine, and no
  Pygments traceback lexer to trip over a backtick in JAX's messages.
- The kernel's records (``runtime.RECORD_MIME``) are never shown.
- What each cell showed is kept, in page order, with the executed notebook,
  for the transcript, the checks and the downloads (``document["jaxcourse_run"]``).
"""

from __future__ import annotations

import copy
import os
import re
import site
import sys
import tempfile
from typing import Any

from docutils import nodes
from myst_nb.core.render import MimeData, NbElementRenderer
from nbformat import NotebookNode

from .runtime import RECORD_MIME

#: The document attribute holding this run's ``ExecutedRun`` until the course reads it at doctree-read.
RUN_ATTRIBUTE = "jaxcourse_run"


def _machine_paths() -> list[tuple[re.Pattern, str]]:
    """Paths that name this machine, most specific first, and what a page shows instead."""
    replacements = [
        # ipykernel compiles each cell to <tmp>/ipykernel_<pid>/<hash>.py.
        (re.compile(re.escape(tempfile.gettempdir()) + r"/ipykernel_\d+/\d+\.py"), "<cell>"),
    ]
    for folder in {*site.getsitepackages(), site.getusersitepackages()}:
        replacements.append((re.compile(re.escape(folder.rstrip(os.sep)) + re.escape(os.sep)), "<site-packages>/"))
    for folder in {sys.prefix, sys.base_prefix, os.getcwd(), os.path.expanduser("~"), tempfile.gettempdir()}:
        if len(folder) > 1:
            replacements.append((re.compile(re.escape(folder.rstrip(os.sep)) + r"(?=[/\s:'\"]|$)"), "<build>"))
    return replacements


_MACHINE_PATHS = _machine_paths()


def without_machine_paths(text: str) -> str:
    """``text`` with this machine's folders replaced by placeholders such as ``<cell>``."""
    for pattern, replacement in _MACHINE_PATHS:
        text = pattern.sub(replacement, text)
    return text


def error_line(output: NotebookNode) -> str:
    """An error output as one reader-facing line: ``Type: message`` (message may span lines)."""
    message = without_machine_paths(str(output.get("evalue", ""))).rstrip()
    return f"{output.get('ename', 'Error')}: {message}" if message else str(output.get("ename", "Error"))


class ExecutedRun:
    """What one notebook's execution produced, as the page shows it."""

    def __init__(self) -> None:
        self.notebook: NotebookNode | None = None
        #: cell index -> [(output kind, text)], in the order the page shows them
        self.shown: dict[int, list[tuple[str, str]]] = {}

    def transcript(self) -> list[str]:
        return [text for index in sorted(self.shown) for _, text in self.shown[index]]


class CourseRenderer(NbElementRenderer):
    """myst-nb's default renderer, with minimal errors and hidden kernel records."""

    @property
    def run(self) -> ExecutedRun:
        document = self.renderer.document
        if RUN_ATTRIBUTE not in document:
            document[RUN_ATTRIBUTE] = ExecutedRun()
        return document[RUN_ATTRIBUTE]

    def _keep(self, cell_index: int, kind: str, text: str) -> None:
        self.run.shown.setdefault(cell_index, []).append((kind, text))

    def render_stdout(self, output, cell_metadata: dict[str, Any], cell_index: int, source_line: int):
        self._keep(cell_index, "stdout", output["text"])
        return super().render_stdout(output, cell_metadata, cell_index, source_line)

    def render_stderr(self, output, cell_metadata: dict[str, Any], cell_index: int, source_line: int):
        self._keep(cell_index, "stderr", output["text"])
        return super().render_stderr(output, cell_metadata, cell_index, source_line)

    def render_error(self, output, cell_metadata: dict[str, Any], cell_index: int, source_line: int):
        text = error_line(output)
        self._keep(cell_index, "error", text + "\n")
        # Plain text: the full traceback, with its frames and paths, goes to the build report only.
        node = self.renderer.create_highlighted_code_block(text, "none", source=self.source, line=source_line)
        node["classes"] += ["output", "traceback", "error-summary"]
        return [node]

    def render_mime_type(self, data: MimeData) -> list[nodes.Element]:
        if data.mime_type == RECORD_MIME:
            return []
        return super().render_mime_type(data)

    def render_inline_mime_type(self, data: MimeData) -> list[nodes.Element]:
        if data.mime_type == RECORD_MIME:
            return []
        return super().render_inline_mime_type(data)

    def render_nb_finalise(self, metadata: dict) -> None:
        # The executed notebook (from the execution cache too), before Sphinx pickles anything.
        self.run.notebook = copy.deepcopy(self.renderer.nb_client.notebook)
        super().render_nb_finalise(metadata)

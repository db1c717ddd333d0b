"""myst-nb's Sphinx parser, with a kernel that dies reported as one located message.

A dead kernel (``os._exit``, a segfault, the out-of-memory killer) raises nbclient's ``DeadKernelError`` out of
myst-nb's parser, and Sphinx would stop with its own traceback. This parser reports it at the cell that was
running, which the kernel notes in a file that outlives it (``runtime.ipython``), with its statement where the
kernel left its Python stack there (not on SIGKILL) and how the process ended (``provisioner.LAST_EXIT``).
"""

from __future__ import annotations

import re
import signal
from pathlib import Path

from docutils import nodes
from myst_nb.sphinx_ import Parser
from nbclient.exceptions import DeadKernelError

from ..output.render import RUN_ATTRIBUTE
from ..privateapi import forget_the_stopped_parse, parse_plain_myst
from ..runtime import kernel, provisioner
from ..runtime.ipython import cell_digest
from ..source import located, pages
from . import record

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<name>\S+)')
_CELL_FILE = re.compile(r"/ipykernel_\d+/\d+\.py$")
_CELL_STARTED = re.compile(r"^cell (?P<digest>[0-9a-f]{40})$", re.M)


class CourseParser(Parser):
    """myst-nb's parser; a dead kernel becomes one located error instead of a Sphinx traceback."""

    def parse(self, inputstring: str, document: nodes.document) -> None:
        try:
            super().parse(inputstring, document)
        except DeadKernelError:
            forget_the_stopped_parse(document)
            document.attributes.pop(RUN_ATTRIBUTE, None)
            env = document.settings.env
            page = pages.page_being_read(env.docname)
            line, message = dead_kernel_message(page, Path(env.doctreedir) / "kernel-stderr")
            located.report(env.docname, line, message, subtype="kernel")
            # A page of plain MyST in its place, parsed by myst-parser so the document is complete.
            document.children = []
            title = page.title if page else env.docname
            parse_plain_myst(self, f"# {title}\n\nThis page did not build: its kernel died while it ran.\n", document)


def dead_kernel_message(page: pages.Page | None, stderr_dir: Path) -> tuple[int, str]:
    """The line to report a dead kernel at, and the message."""
    pid, status = provisioner.LAST_EXIT.get("pid"), provisioner.LAST_EXIT.get("status")
    how = ending(status)
    digest, statement = read_crash_file(kernel.crash_file(stderr_dir, pid)) if pid else (None, None)
    notebook = page.notebook if page else None
    if notebook is None or digest is None:
        return 1, f"the kernel died while this page ran ({how}); which cell ran is not known"
    digests = [cell_digest(cell.source) if cell.cell_type == "code" else None for cell in notebook.cells]
    running = digests.index(digest) if digest in digests else None
    cell = next((cell for cell in record.collect_cells(notebook) if cell.index == running), None)
    if cell is None:
        return 1, f"the kernel died while the course runtime started ({how})"
    if statement is None:
        return cell.line, f"the kernel died while this cell ran ({how}); the statement is not known"
    return cell.line_of(
        statement
    ), f"the kernel died while running this statement of the cell at line {cell.line} ({how})"


def read_crash_file(path: Path) -> tuple[str | None, int | None]:
    """The digest of the cell a dead kernel was running, and the line of that cell it was at, if known."""
    if not path.is_file():
        return None, None
    text = path.read_text(encoding="utf-8", errors="replace")
    cells = list(_CELL_STARTED.finditer(text))
    if not cells:
        return None, None
    return cells[-1]["digest"], running_line(text[cells[-1].end() :])


def ending(status: int | None) -> str:
    """How a kernel process ended, for a reader: its exit status, or the signal that killed it."""
    if status is None:
        return "it stopped"
    if status >= 0:
        return f"the process exited with status {status}, as os._exit or a library calling exit() does"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = f"signal {-status}"
    if name == "SIGKILL":
        return "the process was killed by SIGKILL, as the out-of-memory killer does"
    return f"the process was killed by {name}, a crash in compiled code"


def running_line(stack: str) -> int | None:
    """The line of the running cell that was executing, from a faulthandler stack dump, if any.

    The stack lists the most recent call first. The running cell is the outermost ``<module>`` frame in a cell's
    file; functions it called that were defined in the same cell are frames of the same file further in, and the
    innermost of those is the statement that was running.
    """
    frames = list(_FRAME.finditer(stack))
    cells = [frame for frame in frames if _CELL_FILE.search(frame["file"])]
    outermost = next((frame for frame in reversed(cells) if frame["name"] == "<module>"), None)
    if outermost is None:
        return None
    return int(next(frame for frame in cells if frame["file"] == outermost["file"])["line"])

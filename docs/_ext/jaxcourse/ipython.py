"""IPython extension loaded by the course kernel: a failing cell says where it failed.

When a cell raises, the kernel publishes a record (``runtime.RECORD_MIME``)
holding the line of the cell that raised, taken from the traceback object
itself, then shows the exception as IPython does in its plain mode. The build turns that
into ``lessons/<id>.md:<line>`` without reading traceback text.
"""

from __future__ import annotations

import traceback

from .runtime import publish


def line_in_cell(tb) -> int | None:
    """The deepest line of the failing cell's own code in a traceback (1-based), if any.

    The cell's code is the first ``<module>`` frame; frames with the same file name
    further down are functions that cell defined and called.
    """
    frames = traceback.extract_tb(tb)
    cell = next((frame for frame in frames if frame.name == "<module>"), None)
    if cell is None:
        return None
    return [frame for frame in frames if frame.filename == cell.filename][-1].lineno


def _record_then_show(shell, etype, value, tb, tb_offset=None):
    publish({"kind": "error", "ename": etype.__name__, "line": line_in_cell(tb)})
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def load_ipython_extension(shell) -> None:
    # KeyboardInterrupt too: a cell stopped at its time limit is reported at the interrupted line.
    shell.set_custom_exc((Exception, KeyboardInterrupt), _record_then_show)
    # Tracebacks in the plain Python style (%xmode Plain): each frame's file, line and code. The
    # default, with context lines read for every frame, cost half a second per raised JAX error,
    # and pages show only the 'Type: message' line anyway; the full traceback is for the reports.
    shell.InteractiveTB.set_mode(mode="Plain")

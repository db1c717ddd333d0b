"""IPython extension loaded by the course kernel: a failing cell says where it failed.

It also makes a cell's printed text leave the kernel in one piece (see
:func:`send_output_when_the_cell_ends`).

When a cell raises, the kernel publishes a record (``runtime.RECORD_MIME``)
holding the line of the cell that raised, taken from the traceback object
itself, then shows the exception as IPython does in its plain mode. The build turns that
into ``lessons/<id>.md:<line>`` without reading traceback text.
"""

from __future__ import annotations

import sys
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


#: Longer than any cell may run (the build's per-cell timeout is far shorter).
_NEVER_DURING_A_CELL = 24 * 3600.0


def send_output_when_the_cell_ends() -> None:
    """Send stdout and stderr when the cell ends, not 0.2 s after a write.

    ipykernel sends buffered text ``flush_interval`` seconds after the first write,
    so a print that pauses (or a busy machine) splits a line across two stream
    messages, and myst-nb's stream merging puts a newline at the split. ipykernel
    flushes both streams after every cell, and an explicit ``flush()`` still works.
    """
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "flush_interval"):  # ipykernel's OutStream; absent in a plain IPython
            stream.flush_interval = _NEVER_DURING_A_CELL


def load_ipython_extension(shell) -> None:
    # KeyboardInterrupt too: a cell stopped at its time limit is reported at the interrupted line.
    shell.set_custom_exc((Exception, KeyboardInterrupt), _record_then_show)
    # Tracebacks in the plain Python style (%xmode Plain): each frame's file, line and code. The
    # default, with context lines read for every frame, cost half a second per raised JAX error,
    # and pages show only the 'Type: message' line anyway; the full traceback is for the reports.
    shell.InteractiveTB.set_mode(mode="Plain")
    send_output_when_the_cell_ends()

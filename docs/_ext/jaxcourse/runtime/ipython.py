"""IPython extension loaded by the course kernel: a failing cell says where it failed.

When a cell raises, the kernel publishes a record (``runtime.RECORD_MIME``) holding the line of the cell that
raised, taken from the traceback object itself, then shows the exception in IPython's plain mode; the build
reports ``lessons/<id>.md:<line>`` without reading traceback text. The extension also sends a cell's printed
text in one piece, makes a kernel that dies leave a trail the build can read, and fails a cell that installs
packages or runs a shell command that fails.
"""

from __future__ import annotations

import faulthandler
import hashlib
import os
import re
import sys
import traceback

from ..privateapi import delay_timed_flushes, run_before_os_exit
from . import publish
from .kernel import STDERR_DIR_VARIABLE, crash_file


def line_in_cell(tb) -> int | None:
    """The deepest line of the failing cell's own code in a traceback (1-based), if any.

    The cell's code is the first ``<module>`` frame; frames with its file name are functions it defined.
    """
    frames = traceback.extract_tb(tb)
    cell = next((frame for frame in frames if frame.name == "<module>"), None)
    if cell is None:
        return None
    return [frame for frame in frames if frame.filename == cell.filename][-1].lineno


def _record_then_show(shell, etype, value, tb, tb_offset=None):
    # Its classes, most specific first: a cell that must raise ValueError may raise a subclass of it.
    classes = [cls.__name__ for cls in getattr(etype, "__mro__", (etype,))]
    publish({"kind": "error", "ename": etype.__name__, "classes": classes, "line": line_in_cell(tb)})
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


#: Longer than any cell may run (the build's per-cell timeout is far shorter).
_NEVER_DURING_A_CELL = 24 * 3600.0


def send_output_when_the_cell_ends() -> None:
    """Send stdout and stderr when the cell ends (or on ``flush()``), not 0.2 s after a write.

    Else a print that pauses (or a busy machine) splits a line across two stream messages, and myst-nb's
    stream merging puts a newline at the split.
    """
    for stream in (sys.stdout, sys.stderr):
        delay_timed_flushes(stream, _NEVER_DURING_A_CELL)


def cell_digest(source: str) -> str:
    """How the kernel's crash file names a cell: a hash of its source, which the build computes too."""
    return hashlib.sha1(source.encode()).hexdigest()


def leave_a_trail_for_a_crash(shell) -> None:
    """Note each cell as it starts, and the Python stack if the process dies abruptly, in one file.

    A segfault or an abort runs no Python code, ``os._exit`` skips every exit handler, and the out-of-memory
    killer leaves nothing at all. The file (:func:`jaxcourse.runtime.kernel.crash_file`) holds a line
    ``cell <digest>`` per cell started, then, on a fatal signal or ``os._exit``, faulthandler's dump of the
    stack, from which the build names the cell and the statement. Outside a build nothing changes.
    """
    folder = os.environ.get(STDERR_DIR_VARIABLE)
    if not folder:
        return
    # Opened once and kept open: faulthandler writes to its descriptor from a signal handler.
    trail = open(crash_file(folder, os.getpid()), "w", encoding="utf-8")  # noqa: SIM115
    faulthandler.enable(file=trail, all_threads=False)

    def note_cell(info) -> None:
        trail.write(f"cell {cell_digest(info.raw_cell)}\n")
        trail.flush()

    shell.events.register("pre_run_cell", note_cell)

    def dump_the_stack() -> None:
        trail.flush()
        faulthandler.dump_traceback(file=trail, all_threads=False)

    run_before_os_exit(dump_the_stack)


#: A shell command that installs packages, as '!pip install x' or '!{sys.executable} -m pip install x' reach it
#: (before IPython expands the braces).
_INSTALL_COMMAND = re.compile(
    r"^\s*(?:\S+\s+-m\s+pip|(?:\S*/)?(?:pip[\d.]*|uv\s+pip|conda|mamba|micromamba))\s+install\b"
)
#: IPython's magics that install packages.
_INSTALL_MAGICS = ("pip", "conda", "mamba", "micromamba", "uv")


class PackageInstallInBuild(RuntimeError):
    """A cell tried to install packages while the site was being built."""


class ShellCommandFailed(RuntimeError):
    """A shell command (``!cmake ...``) exited with a status other than 0 while the site was being built."""


def guard_shell_commands(shell) -> None:
    """In a build, a cell that installs packages (``%pip install``, ``!pip install``...) fails at once, at its line,
    and a shell command that fails (``!cmake``, not installed) fails its cell at its line.

    An install would change the one environment every page runs in (``.nox/site``, exactly the lock), or, with
    no network, wait out the cell's time limit. Other pip commands (``%pip list``) run. IPython only notes a
    failed command's status in ``_exit_code`` and goes on, so the page failed later, at a cell that needed what
    the command should have made (JAX's FFI tutorial: a StopIteration two cells on). A cell tagged
    ``raises-exception`` may fail, as any cell may. Outside a build nothing changes.
    """
    if not os.environ.get(STDERR_DIR_VARIABLE):
        return

    def refusing(run, prefix: str = ""):
        def guarded(command: str):
            if _INSTALL_COMMAND.match(prefix + command):
                written = ("%" + prefix if prefix else "!") + command.strip()
                raise PackageInstallInBuild(
                    f"this cell installs packages ({written}), and a build installs nothing: every page runs on "
                    "exactly requirements.txt, with no network. Take the install out of the page; a package the "
                    "page needs goes in requirements.in (then `nox -s lock`)"
                )
            shell.user_ns["_exit_code"] = 0
            result = run(command)
            if not prefix and (status := shell.user_ns.get("_exit_code")):
                missing = " (no such command on this machine)" if status == 127 else ""
                raise ShellCommandFailed(f"the shell command !{command.strip()} exited with status {status}{missing}")
            return result

        return guarded

    for magic in _INSTALL_MAGICS:
        if (run_magic := shell.find_line_magic(magic)) is not None:
            shell.register_magic_function(refusing(run_magic, f"{magic} "), "line", magic)
    shell.system = refusing(shell.system)


def load_ipython_extension(shell) -> None:
    # KeyboardInterrupt too: a cell stopped at its time limit is reported at the interrupted line.
    shell.set_custom_exc((Exception, KeyboardInterrupt), _record_then_show)
    # Tracebacks in the plain Python style (%xmode Plain): each frame's file, line and code. The
    # default, with context lines read for every frame, cost half a second per raised JAX error,
    # and pages show only the 'Type: message' line anyway; the full traceback is for the reports.
    shell.InteractiveTB.set_mode(mode="Plain")
    send_output_when_the_cell_ends()
    leave_a_trail_for_a_crash(shell)
    guard_shell_commands(shell)

"""The kernel side, without starting a kernel: the course's IPython extension and the kernel provisioner.

A failing cell's line read from its traceback, the record it publishes, the trail a dying kernel leaves (read
back by ``execution.parser``), and kernels that talk over sockets in a folder of their own.
"""

from __future__ import annotations

import asyncio
import builtins
import os
import re
import sys
import types
from pathlib import Path

import pytest
from jaxcourse.execution import parser
from jaxcourse.runtime import ipython, kernel, provisioner
from jupyter_client.manager import KernelManager
from jupyter_client.provisioning import LocalProvisioner

CELL = """def inner():
    return 1 / 0

x = 1
inner()
"""


def raised_in_a_cell(source: str, filename: str = "/tmp/ipykernel_1/123.py"):
    """(type, value, traceback) of running ``source`` as IPython runs a cell: module code of its own file."""
    try:
        exec(compile(source, filename, "exec"), {})
    except BaseException as error:  # noqa: BLE001 - any exception a cell may raise
        return type(error), error, error.__traceback__
    raise AssertionError("the cell did not raise")


# --- the failing line ---------------------------------------------------------------------------------------------


def test_a_cell_fails_at_the_deepest_line_of_its_own_code():
    _, _, tb = raised_in_a_cell(CELL)
    assert ipython.line_in_cell(tb) == 2  # in the function the cell defined, not at the call on line 5


def test_a_cell_that_fails_inside_a_library_fails_at_its_own_call():
    _, _, tb = raised_in_a_cell("import json\n\njson.loads('{')\n")
    assert ipython.line_in_cell(tb) == 3


def test_a_traceback_without_a_cell_has_no_line():
    def outside():
        raise ValueError("no module frame")

    with pytest.raises(ValueError) as raised:
        outside()
    assert ipython.line_in_cell(raised.value.__traceback__) is None


def test_a_failing_cell_publishes_its_line_and_classes_then_shows_the_error(monkeypatch):
    published, shown = [], []
    monkeypatch.setattr(ipython, "publish", published.append)
    shell = types.SimpleNamespace(showtraceback=lambda exc_tuple, tb_offset=None: shown.append((exc_tuple, tb_offset)))
    etype, value, tb = raised_in_a_cell(CELL)
    ipython._record_then_show(shell, etype, value, tb, tb_offset=1)
    assert published == [
        {
            "kind": "error",
            "ename": "ZeroDivisionError",
            "classes": ["ZeroDivisionError", "ArithmeticError", "Exception", "BaseException", "object"],
            "line": 2,
        }
    ]
    assert shown == [((etype, value, tb), 1)]


def test_the_extension_records_errors_and_interrupts_in_plain_tracebacks(monkeypatch):
    monkeypatch.delenv(kernel.STDERR_DIR_VARIABLE, raising=False)  # outside a build: no trail
    calls = {}
    shell = types.SimpleNamespace(
        set_custom_exc=lambda classes, handler: calls.setdefault("custom", (classes, handler)),
        InteractiveTB=types.SimpleNamespace(set_mode=lambda mode: calls.setdefault("mode", mode)),
        events=types.SimpleNamespace(register=lambda *args: calls.setdefault("events", args)),
    )
    ipython.load_ipython_extension(shell)
    assert calls == {"custom": ((Exception, KeyboardInterrupt), ipython._record_then_show), "mode": "Plain"}


def test_printed_text_leaves_the_kernel_when_the_cell_ends(monkeypatch):
    stdout = types.SimpleNamespace(flush_interval=0.2)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", types.SimpleNamespace())  # a plain stream: nothing to set
    ipython.send_output_when_the_cell_ends()
    assert stdout.flush_interval >= 3600 and not hasattr(sys.stderr, "flush_interval")


# --- the trail of a dying kernel ----------------------------------------------------------------------------------


def test_a_dying_kernel_leaves_the_cell_it_ran_and_its_stack_where_the_build_reads_them(tmp_path, monkeypatch):
    opened, exits, enabled = [], [], []
    real_open = builtins.open

    def tracked_open(*args, **kwargs):
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    # faulthandler stays the test process's own: only enabling it is faked, the stack dump is real.
    fake_faulthandler = types.SimpleNamespace(
        enable=lambda file, all_threads: enabled.append(file),
        dump_traceback=ipython.faulthandler.dump_traceback,
    )
    monkeypatch.setenv(kernel.STDERR_DIR_VARIABLE, str(tmp_path))
    monkeypatch.setattr(ipython, "open", tracked_open, raising=False)
    monkeypatch.setattr(ipython, "faulthandler", fake_faulthandler)
    monkeypatch.setattr(os, "_exit", exits.append)
    registered = {}
    shell = types.SimpleNamespace(events=types.SimpleNamespace(register=registered.__setitem__))
    try:
        ipython.leave_a_trail_for_a_crash(shell)
        assert enabled == opened  # faulthandler writes to the trail
        registered["pre_run_cell"](types.SimpleNamespace(raw_cell="x = 1"))
        registered["pre_run_cell"](types.SimpleNamespace(raw_cell="os._exit(3)"))
        os._exit(3)  # the kernel's os._exit, as a library might call it
    finally:
        for file in opened:
            file.close()
    assert exits == [3]
    trail = kernel.crash_file(tmp_path, os.getpid())
    text = trail.read_text(encoding="utf-8")
    assert text.startswith(f"cell {ipython.cell_digest('x = 1')}\ncell {ipython.cell_digest('os._exit(3)')}\n")
    assert "most recent call first" in text  # the stack, after the cells
    assert parser.read_crash_file(trail) == (ipython.cell_digest("os._exit(3)"), None)  # no cell file in this stack


def test_outside_a_build_a_kernel_leaves_no_trail(monkeypatch):
    monkeypatch.delenv(kernel.STDERR_DIR_VARIABLE, raising=False)
    exit_now = os._exit
    ipython.leave_a_trail_for_a_crash(types.SimpleNamespace())  # would fail on shell.events if it went on
    assert os._exit is exit_now


# --- the kernel provisioner ---------------------------------------------------------------------------------------


@pytest.fixture
def launching(monkeypatch):
    """A provisioner whose parent launches nothing: LocalProvisioner's own steps are stubbed."""
    seen = {}

    async def pre_launch(self, **kwargs):
        seen["pre_launch"] = kwargs
        return kwargs

    async def poll(self):
        return seen.get("status")

    async def cleanup(self, restart=False):
        seen.setdefault("cleanup", []).append(restart)

    monkeypatch.setattr(LocalProvisioner, "pre_launch", pre_launch)
    monkeypatch.setattr(LocalProvisioner, "poll", poll)
    monkeypatch.setattr(LocalProvisioner, "cleanup", cleanup)
    monkeypatch.setattr(provisioner, "LAST_EXIT", {})
    manager = KernelManager()
    return provisioner.IpcProvisioner(kernel_id="k", kernel_spec=None, parent=manager), manager, seen


def test_a_kernel_talks_over_sockets_in_a_private_folder_kept_across_restarts(launching):
    ipc, manager, seen = launching
    assert asyncio.run(ipc.pre_launch(extra_arguments=["--x"])) == {"extra_arguments": ["--x"]}
    folder = Path(manager.ip).parent
    assert manager.transport == "ipc" and manager.ip == str(folder / "socket")
    assert folder.is_dir() and folder.name.startswith("jaxcourse-kernel-") and list(folder.iterdir()) == []
    asyncio.run(ipc.cleanup(restart=True))
    asyncio.run(ipc.pre_launch())
    assert folder.is_dir() and manager.ip == str(folder / "socket")  # a restarted kernel keeps its sockets' folder
    asyncio.run(ipc.cleanup())
    assert not folder.exists() and seen["cleanup"] == [True, False]


def test_two_kernels_never_share_a_socket_folder(monkeypatch, launching):
    first, first_manager, _ = launching
    second_manager = KernelManager()
    second = provisioner.IpcProvisioner(kernel_id="k2", kernel_spec=None, parent=second_manager)
    try:
        asyncio.run(first.pre_launch())
        asyncio.run(second.pre_launch())
        assert Path(first_manager.ip).parent != Path(second_manager.ip).parent
    finally:
        asyncio.run(first.cleanup())
        asyncio.run(second.cleanup())


def test_how_the_last_kernel_ended_is_remembered(launching):
    ipc, _, seen = launching
    ipc.pid = 4321
    assert asyncio.run(ipc.poll()) is None and provisioner.LAST_EXIT == {}  # still running
    seen["status"] = -11
    assert asyncio.run(ipc.poll()) == -11
    assert provisioner.LAST_EXIT == {"pid": 4321, "status": -11}
    assert "SIGSEGV" in parser.ending(provisioner.LAST_EXIT["status"])


def test_in_a_build_a_cell_that_installs_packages_fails_and_other_commands_run(monkeypatch, tmp_path):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv(kernel.STDERR_DIR_VARIABLE, str(tmp_path))
    shell = InteractiveShell()
    ran = []
    monkeypatch.setattr(shell, "system", ran.append)
    shell.register_magic_function(lambda line: ran.append(f"%pip {line}"), "line", "pip")
    ipython.guard_shell_commands(shell)
    for cell, shown in [
        ("%pip install --quiet optax", "%pip install --quiet optax"),
        ("!pip install torch torchvision", "!pip install torch torchvision"),
        ("!{sys.executable} -m pip install -U jax", "!{sys.executable} -m pip install -U jax"),
        ("!/env/bin/pip3.11 install jax", "!/env/bin/pip3.11 install jax"),
        ("!uv pip install numpy", "!uv pip install numpy"),
        ("%conda install numpy", "%conda install numpy"),
    ]:
        with pytest.raises(ipython.PackageInstallInBuild, match=rf"installs packages \({re.escape(shown)}\)"):
            shell.run_cell(cell).raise_error()
    shell.run_cell("%pip list")
    shell.run_cell("!echo pip install is only words here")
    assert ran == ["%pip list", "echo pip install is only words here"]


def test_in_a_build_a_shell_command_that_fails_fails_its_cell_at_its_line(monkeypatch, tmp_path):
    """As JAX's FFI tutorial runs '!cmake': IPython notes the status in _exit_code and would go on."""
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv(kernel.STDERR_DIR_VARIABLE, str(tmp_path))
    shell = InteractiveShell()
    ipython.guard_shell_commands(shell)
    with pytest.raises(ipython.ShellCommandFailed, match=r"^the shell command !exit 3 exited with status 3$"):
        shell.run_cell("x = 1\n!exit 3\ny = 2").raise_error()
    assert "y" not in shell.user_ns
    with pytest.raises(ipython.ShellCommandFailed, match=r"status 127 \(no such command on this machine\)$"):
        shell.run_cell("!jaxcourse-no-such-command").raise_error()
    assert shell.run_cell("!true\nz = 3").success and shell.user_ns["z"] == 3
    assert shell.run_cell("listing = !exit 4").success  # captured output is the cell's to read, status and all


def test_outside_a_build_a_cell_may_install_packages(monkeypatch):
    monkeypatch.delenv(kernel.STDERR_DIR_VARIABLE, raising=False)
    ipython.guard_shell_commands(types.SimpleNamespace())  # would fail on shell.system if it went on

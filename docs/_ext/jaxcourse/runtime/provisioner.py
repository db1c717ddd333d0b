"""Kernels of the course talk to the build over Unix sockets, not TCP ports.

With TCP, jupyter_client picks a free port by opening and closing a socket, then the kernel opens it again,
so two kernels started at once by a parallel build can pick the same port. IPC sockets live in a folder of
each kernel's own. This is a kernel provisioner, jupyter_client's documented hook (named by
``kernels/jaxcourse/kernel.json``); it also remembers how the last kernel process ended (:data:`LAST_EXIT`).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

#: (process id, exit status as Popen reports it: negative when killed by that signal) of the last
#: kernel seen to end in this process; Sphinx reads one page at a time per process.
LAST_EXIT: dict[str, int] = {}


class IpcProvisioner(LocalProvisioner):
    """The local provisioner, with the kernel's sockets in a private folder."""

    _socket_folder: str | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        manager = self.parent
        if manager is not None and self._socket_folder is None:
            self._socket_folder = tempfile.mkdtemp(prefix="jaxcourse-kernel-")
            manager.transport = "ipc"
            manager.ip = str(Path(self._socket_folder, "socket"))  # the sockets are socket-1, socket-2, ...
        return await super().pre_launch(**kwargs)

    async def poll(self) -> int | None:
        pid = self.pid
        status = await super().poll()
        if status is not None and pid:
            LAST_EXIT.update(pid=pid, status=status)
        return status

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart=restart)
        if not restart and self._socket_folder is not None:
            shutil.rmtree(self._socket_folder, ignore_errors=True)
            self._socket_folder = None

"""The course's Jupyter kernel: ipykernel, quiet, with the course's IPython extension.

``kernels/jaxcourse/kernel.json`` starts ``python -m jaxcourse.runtime.kernel``; conf.py aliases the lessons'
``python3`` kernel to it, so the downloaded notebooks still run in any Python 3 kernel. ``... kernel install``
registers the spec in this environment, once, when nox builds it; a build only checks that the installed
copy is current, so two builds started at once never rewrite it under each other.
"""

from __future__ import annotations

import filecmp
import os
import sys
from pathlib import Path

NAME = "jaxcourse"
SPEC_DIR = Path(__file__).parent / "kernels" / NAME
#: Where a kernel's own stderr goes (ipykernel's shutdown noise, XLA's C++ logs); set by the build.
STDERR_DIR_VARIABLE = "JAXCOURSE_KERNEL_STDERR_DIR"


def crash_file(folder: str | Path, pid: int) -> Path:
    """Where a kernel notes each cell it starts, and its Python stack if it dies (``jaxcourse.runtime.ipython``)."""
    return Path(folder, f"kernel-{pid}.crash")


def installed_spec(prefix: str = sys.prefix) -> Path:
    return Path(prefix, "share", "jupyter", "kernels", NAME, "kernel.json")


def _is_current(target: Path) -> bool:
    return filecmp.cmp(target, SPEC_DIR / "kernel.json", shallow=False)


def ensure_installed(prefix: str = sys.prefix) -> bool:
    """Install the kernel spec into ``prefix`` unless an identical copy is there; True if it wrote."""
    target = installed_spec(prefix)
    if target.exists() and _is_current(target):
        return False
    from jupyter_client.kernelspec import KernelSpecManager

    KernelSpecManager().install_kernel_spec(str(SPEC_DIR), NAME, prefix=prefix)
    return True


def installed_problem(prefix: str = sys.prefix) -> str | None:
    """Why this environment cannot run the course kernel, or None when its spec is current."""
    target = installed_spec(prefix)
    if not target.exists():
        state = "is not installed"
    elif not _is_current(target):
        state = "is out of date"
    else:
        return None
    return (
        f"the course kernel spec {state} in this environment ({target}); run "
        "'python -m jaxcourse.runtime.kernel install' (nox does this when it builds the environment)"
    )


def _divert_stderr() -> None:
    """Send this process's stderr (fd 2) to a log file, so a build's console shows only located messages.

    What a lesson writes to ``sys.stderr`` is unaffected: ipykernel captures it into the notebook.
    """
    folder = os.environ.get(STDERR_DIR_VARIABLE)
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    log = os.open(Path(folder, f"kernel-{os.getpid()}.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 2)
    os.close(log)


def main(argv: list[str]) -> None:
    if argv[:1] == ["install"]:
        written = ensure_installed()
        print(f"{'installed' if written else 'up to date'}: {installed_spec()}")
        return
    _divert_stderr()
    from ipykernel.kernelapp import IPKernelApp

    IPKernelApp.launch_instance(argv=argv)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Kernel-side half of the course extension; it runs inside the Jupyter kernel, so it must not import Sphinx.

The build injects a hidden first cell that calls :func:`begin` and a last one that calls :func:`finish`;
lessons call :func:`save_figure`. What the kernel tells the build (the run stamp, the verdict, where a cell
failed) travels as display data of type :data:`RECORD_MIME`, which no page shows.
"""

from __future__ import annotations

import datetime
import io
import os
import platform
import re
import shutil
from pathlib import Path

from .charts import DARK, DARK_SUFFIX, LIGHT, render_svg

RECORD_MIME = "application/vnd.jaxcourse.record+json"
DEVICE_COUNT_FLAG = "--xla_force_host_platform_device_count"

_run: dict = {}
#: A figure's extra name: it becomes part of a file name in figures/, so no '/' or '..'.
_FIGURE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
#: A page id such as docs/jit-compilation names its figure docs-jit-compilation.svg.
_PAGE_TO_FILE = re.compile(r"[^A-Za-z0-9-]")


def cpu_device_flags(existing: str, count: int) -> str:
    """``XLA_FLAGS`` with the simulated CPU device count set to ``count`` (any earlier count replaced)."""
    kept = [flag for flag in existing.split() if not flag.startswith(DEVICE_COUNT_FLAG + "=")]
    return " ".join([*kept, f"{DEVICE_COUNT_FLAG}={count}"])


def begin(
    page: str,
    *,
    figures_dir: str,
    environment: str,
    cpu_devices: int | None = None,
    files: dict[str, str] | None = None,
    files_digest: str = "",
) -> None:
    """Copy in the files the page reads, pin JAX to the CPU (``cpu_devices`` simulated devices), publish the stamp.

    ``environment``, a fingerprint of the packages and settings that change results, and ``files_digest``, of
    the files' contents, are unused: they sit in the cell source so that the execution cache key changes with
    them. ``files`` maps each path the page's code names beside its file to that file; the kernel runs in a
    scratch folder, where the copies let the page read them by the same relative paths. JAX's backend is left
    alone unless the page asked for devices, so a page may still configure JAX in its first cell;
    :func:`finish` records the devices the run used.
    """
    for relative, source in (files or {}).items():
        if Path(relative).resolve() != Path(source):  # the same file where a kernel runs beside its page
            Path(relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, relative)
    # Both must happen before JAX initializes its backend in this process.
    os.environ["JAX_PLATFORMS"] = "cpu"
    if cpu_devices is not None:
        os.environ["XLA_FLAGS"] = cpu_device_flags(os.environ.get("XLA_FLAGS", ""), cpu_devices)
    import jax
    import jaxlib

    if cpu_devices is not None and len(jax.devices()) != cpu_devices:
        raise RuntimeError(
            f"asked for {cpu_devices} CPU devices but JAX has {len(jax.devices())}: "
            "JAX was initialized before the course runtime set XLA_FLAGS"
        )
    _run.clear()
    _run.update(page=page, figures_dir=Path(figures_dir), figures=[], simulated_devices=cpu_devices is not None)
    stamp = {
        "kind": "stamp",
        "page": page,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "x64": bool(jax.config.jax_enable_x64),
        "python": platform.python_version(),
        "kernel_pid": os.getpid(),
        "started": _utc_now(),
    }
    publish(stamp)


def prove_check(label: str, check: str, *, scaffold: str | None = None) -> None:
    """Run an exercise's check and publish how it went (as a record, never raised), for the build to verify.

    With ``scaffold``, the check must fail: the untouched scaffold runs (its errors caught, its output
    discarded) in a copy of the notebook's names, and the check runs against that copy, so neither disturbs
    the lesson. Without, the check runs against the lesson's names, after its solution, and must pass.
    """
    import contextlib
    import types

    from IPython import get_ipython

    names = get_ipython().user_ns
    function = names[check]
    outcome: dict = {}
    if scaffold is not None:
        names = dict(names)  # shallow: objects the scaffold mutates are the lesson's own
        function = types.FunctionType(function.__code__, names, function.__name__, function.__defaults__)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                exec(compile(scaffold, f"<scaffold of {label}>", "exec"), names)
            except Exception as error:
                outcome["scaffold_raised"] = f"{type(error).__name__}: {error}"
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        try:
            function()
        except AssertionError as error:
            outcome.update(passed=False, error="AssertionError", message=str(error))
        except Exception as error:
            outcome.update(passed=False, error=type(error).__name__, message=str(error))
        else:
            outcome["passed"] = True
    outcome["printed"] = printed.getvalue()
    publish({"kind": "check", "label": label, "against": "scaffold" if scaffold is not None else "solution", **outcome})


def devices() -> dict:
    """The backend and devices this run computed on (initializes JAX's backend if nothing did)."""
    import jax

    found = jax.devices()
    backend = jax.default_backend()
    return {
        "backend": backend,
        "device_kind": found[0].device_kind,
        "device_count": len(found),
        # Several CPU devices are simulated, whether the page's front matter or its own code asked for them.
        "simulated_devices": bool(_run.get("simulated_devices")) or (backend == "cpu" and len(found) > 1),
    }


def finish() -> None:
    """Publish the verdict and the devices, then print the verdict line. Reached only when every earlier cell passed."""
    if not _run:
        raise RuntimeError("jaxcourse.runtime.begin() did not run in this kernel")
    publish({"kind": "verdict", "page": _run["page"], "figures": _run["figures"], "finished": _utc_now(), **devices()})
    print(f"PASS: {_run['page']}")


def save_figure(visual_data: dict, *, title: str, name: str | None = None) -> Path:
    """Render a lesson's ``visual_data`` as deterministic SVGs in ``figures/``, for light and dark pages.

    ``visual_data`` holds ``kind`` ('bar', 'line' or 'grid'). For 'bar' and 'line': ``labels`` (bar names or
    x values), ``ylabel``, optional ``xlabel``, ``series``: a list of ``{'label': str, 'y': [float, ...]}``,
    and optional ``integer_y`` (whole-number ticks only; the default when every value is a whole number, as
    counts are). Bars carry their values as labels. For 'grid' (a 2-D array, one coloured cell per element,
    e.g. which device holds it): ``values``, a list of rows of small non-negative integers, optional
    ``cell_labels`` of the same shape, ``legend`` (a name per integer), and ``xlabel``/``ylabel``. The files
    are ``figures/<id>.svg`` and ``figures/<id>-dark.svg`` (``<id>-<name>`` when a lesson draws more than one
    figure); the page shows the one that matches the reader's theme.
    """
    if not _run:
        raise RuntimeError("save_figure() needs the course runtime; build the lesson with Sphinx")
    if name is not None and not _FIGURE_NAME.fullmatch(name):
        raise ValueError(f"save_figure(name=...) takes letters, digits and '-' only, got {name!r}")
    page = _PAGE_TO_FILE.sub("-", _run["page"])
    stem = page if name is None else f"{page}-{name}"
    light = _write(_run["figures_dir"] / f"{stem}.svg", render_svg(visual_data, title=title, theme=LIGHT))
    _write(_run["figures_dir"] / f"{stem}{DARK_SUFFIX}.svg", render_svg(visual_data, title=title, theme=DARK))
    return light


def _write(path: Path, svg: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Keep the old file (and its mtime) when nothing changed: Sphinx would rebuild the page for a new one.
    if not path.exists() or path.read_bytes() != svg:
        path.write_bytes(svg)
    _run["figures"].append(path.name)
    return path


def publish(record: dict) -> None:
    """Hand ``record`` to the build as display data that no page shows."""
    from IPython.display import publish_display_data

    publish_display_data({RECORD_MIME: record})


def _utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")

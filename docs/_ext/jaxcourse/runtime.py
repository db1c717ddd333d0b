"""Kernel-side half of the course extension.

The build injects one hidden cell at the top of every lesson that calls
:func:`begin`, and one at the bottom that calls :func:`finish`. Lessons call
:func:`save_figure` to turn their ``visual_data`` into ``figures/<id>.svg``.
This module runs inside the Jupyter kernel, so it must not import Sphinx.

What the kernel tells the build (the run stamp, the verdict, where a cell
failed) travels as display data of type :data:`RECORD_MIME`, which the site's
renderer never shows and the build reads back from the executed notebook.
"""

from __future__ import annotations

import datetime
import io
import os
import platform
import re
from pathlib import Path

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


def begin(page: str, *, figures_dir: str, environment: str, cpu_devices: int | None = None) -> None:
    """Pin JAX to the CPU (with ``cpu_devices`` simulated devices), then publish the run stamp.

    ``environment`` is a fingerprint of the installed packages and the settings
    that change results. It is unused here; it sits in the cell source so that
    the execution cache key changes whenever the environment does.

    JAX's backend is left alone unless the page asked for devices: a page (a
    ported tutorial, say) may configure JAX itself in its first cell, which it
    can only do before anything initializes the backend. The devices the run
    used are recorded by :func:`finish`.
    """
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
    """Render a lesson's ``visual_data`` as a deterministic SVG in ``figures/``.

    ``visual_data`` holds ``kind`` ('bar', 'line' or 'grid'). For 'bar' and
    'line': ``labels`` (bar names or x values), ``ylabel``, optional ``xlabel``,
    ``series``: a list of ``{'label': str, 'y': [float, ...]}``, and optional
    ``integer_y`` (True for counts: whole-number ticks only). For 'grid'
    (a 2-D array, one coloured cell per element, e.g. which device holds it):
    ``values``, a list of rows of small non-negative integers, optional
    ``cell_labels`` of the same shape, ``legend`` (a name per integer), and
    ``xlabel``/``ylabel``. The file is ``figures/<id>.svg``, or
    ``figures/<id>-<name>.svg`` when a lesson draws more than one figure.
    """
    if not _run:
        raise RuntimeError("save_figure() needs the course runtime; build the lesson with Sphinx")
    if name is not None and not _FIGURE_NAME.fullmatch(name):
        raise ValueError(f"save_figure(name=...) takes letters, digits and '-' only, got {name!r}")
    page = _PAGE_TO_FILE.sub("-", _run["page"])
    stem = page if name is None else f"{page}-{name}"
    svg = render_svg(visual_data, title=title)
    path = _run["figures_dir"] / f"{stem}.svg"
    path.parent.mkdir(parents=True, exist_ok=True)
    # Keep the old file (and its mtime) when nothing changed, so Sphinx does not
    # treat an identical figure as a new dependency and rebuild the page.
    if not path.exists() or path.read_bytes() != svg:
        path.write_bytes(svg)
    _run["figures"].append(path.name)
    return path


def render_svg(visual_data: dict, *, title: str) -> bytes:
    """The SVG bytes for ``visual_data``; equal inputs give equal bytes."""
    import matplotlib
    from matplotlib.figure import Figure

    kind = visual_data.get("kind")
    if kind not in ("bar", "line", "grid"):
        raise ValueError(f"visual_data['kind'] must be 'bar', 'line' or 'grid', got {kind!r}")
    style = {
        "svg.hashsalt": "jaxcourse",  # fixed element ids instead of random ones
        "svg.fonttype": "path",  # glyphs as paths: no dependency on reader fonts
        "font.family": "DejaVu Sans",
        "font.size": 11,
        # An opaque white canvas with dark ink stays readable on furo's dark theme.
        "figure.facecolor": "white",
        "axes.facecolor": "white",
        "savefig.facecolor": "white",
    }
    with matplotlib.rc_context(style):
        figure = Figure(figsize=(6.4, 3.6))
        axes = figure.add_subplot()
        if kind == "grid":
            _draw_grid(axes, visual_data)
        else:
            _draw_series(axes, kind, visual_data)
        axes.set_title(title)
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _draw_series(axes, kind: str, visual_data: dict) -> None:
    labels = list(visual_data["labels"])
    series = list(visual_data["series"])
    if kind == "bar":
        width = 0.8 / len(series)
        for series_index, entry in enumerate(series):
            positions = [i + (series_index - (len(series) - 1) / 2) * width for i in range(len(labels))]
            bars = axes.bar(positions, entry["y"], width=width, label=entry.get("label"))
            for bar_index, bar in enumerate(bars):
                bar.set_gid(f"bar-{series_index}-{bar_index}")
        axes.set_xticks(range(len(labels)), labels)
    else:
        for series_index, entry in enumerate(series):
            (line,) = axes.plot(labels, entry["y"], marker=entry.get("marker", ""), label=entry.get("label"))
            line.set_gid(f"line-{series_index}")
    axes.set_ylabel(visual_data["ylabel"])
    if visual_data.get("integer_y"):  # counts: no fractional ticks
        from matplotlib.ticker import MaxNLocator

        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    if visual_data.get("xlabel"):
        axes.set_xlabel(visual_data["xlabel"])
    if len(series) > 1 or kind == "line":
        axes.legend(frameon=False)
    axes.spines[["top", "right"]].set_visible(False)


# Colour-blind-safe qualitative palette (Okabe-Ito), light enough for dark labels.
_GRID_COLOURS = ["#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#999999"]


def _draw_grid(axes, visual_data: dict) -> None:
    from matplotlib.patches import Patch, Rectangle

    values = [list(row) for row in visual_data["values"]]
    labels = visual_data.get("cell_labels")
    names = list(visual_data.get("legend") or [])
    rows, columns = len(values), len(values[0])
    for row_index, row in enumerate(values):
        if len(row) != columns:
            raise ValueError("visual_data['values'] must be a rectangle")
        for column_index, value in enumerate(row):
            colour = _GRID_COLOURS[int(value) % len(_GRID_COLOURS)]
            cell = Rectangle((column_index, row_index), 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5)
            cell.set_gid(f"cell-{row_index}-{column_index}")
            axes.add_patch(cell)
            text = str(labels[row_index][column_index]) if labels else str(value)
            axes.text(column_index + 0.5, row_index + 0.5, text, ha="center", va="center", fontsize=9)
    axes.set_xlim(0, columns)
    axes.set_ylim(rows, 0)  # row 0 at the top, as arrays print
    axes.set_aspect("equal")
    axes.set_xticks([i + 0.5 for i in range(columns)], [str(i) for i in range(columns)])
    axes.set_yticks([i + 0.5 for i in range(rows)], [str(i) for i in range(rows)])
    axes.tick_params(length=0)
    axes.set_xlabel(visual_data.get("xlabel", "column"))
    axes.set_ylabel(visual_data.get("ylabel", "row"))
    for spine in axes.spines.values():
        spine.set_visible(False)
    if names:
        used = sorted({int(value) for row in values for value in row})
        handles = [Patch(facecolor=_GRID_COLOURS[i % len(_GRID_COLOURS)], label=names[i]) for i in used]
        axes.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=9)


def publish(record: dict) -> None:
    """Hand ``record`` to the build as display data that no page shows."""
    from IPython.display import publish_display_data

    publish_display_data({RECORD_MIME: record})


def _utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")

"""Kernel-side half of the course extension.

The build injects one hidden cell at the top of every lesson that calls
:func:`begin`, and one at the bottom that calls :func:`finish`. Lessons call
:func:`save_figure` to turn their ``visual_data`` into ``figures/<id>.svg``.
This module runs inside the Jupyter kernel, so it must not import Sphinx.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import platform
from pathlib import Path

_run: dict = {}


def begin(lesson_id: str, *, figures_dir: str, environment: str) -> None:
    """Pin JAX to the CPU, then publish the run stamp taken inside this kernel.

    ``environment`` is a fingerprint of the installed packages. It is unused
    here; it sits in the cell source so that the execution cache key changes
    whenever the environment does.
    """
    # Must happen before the first ``import jax`` in this process.
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jaxlib

    device = jax.devices()[0]
    _run.clear()
    _run.update(lesson=lesson_id, figures_dir=Path(figures_dir), figures=[])
    stamp = {
        "kind": "stamp",
        "lesson": lesson_id,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "backend": jax.default_backend(),
        "device_kind": device.device_kind,
        "python": platform.python_version(),
        "started": _utc_now(),
    }
    _publish(stamp)


def finish() -> None:
    """Print the verdict line. Reached only when every earlier cell passed."""
    if not _run:
        raise RuntimeError("jaxcourse.runtime.begin() did not run in this kernel")
    _publish({"kind": "verdict", "lesson": _run["lesson"], "figures": _run["figures"], "finished": _utc_now()})
    print(f"PASS: {_run['lesson']}")


def save_figure(visual_data: dict, *, title: str, name: str | None = None) -> Path:
    """Render a lesson's ``visual_data`` as a deterministic SVG in ``figures/``.

    ``visual_data`` holds ``kind`` ('bar' or 'line'), ``labels`` (bar names or
    x values), ``ylabel``, optional ``xlabel`` and ``series``: a list of
    ``{'label': str, 'y': [float, ...]}``. The file is ``figures/<id>.svg``, or
    ``figures/<id>-<name>.svg`` when a lesson draws more than one figure.
    """
    if not _run:
        raise RuntimeError("save_figure() needs the course runtime; build the lesson with Sphinx")
    stem = _run["lesson"] if name is None else f"{_run['lesson']}-{name}"
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
    if kind not in ("bar", "line"):
        raise ValueError(f"visual_data['kind'] must be 'bar' or 'line', got {kind!r}")
    labels = list(visual_data["labels"])
    series = list(visual_data["series"])
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
        axes.set_title(title)
        axes.set_ylabel(visual_data["ylabel"])
        if visual_data.get("xlabel"):
            axes.set_xlabel(visual_data["xlabel"])
        if len(series) > 1 or kind == "line":
            axes.legend(frameon=False)
        axes.spines[["top", "right"]].set_visible(False)
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _publish(record: dict) -> None:
    from IPython.display import display

    # Plain-text JSON: the Sphinx side reads it back from the hidden cell's output.
    display({"text/plain": json.dumps(record)}, raw=True)


def _utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")

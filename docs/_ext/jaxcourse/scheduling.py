"""Balance lesson execution across Sphinx's parallel reading processes.

With ``-j N`` Sphinx cuts the sorted list of outdated documents into
contiguous chunks and reads each chunk in one process, so one chunk can hold
most of the lessons (each lesson runs a kernel) while another holds only
prose pages. Before reading, the list is reordered so that every chunk gets a
similar share of the expected execution time.
"""

from __future__ import annotations

import json
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util.parallel import make_chunks

from .lessonpage import is_lesson


def runtime_hints(app: Sphinx) -> dict[str, float]:
    """Run times per lesson id from an earlier build's execution.json, if there is one."""
    path = Path(app.srcdir, app.config.course_runtime_hints)
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return {lesson_id: float(row["runtime_seconds"]) for lesson_id, row in rows.items() if row["runtime_seconds"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def expected_seconds(app: Sphinx, env, docname: str, hints: dict[str, float]) -> float:
    """This environment's last run time, else an earlier build's, else the file size as a stand-in."""
    if not is_lesson(app, docname):
        return 0.0
    record = env.get_domain("course").lessons.get(docname) or {}
    if record.get("runtime"):
        return float(record["runtime"])
    if Path(docname).name in hints:
        return hints[Path(docname).name]
    return Path(env.doc2path(docname)).stat().st_size / 10_000


def balance_chunks(app: Sphinx, env, docnames: list[str]) -> None:
    if app.parallel <= 1 or len(docnames) <= 5:  # Sphinx reads serially then
        return
    sizes = [len(chunk) for chunk in make_chunks(list(docnames), app.parallel)]
    hints = runtime_hints(app)
    cost = {docname: expected_seconds(app, env, docname, hints) for docname in docnames}
    bins: list[list[str]] = [[] for _ in sizes]
    loads = [0.0] * len(sizes)
    # Longest first, each into the least loaded chunk that still has room.
    for docname in sorted(docnames, key=lambda name: -cost[name]):
        open_bins = [i for i, size in enumerate(sizes) if len(bins[i]) < size]
        target = min(open_bins, key=lambda i: loads[i])
        bins[target].append(docname)
        loads[target] += cost[docname]
    docnames[:] = [docname for chunk in bins for docname in chunk]

"""Balance page execution across Sphinx's parallel reading processes (``-j N``).

At ``env-before-read-docs`` the documents are reordered so that each process gets a similar share of the
expected execution time. How Sphinx splits the list is not documented: :func:`privateapi.sphinx_read_chunks`.
"""

from __future__ import annotations

import json
from pathlib import Path

from sphinx.application import Sphinx

from ..privateapi import sphinx_read_chunks
from ..source.pagesource import executes, is_lesson


def runtime_hints(app: Sphinx) -> dict[str, float]:
    """Run times per docname from an earlier build's execution.json, if there is one."""
    path = Path(app.srcdir, app.config.course_runtime_hints)
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return {row["docname"]: float(row["runtime_seconds"]) for row in rows.values() if row["runtime_seconds"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def expected_seconds(app: Sphinx, env, docname: str, hints: dict[str, float]) -> float:
    """An executed page's last run time in this environment, else an earlier build's, else its size as
    a stand-in; a page that executes nothing costs nothing."""
    record = env.get_domain("course").pages.get(docname)
    if record is not None and record.runtime:
        return float(record.runtime)
    if docname in hints:
        return hints[docname]
    path = Path(env.doc2path(docname))
    if not is_lesson(app, docname) and not executes(path):
        return 0.0
    return path.stat().st_size / 10_000


def plan(docnames: list[str], nproc: int, cost: dict[str, float]) -> list[str]:
    """``docnames`` reordered so that Sphinx's chunks finish together.

    The first ``nproc`` chunks start at once; each later one starts when a process is free, so the cheapest
    documents fill those later chunks, and the rest go, longest first, to the least loaded first chunk with room.
    """
    sizes = [len(chunk) for chunk in sphinx_read_chunks(docnames, nproc)]
    bins: list[list[str]] = [[] for _ in sizes]
    loads = [0.0] * len(sizes)
    cheapest_first = sorted(docnames, key=lambda name: (cost.get(name, 0.0), name))
    late = range(nproc, len(sizes))
    for index in late:
        bins[index], cheapest_first = cheapest_first[: sizes[index]], cheapest_first[sizes[index] :]
    for docname in sorted(cheapest_first, key=lambda name: (-cost.get(name, 0.0), name)):
        open_bins = [i for i in range(min(nproc, len(sizes))) if len(bins[i]) < sizes[i]]
        target = min(open_bins, key=lambda i: loads[i])
        bins[target].append(docname)
        loads[target] += cost.get(docname, 0.0)
    return [docname for chunk in bins for docname in chunk]


def balance_chunks(app: Sphinx, env, docnames: list[str]) -> None:
    if app.parallel <= 1 or not app.is_parallel_allowed("read"):
        return  # Sphinx reads serially: the order does not matter
    hints = runtime_hints(app)
    cost = {docname: expected_seconds(app, env, docname, hints) for docname in docnames}
    docnames[:] = plan(docnames, app.parallel, cost)

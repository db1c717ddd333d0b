"""One console line per executed page as it finishes (``course_progress``): ``[ 3/31] transforms-04: fresh, 4.2 s``.

Sphinx reads documents in forked processes with ``-j`` and holds back their log records until a process finishes
its whole share, so the lines go straight to standard output, counted by a counter shared across the forks.
"""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

from sphinx.application import Sphinx

from ..source.pagesource import executes, is_lesson, left_out

_counter: dict[str, object] = {}


def executed_documents(app: Sphinx, env, docnames: list[str]) -> list[str]:
    """The documents of ``docnames`` that this build executes (or takes from its shards)."""
    return [
        docname
        for docname in docnames
        if not left_out(app, docname) and (is_lesson(app, docname) or executes(Path(env.doc2path(docname))))
    ]


def start_counting(app: Sphinx, env, docnames: list[str]) -> None:
    """At env-before-read-docs, in the main process: how many pages this build will execute."""
    if not app.config.course_progress:
        return
    _counter["total"] = len(executed_documents(app, env, docnames))
    _counter["done"] = multiprocessing.Value("i", 0)


def page_finished(app: Sphinx, page_id: str, status: str, runtime: float | None) -> None:
    """Print this page's line: called once per executed page, at doctree-read."""
    done = _counter.get("done")
    if not app.config.course_progress or done is None:
        return
    with done.get_lock():
        done.value += 1
        count = done.value
        total = _counter["total"]
        timing = f", {runtime:.1f} s" if runtime is not None else ""
        print(f"[{count:>{len(str(total))}}/{total}] {page_id}: {status}{timing}", file=sys.stdout, flush=True)

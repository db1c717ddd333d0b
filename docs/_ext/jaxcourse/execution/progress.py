"""One console line per executed page as it finishes (``course_progress``, set by ``nox -s docs``).

``[ 3/31] transforms-04: fresh, 4.2 s``: k of n, the page, whether this build's
kernel ran it or its run came from the cache, and how long its cells ran. A
build that executes for minutes then shows where it is, page by page, instead
of nothing until the end. Failures are not repeated here: each is reported
once, located, by Sphinx's own warning stream.

Sphinx reads documents in forked processes with ``-j``, and holds back their
log records until a process finishes its whole share; so the lines go straight
to standard output, and k comes from a counter shared across the forks,
created in the main process before reading starts.
"""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

from sphinx.application import Sphinx

from ..source.pagesource import executes, is_lesson

_counter: dict[str, object] = {}


def executed_documents(app: Sphinx, env, docnames: list[str]) -> list[str]:
    """The documents of ``docnames`` that this build executes (or takes from its shards)."""
    only = set(app.config.course_only_pages)
    executed = []
    for docname in docnames:
        if only and docname not in only:
            continue
        if is_lesson(app, docname) or executes(Path(env.doc2path(docname))):
            executed.append(docname)
    return executed


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

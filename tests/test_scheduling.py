"""Parallel reading gets lessons spread by expected run time, not by file name.

The plan relies on how Sphinx splits documents among reading processes, which
Sphinx does not document; test_sphinx_reads_the_chunks_we_predict builds a
site in parallel and checks, from the process each lesson's kernel was started
by, that Sphinx read exactly the groups the plan predicted.
"""

from __future__ import annotations

import json
import re

from conftest import build, make_site
from jaxcourse.execution.scheduling import plan
from jaxcourse.privateapi import sphinx_read_chunks
from tiny import code_cell, lesson

# In name order the two quick lessons share a chunk with the prose pages: 2 s against 17 s.
RUNTIMES = {"lesson-a": 1.0, "lesson-b": 1.0, "lesson-c": 6.0, "lesson-d": 5.0, "lesson-e": 3.0, "lesson-f": 3.0}
PAGES = ["docs/a", "docs/b"]


def chunk_loads(docnames: list[str]) -> list[float]:
    return [sum(RUNTIMES.get(doc.split("/")[1], 0) for doc in chunk) for chunk in sphinx_read_chunks(docnames, 2)]


def test_chunks_carry_similar_expected_time():
    docnames = sorted([*PAGES, *(f"lessons/{name}" for name in RUNTIMES)])
    cost = {f"lessons/{name}": seconds for name, seconds in RUNTIMES.items()}
    ordered = plan(docnames, 2, cost)
    assert sorted(ordered) == docnames
    balanced, naive = chunk_loads(ordered), chunk_loads(docnames)
    assert max(balanced) - min(balanced) <= 1.0, balanced
    assert max(naive) - min(naive) > max(balanced) - min(balanced)


def test_later_chunks_get_the_cheap_pages_when_there_are_more_chunks_than_processes():
    """22 documents make chunks of 10, 10 and 2 for 2 processes: the third starts only when one of
    the first two is done, so it must hold prose pages, and the lessons split evenly over the first two."""
    lessons = {f"lessons/lesson-{i:02d}": float(1 + i % 5) for i in range(16)}
    docnames = sorted([*(f"docs/page-{i}" for i in range(6)), *lessons])
    chunks = sphinx_read_chunks(plan(docnames, 2, lessons), 2)
    assert [len(chunk) for chunk in chunks] == [10, 10, 2]
    assert all(doc.startswith("docs/") for doc in chunks[2])
    first, second = (sum(lessons.get(doc, 0.0) for doc in chunk) for chunk in chunks[:2])
    assert abs(first - second) <= 1.0, (first, second)


def test_sphinx_reads_the_chunks_we_predict(tmp_path):
    """Each lesson prints the process that started its kernel: Sphinx's reading process."""
    body = code_cell("import os\nprint('reader:', os.getppid())")
    srcdir = make_site(tmp_path, lessons={name: lesson(name, body) for name in RUNTIMES})
    hints = srcdir / "hints.json"
    rows = {name: {"docname": f"lessons/{name}", "runtime_seconds": s} for name, s in RUNTIMES.items()}
    hints.write_text(json.dumps(rows), encoding="utf-8")
    result = build(srcdir, "-j", "2", "-D", "course_runtime_hints=hints.json")
    assert result.returncode == 0, result.output
    reader = {
        f"lessons/{name}": re.search(r"reader: (\d+)", result.html(f"lessons/{name}.html").get_text())[1]
        for name in RUNTIMES
    }
    docnames = sorted([*(str(p.relative_to(srcdir).with_suffix("")) for p in (srcdir / "docs").glob("*.md")), *reader])
    cost = {docname: RUNTIMES[docname.split("/")[1]] for docname in reader}
    predicted = [[doc for doc in chunk if doc in reader] for chunk in sphinx_read_chunks(plan(docnames, 2, cost), 2)]
    predicted = [chunk for chunk in predicted if chunk]
    assert len(predicted) > 1, predicted
    for chunk in predicted:
        assert len({reader[doc] for doc in chunk}) == 1, (chunk, reader)  # one process read the whole chunk
    assert len({reader[chunk[0]] for chunk in predicted}) == len(predicted), (predicted, reader)

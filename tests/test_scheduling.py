"""Parallel reading gets lessons spread by expected run time, not by file name."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

from conftest import ROOT
from sphinx.util.parallel import make_chunks

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from jaxcourse.scheduling import balance_chunks  # noqa: E402

# In name order the two quick lessons share a chunk with the prose pages: 2 s against 17 s.
RUNTIMES = {"lesson-a": 1.0, "lesson-b": 1.0, "lesson-c": 6.0, "lesson-d": 5.0, "lesson-e": 3.0, "lesson-f": 3.0}


def fake_sphinx(tmp_path, parallel=2):
    (tmp_path / "lessons").mkdir()
    for name in RUNTIMES:
        (tmp_path / "lessons" / f"{name}.md").write_text("x" * 100, encoding="utf-8")
    hints = {name: {"runtime_seconds": seconds} for name, seconds in RUNTIMES.items()}
    (tmp_path / "execution.json").write_text(json.dumps(hints), encoding="utf-8")
    config = SimpleNamespace(course_lessons_dir="lessons", course_runtime_hints="execution.json")
    app = SimpleNamespace(parallel=parallel, config=config, srcdir=tmp_path)
    domain = SimpleNamespace(lessons={})
    env = SimpleNamespace(get_domain=lambda name: domain, doc2path=lambda docname: tmp_path / f"{docname}.md")
    return app, env


def test_chunks_carry_similar_expected_time(tmp_path):
    app, env = fake_sphinx(tmp_path)
    docnames = ["docs/a", "docs/b", *(f"lessons/{name}" for name in sorted(RUNTIMES))]
    balance_chunks(app, env, docnames)
    assert sorted(docnames) == sorted(["docs/a", "docs/b", *(f"lessons/{name}" for name in RUNTIMES)])
    loads = [sum(RUNTIMES.get(doc.split("/")[1], 0) for doc in chunk) for chunk in make_chunks(docnames, 2)]
    assert max(loads) - min(loads) <= 1.0, loads
    by_name = sorted(docnames)
    naive = [sum(RUNTIMES.get(doc.split("/")[1], 0) for doc in chunk) for chunk in make_chunks(by_name, 2)]
    assert max(naive) - min(naive) > max(loads) - min(loads)


def test_serial_reading_is_left_alone(tmp_path):
    app, env = fake_sphinx(tmp_path, parallel=1)
    docnames = [f"lessons/{name}" for name in sorted(RUNTIMES)]
    before = list(docnames)
    balance_chunks(app, env, docnames)
    assert docnames == before

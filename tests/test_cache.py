"""Incremental builds (nox -s serve, nox -s lesson) re-execute only what changed.

One tiny site, rebuilt in cache mode after each kind of edit. A lesson whose
run stamp (taken inside its kernel) is newer than the build's start was
executed by that build; one served from the cache keeps its older stamp.
"""

from __future__ import annotations

import datetime
import json

import pytest
from conftest import build, make_site
from tiny import code_cell, lesson

CACHE = ("-D", "nb_execution_mode=cache")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    body = "Some prose.\n\n" + code_cell("value = 6 * 7\nassert value == 42\nprint('value:', value)")
    srcdir = make_site(tmp_path_factory.mktemp("cache"), lessons={"cached-lesson": lesson("cached-lesson", body)})
    (srcdir / "requirements.txt").write_text("jax==0.0.0\n", encoding="utf-8")
    return srcdir


def rebuild(srcdir):
    """Build in cache mode; return how many lessons this build executed."""
    result = build(srcdir, *CACHE)
    assert result.returncode == 0, result.output
    return kernels_started(result)


def kernels_started(result):
    runs = json.loads((result.outdir / "execution.json").read_text(encoding="utf-8"))
    started = [datetime.datetime.fromisoformat(run["stamp"]["started"]).timestamp() for run in runs.values()]
    return sum(moment >= result.started for moment in started)


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


# The steps share one site and run in file order.
def test_first_build_executes_the_lesson(site):
    assert rebuild(site) == 1


def test_unchanged_rebuild_starts_no_kernel(site):
    assert rebuild(site) == 0


def test_prose_only_edit_starts_no_kernel(site):
    edit(site / "lessons" / "cached-lesson.md", "Some prose.", "Some edited prose.")
    assert rebuild(site) == 0
    page = (site.parent / "_build" / "html" / "lessons" / "cached-lesson.html").read_text(encoding="utf-8")
    assert "Some edited prose." in page
    assert "value: 42" in page  # the recorded output, served from the cache


def test_code_edit_re_executes_the_lesson(site):
    edit(site / "lessons" / "cached-lesson.md", "print('value:', value)", "print('the value:', value)")
    assert rebuild(site) == 1


def test_environment_change_re_executes_the_lesson(site):
    edit(site / "requirements.txt", "jax==0.0.0", "jax==0.0.1")
    assert rebuild(site) == 1

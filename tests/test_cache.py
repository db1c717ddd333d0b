"""Incremental builds (nox -s serve, nox -s lesson) re-execute only what changed.

One tiny site (a lesson and a notebook page under docs/), rebuilt in cache mode
after each kind of edit. A page whose run stamp (taken inside its kernel) is
newer than the build's start was executed by that build; one served from the
cache keeps its older stamp. The notebook page's cache key holds the
environment fingerprint just as the lesson's does.
"""

from __future__ import annotations

import datetime
import json

import pytest
from conftest import build, make_site
from tiny import code_cell, lesson, notebook_page

CACHE = ("-D", "nb_execution_mode=cache")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    body = "Some prose.\n\n" + code_cell("value = 6 * 7\nassert value == 42\nprint('value:', value)")
    srcdir = make_site(tmp_path_factory.mktemp("cache"), lessons={"cached-lesson": lesson("cached-lesson", body)})
    (srcdir / "requirements.txt").write_text("jax==0.0.0\n", encoding="utf-8")
    notebook = notebook_page("A cached notebook page", code_cell("print('notebook page')"))
    (srcdir / "docs" / "cached-notebook.md").write_text(notebook, encoding="utf-8")
    return srcdir


def rebuild(srcdir, **environment):
    """Build in cache mode; return how many pages this build executed."""
    result = build(srcdir, *CACHE, environment=environment)
    assert result.returncode == 0, result.output
    return kernels_started(result)


def page(srcdir, outdir=None):
    outdir = outdir or srcdir.parent / "_build" / "html"
    return (outdir / "lessons" / "cached-lesson.html").read_text(encoding="utf-8")


def stamp_and_recording(srcdir, outdir=None):
    from bs4 import BeautifulSoup

    outdir = outdir or srcdir.parent / "_build" / "html"
    stamp = BeautifulSoup(page(srcdir, outdir), "html.parser").select_one(".run-stamp").get_text(" ", strip=True)
    report = BeautifulSoup((outdir / "docs" / "execution-report.html").read_text(encoding="utf-8"), "html.parser")
    return stamp, report.select("table.execution-report tbody tr td")[-1].get_text(strip=True)


def kernels_started(result):
    runs = json.loads((result.outdir / "execution.json").read_text(encoding="utf-8"))
    assert [run["fresh"] for run in runs.values()].count(True) == sum(
        datetime.datetime.fromisoformat(run["stamp"]["started"]).timestamp() >= result.started for run in runs.values()
    )
    started = [datetime.datetime.fromisoformat(run["stamp"]["started"]).timestamp() for run in runs.values()]
    return sum(moment >= result.started for moment in started)


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


# The steps share one site and run in file order.
def test_first_build_executes_the_lesson_and_the_notebook_page(site):
    assert rebuild(site) == 2
    stamp, recording = stamp_and_recording(site)
    assert stamp.startswith("Executed by this build on CPU") and recording == "fresh"


def test_unchanged_rebuild_starts_no_kernel(site):
    assert rebuild(site) == 0


def test_the_report_says_an_unchanged_lesson_was_reused(site):
    # The incremental build did not read the lesson again, so its page is the first build's;
    # the report, filled by every build, says where this build's recording came from.
    _, recording = stamp_and_recording(site)
    assert recording.startswith("reused: recorded "), recording
    report = (site.parent / "_build" / "html" / "docs" / "execution-report.html").read_text(encoding="utf-8")
    assert "docs/cached-notebook" in report


def test_a_reused_recording_says_so_and_why(site):
    """As nox -s lesson builds: a fresh output folder, the same execution cache."""
    outdir = site.parent / "_build" / "again"
    result = build(site, *CACHE, outdir=outdir)
    assert result.returncode == 0, result.output
    assert kernels_started(result) == 0
    stamp, recording = stamp_and_recording(site, outdir)
    assert stamp.startswith("Recorded on CPU"), stamp
    assert "reused by this build from the execution cache: its code and the build environment are unchanged" in stamp
    assert "Executed by this build" not in page(site, outdir)
    assert recording.startswith("reused: recorded ")


def test_prose_only_edit_starts_no_kernel(site):
    edit(site / "lessons" / "cached-lesson.md", "Some prose.", "Some edited prose.")
    assert rebuild(site) == 0
    page = (site.parent / "_build" / "html" / "lessons" / "cached-lesson.html").read_text(encoding="utf-8")
    assert "Some edited prose." in page
    assert "value: 42" in page  # the recorded output, served from the cache


def test_code_edit_re_executes_the_lesson(site):
    edit(site / "lessons" / "cached-lesson.md", "print('value:', value)", "print('the value:', value)")
    assert rebuild(site) == 1


def test_environment_change_re_executes_the_lesson_and_the_notebook_page(site):
    edit(site / "requirements.txt", "jax==0.0.0", "jax==0.0.1")
    assert rebuild(site) == 2


def test_a_setting_that_changes_numerics_re_executes_every_page(site):
    assert rebuild(site, JAX_DEFAULT_MATMUL_PRECISION="highest") == 2
    assert rebuild(site, JAX_DEFAULT_MATMUL_PRECISION="highest") == 0


def test_a_new_device_count_re_executes_the_lesson(site):
    edit(site / "lessons" / "cached-lesson.md", "  device: CPU\n", "  device: CPU\n  cpu_devices: 2\n")
    assert rebuild(site) == 1
    assert "2 simulated CPU devices" in page(site)


def test_the_kernel_spec_is_part_of_the_fingerprint(tmp_path, monkeypatch):
    from jaxcourse.runtime import kernel
    from jaxcourse.source import fingerprint

    before = fingerprint.environment_fingerprint([])
    spec = tmp_path / "jaxcourse"
    spec.mkdir()
    (spec / "kernel.json").write_text((kernel.SPEC_DIR / "kernel.json").read_text() + "\n", encoding="utf-8")
    monkeypatch.setattr(kernel, "SPEC_DIR", spec)
    assert fingerprint.environment_fingerprint([]) != before

"""A failed build never replaces the last good site (jaxcourse.sitebuild, used by nox -s docs)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT, make_site
from tiny import code_cell, lesson, line_of


def publish(srcdir, site):
    return subprocess.run(
        [sys.executable, "-m", "jaxcourse.sitebuild", str(site)],
        cwd=srcdir,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "docs" / "_ext"), "PATH": "/usr/bin:/bin"},
    )


def test_failed_build_keeps_the_last_good_site(tmp_path):
    good = lesson("kept-lesson", code_cell("print('first version')"))
    srcdir = make_site(tmp_path, lessons={"kept-lesson": good})
    site = tmp_path / "_build" / "html"

    first = publish(srcdir, site)
    assert first.returncode == 0, first.stdout + first.stderr
    page = site / "lessons" / "kept-lesson.html"
    published = page.read_text(encoding="utf-8")
    assert "first version" in published

    bad = lesson("kept-lesson", code_cell("print('second version')\nassert False, 'broken on purpose'"))
    (srcdir / "lessons" / "kept-lesson.md").write_text(bad, encoding="utf-8")
    second = publish(srcdir, site)
    assert second.returncode != 0
    assert page.read_text(encoding="utf-8") == published  # the old page, untouched
    assert not (tmp_path / "_build" / "html.old").exists()
    summary = second.stderr[second.stderr.index("BUILD FAILED") :]
    assert f"the last good site in {site} was kept" in summary
    located = f"kept-lesson.md:{line_of(bad, 'assert False')}: ERROR: cell failed: AssertionError: broken on purpose"
    assert located in summary
    assert (tmp_path / "_build" / "html.new" / "lessons" / "kept-lesson.html").exists()  # the failed build, to inspect

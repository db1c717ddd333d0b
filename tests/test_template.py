"""A lesson copied from lessons/_template.md passes the checker and builds as it is.

Its id appears in the file name, the front matter and the exercise labels;
renaming it is the one edit a contributor must make before filling the TODOs.
Nothing else changes: not conf.py, not the home page, not any list.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT, build, make_site

NEW_ID = "my-new-lesson"
TEMPLATE_ID = "new-lesson-00"


@pytest.fixture(scope="module")
def new_lesson_site(tmp_path_factory):
    text = (ROOT / "lessons" / "_template.md").read_text(encoding="utf-8").replace(TEMPLATE_ID, NEW_ID)
    srcdir = make_site(tmp_path_factory.mktemp("template"), lessons={NEW_ID: text})
    return srcdir, build(srcdir)


def test_template_is_not_a_page_of_the_site(course_site):
    assert not (course_site.outdir / "lessons" / "_template.html").exists()


def test_copied_template_passes_the_checker(new_lesson_site):
    srcdir, _ = new_lesson_site
    result = subprocess.run(
        [sys.executable, "-m", "jaxcourse.checker"],
        cwd=srcdir,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "docs" / "_ext")},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_copied_template_builds(new_lesson_site):
    _, result = new_lesson_site
    assert result.returncode == 0, result.output


def test_new_lesson_appears_on_the_home_page_and_in_the_report(new_lesson_site):
    _, result = new_lesson_site
    home = result.html("docs/index.html")
    assert [a["href"] for a in home.select(".lesson-list a")] == [f"../lessons/{NEW_ID}.html"]
    report = result.html("docs/execution-report.html")
    assert [td.get_text(strip=True) for td in report.select("table.execution-report tbody tr td:first-child")] == [
        NEW_ID
    ]
    page = result.html(f"lessons/{NEW_ID}.html")
    assert page.select_one(".recorded-transcript pre").get_text().strip().endswith(f"PASS: {NEW_ID}")

"""A lesson started with `nox -s new -- ID "Title"` passes the checker and builds as it is.

The command fills the template's id, title, exercise labels and figure name;
nothing else changes: not conf.py, not the home page, not any list.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT, build, make_site

NEW_ID = "my-lesson-01"
NEW_TITLE = "Compose two transformations: grad of vmap"  # a colon-space, so YAML needs quotes


def new(srcdir, *arguments):
    return subprocess.run(
        [sys.executable, "-m", "jaxcourse.tools.newlesson", *arguments], cwd=srcdir, capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def new_lesson_site(tmp_path_factory):
    srcdir = make_site(tmp_path_factory.mktemp("template"))
    (srcdir / "lessons" / "_template.md").write_bytes((ROOT / "lessons" / "_template.md").read_bytes())
    created = new(srcdir, NEW_ID, NEW_TITLE)
    assert created.returncode == 0, created.stderr
    return srcdir, build(srcdir)


def test_new_fills_id_title_labels_and_figure(new_lesson_site):
    srcdir, _ = new_lesson_site
    text = (srcdir / "lessons" / f"{NEW_ID}.md").read_text(encoding="utf-8")
    assert "new-lesson-00" not in text and "TODO lesson title" not in text
    assert f"  id: {NEW_ID}" in text and f"\n# {NEW_TITLE}\n" in text
    for label in ("foundation", "practice", "challenge"):
        assert f":label: {NEW_ID}-{label}" in text and f"{{solution-start}} {NEW_ID}-{label}" in text
    assert f"../figures/{NEW_ID}.svg" in text and f":name: {NEW_ID}-figure" in text


def test_new_lesson_passes_the_checker(new_lesson_site):
    srcdir, _ = new_lesson_site
    result = subprocess.run(
        [sys.executable, "-m", "jaxcourse.tools.checker"], cwd=srcdir, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_new_lesson_builds(new_lesson_site):
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
    assert page.select_one("h1").get_text(strip=True).rstrip("#¶") == NEW_TITLE
    assert page.select_one(".recorded-transcript pre").get_text().strip().endswith(f"PASS: {NEW_ID}")


def test_the_templates_tagged_cell_shows_its_error(new_lesson_site):
    _, result = new_lesson_site
    errors = result.html(f"lessons/{NEW_ID}.html").select("div.cell_output .error-summary pre")
    assert [error.get_text().split(":")[0] for error in errors] == ["TypeError"]


@pytest.mark.parametrize(
    ("lesson_id", "message"),
    [
        ("my-lesson-01", "already exists"),
        ("My_Lesson", "must look like <slug>-NN"),
        ("lesson-1", "must look like <slug>-NN"),
        ("lesson", "must look like <slug>-NN"),
    ],
)
def test_new_refuses_a_taken_or_malformed_id(new_lesson_site, lesson_id, message):
    srcdir, _ = new_lesson_site
    result = new(srcdir, lesson_id, "Some title")
    assert result.returncode == 1
    assert message in result.stderr


@pytest.mark.parametrize("slug", ["foundations", "transforms", "scale", "practice"])
def test_new_takes_its_place_from_the_lessons_that_share_its_slug(tmp_path, slug):
    """foundations-06 joins Phase 01 after the last foundations lesson, with its phase title."""
    from jaxcourse.source import catalogue, frontmatter

    siblings = [lesson for lesson in catalogue.lessons(ROOT) if lesson.id.rsplit("-", 1)[0] == slug]
    assert siblings
    (tmp_path / "lessons").mkdir()
    for path in [ROOT / "lessons" / "_template.md"] + [lesson.path for lesson in siblings]:
        (tmp_path / "lessons" / path.name).write_bytes(path.read_bytes())
    number = max(int(lesson.id.rsplit("-", 1)[1]) for lesson in siblings) + 1
    new_id = f"{slug}-{number:02d}"
    created = new(tmp_path, new_id, "A new lesson")
    assert created.returncode == 0, created.stderr
    front, problems = frontmatter.read_lesson(tmp_path / "lessons" / f"{new_id}.md")
    assert problems == []
    assert front.lesson["phase"] == siblings[0].meta["phase"]
    assert front.lesson["phase_title"] == siblings[0].meta["phase_title"]
    assert front.lesson["order"] == max(lesson.meta["order"] for lesson in siblings) + 1


def test_a_new_slug_opens_the_next_phase(tmp_path):
    from jaxcourse.source import catalogue, frontmatter

    (tmp_path / "lessons").mkdir()
    for path in [ROOT / "lessons" / "_template.md"] + catalogue.lesson_files(ROOT):
        (tmp_path / "lessons" / path.name).write_bytes(path.read_bytes())
    assert new(tmp_path, "serving-01", "Serve a model").returncode == 0
    front, _ = frontmatter.read_lesson(tmp_path / "lessons" / "serving-01.md")
    assert front.lesson["phase"] == max(lesson.meta["phase"] for lesson in catalogue.lessons(ROOT)) + 1
    assert front.lesson["order"] == 1

"""Misconfigured conf.py settings fail at once, with a suggestion."""

from __future__ import annotations

from conftest import build, make_site


def configured_site(tmp_path, extra):
    srcdir = make_site(tmp_path)
    with open(srcdir / "conf.py", "a", encoding="utf-8") as conf:
        conf.write(extra)
    return build(srcdir)


def test_misspelt_setting_is_refused_with_a_suggestion(tmp_path):
    result = configured_site(tmp_path, '\ncourse_lesson_dir = "lessons"\n')
    assert result.returncode != 0
    assert "unknown setting 'course_lesson_dir' in conf.py; did you mean 'course_lessons_dir'?" in result.output


def test_missing_lessons_folder_is_refused_with_a_suggestion(tmp_path):
    result = configured_site(tmp_path, '\ncourse_lessons_dir = "lesson"\n')
    assert result.returncode != 0
    assert "course_lessons_dir 'lesson' is not a folder" in result.output
    assert "did you mean 'lessons'?" in result.output

"""The change report: what a rebuild changed in the recordings since the site it replaces.

One tiny site, published again and again with `python -m jaxcourse.sitebuild`
(what `nox -s docs` runs) after each kind of edit; each build compares itself
with the site it replaces. The steps share the site and run in file order.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from bs4 import BeautifulSoup
from conftest import make_site
from tiny import code_cell, lesson, line_of

PRINTS = "value = 6 * 7\nprint('value:', value)"
TIMES = "import time\n\nstart = time.perf_counter()\nprint('seconds:', time.perf_counter() - start)"
FIGURE = (
    "```{code-cell} ipython3\n:tags: [remove-cell]\n\nfrom jaxcourse.runtime import save_figure\n\n"
    "data = {'kind': 'bar', 'labels': ['a'], 'ylabel': 'y', 'series': [{'label': 's', 'y': [HEIGHT]}]}\n"
    "save_figure(data, title='T')\n"
    "```\n\n"
    "```{figure} ../figures/watched.svg\n:alt: One bar.\n\nOne bar.\n```\n"
)


BODY = (
    "Prose.\n\n"
    + code_cell(PRINTS)
    + "\n"
    + "```{code-cell} ipython3\n:tags: [varies]\n\n"
    + TIMES
    + "\n```\n\n"
    + FIGURE.replace("HEIGHT", "1.0")
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("changes")
    return make_site(root, lessons={"watched": lesson("watched", BODY)})


def publish(srcdir):
    """Publish the site with the comparison nox -s docs makes; return the report."""
    site = srcdir.parent / "_build" / "html"
    result = subprocess.run(
        [sys.executable, "-m", "jaxcourse.sitebuild", str(site), "-D", "nb_execution_mode=force"],
        cwd=srcdir,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((srcdir.parent / "_build" / "changes.json").read_text(encoding="utf-8"))
    page = BeautifulSoup((site / "docs" / "changes.html").read_text(encoding="utf-8"), "html.parser")
    assert f"Change report: {report['summary']}" in result.stdout  # the console summary
    assert page.select_one(".change-summary").get_text() == report["summary"]  # the site page
    return report, page


def edit(srcdir, old, new):
    path = srcdir / "lessons" / "watched.md"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    return text.replace(old, new)


def test_a_first_build_says_there_is_nothing_to_compare(site):
    report, _ = publish(site)
    assert report["compared_with"] is None
    assert report["summary"].startswith("First build")


def test_a_timing_only_change_is_not_reported_as_a_change(site):
    """An unchanged rebuild: only the timing differs between the two runs. Expected, counted, no change."""
    report, page = publish(site)
    assert report["compared_with"] is not None
    assert report["lessons"]["watched"]["status"] == "unchanged"
    assert report["lessons"]["watched"]["varying"] == 1
    assert report["lessons"]["watched"]["outputs"] == []
    assert report["summary"].startswith("1 lesson unchanged")
    assert "seconds:" not in json.dumps(report)  # counted, never diffed
    assert not page.select(".lesson-changes")


@pytest.fixture(scope="module")
def edited(site):
    """A printed value and the figure's data both change; the timing changes as always."""
    text = edit(site, "value = 6 * 7", "value = 6 * 8")
    text = edit(site, "'y': [1.0]", "'y': [2.0]")
    return text, *publish(site)


def test_a_changed_printed_value_is_reported_at_its_line_with_the_diff(site, edited):
    text, report, page = edited
    watched = report["lessons"]["watched"]
    assert watched["status"] == "changed"
    assert len(watched["outputs"]) == 1  # the print, not the timing
    change = watched["outputs"][0]
    assert change["line"] == line_of(text, "value = 6 * 8") - 1  # the cell's opening fence
    assert "-value: 42" in change["diff"] and "+value: 48" in change["diff"]
    assert f"this build: lessons/watched.md:{change['line']}" in change["diff"]
    assert watched["varying"] == 1
    assert report["summary"] == (
        f"0 lessons unchanged; watched changed 1 output (line {change['line']}) and changed figure watched.svg; "
        "1 varying output (timings) differs, as expected"
    )
    assert "+value: 48" in page.select_one(".lesson-changes pre").get_text()
    markdown = (site.parent / "_build" / "changes.md").read_text(encoding="utf-8")
    assert "+value: 48" in markdown


def test_a_changed_figure_is_reported(edited):
    _, report, page = edited
    assert report["lessons"]["watched"]["figures"] == ["watched.svg"]
    assert "changed figure watched.svg" in page.select_one(".lesson-changes").get_text()


def test_a_new_lesson_is_reported_as_added(site, edited):
    (site / "lessons" / "newcomer.md").write_text(lesson("newcomer", code_cell("print('hi')")), encoding="utf-8")
    report, page = publish(site)
    assert report["lessons"]["newcomer"]["status"] == "added"
    assert "newcomer added" in report["summary"]
    assert "newcomer" in page.select_one(".lesson-changes").get_text()


def test_compare_to_takes_another_site(site, tmp_path):
    other = tmp_path / "published"
    other.mkdir()
    recordings = json.loads((site.parent / "_build" / "html" / "recordings.json").read_text(encoding="utf-8"))
    recordings["lessons"]["watched"]["stamp"]["jax"] = "0.0.1"  # as if published with an older JAX
    (other / "recordings.json").write_text(json.dumps(recordings), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "jaxcourse.sitebuild", str(site.parent / "_build" / "html"), "--compare-to", str(other)],
        cwd=site,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((site.parent / "_build" / "changes.json").read_text(encoding="utf-8"))
    assert report["compared_with"] == str(other)
    assert report["lessons"]["watched"]["stamp"]["jax"][0] == "0.0.1"
    assert "watched ran under jax" in report["summary"]


def test_a_stamp_change_shared_by_many_lessons_is_summarized_once():
    """A JAX upgrade moves every stamp; the summary names it once and still lists each changed output."""
    from jaxcourse.changes import ChangeReport, LessonChanges, OutputChange

    upgrade = {"jax": ["0.10.2", "0.10.1"], "jaxlib": ["0.10.2", "0.10.1"]}

    def moved(name: str, *lines: int) -> LessonChanges:
        outputs = [OutputChange(line=line, old_line=line, diff="") for line in lines]
        return LessonChanges(name, f"lessons/{name}.md", "changed", stamp=dict(upgrade), outputs=outputs)

    lessons = [moved("a-01"), moved("a-02", 88, 140), moved("a-03")]
    lessons.append(LessonChanges("b-01", "lessons/b-01.md", "changed", stamp={"python": ["3.11.7", "3.12.1"]}))
    lessons.append(LessonChanges("b-02", "lessons/b-02.md", "unchanged"))
    report = ChangeReport(compared_with="_build/html", lessons=lessons)
    assert report.summary() == (
        "3 lessons ran under jax 0.10.1 (was 0.10.2), jaxlib 0.10.1 (was 0.10.2); "
        "3 lessons with unchanged outputs and figures; "
        "a-02 changed 2 outputs (lines 88, 140); "
        "b-01 ran under python 3.12.1 (was 3.11.7)"
    )

"""The change report: what a rebuild changed in the recordings since the site it replaces.

One tiny site (a lesson and a notebook page under docs/), published again and
again with `python -m jaxcourse.tools.sitebuild` (what `nox -s docs` runs) after each
kind of edit; each build compares itself with the site it replaces. The steps
share the site and run in file order.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from bs4 import BeautifulSoup
from conftest import make_site
from tiny import code_cell, lesson, line_of, notebook_page

PRINTS = "value = 6 * 7\nprint('value:', value)"
DISPLAYS = "answer = 40\nanswer + 2"  # shown as the cell's value (execute_result), never printed
# Only the timing varies; the line printed beside it is compared like any other.
TIMES = (
    "import time\n\nstart = time.perf_counter()\nprint('seconds:', time.perf_counter() - start)\nprint('steady line')"
)
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
    + code_cell(DISPLAYS)
    + "\n"
    + "```{code-cell} ipython3\n:varies: '(?<=seconds: ).*'\n\n"
    + TIMES
    + "\n```\n\n"
    + FIGURE.replace("HEIGHT", "1.0")
)
NOTEBOOK = notebook_page("A watched notebook page", code_cell("print('from docs:', 1)"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("changes")
    srcdir = make_site(root, lessons={"watched": lesson("watched", BODY)})
    (srcdir / "docs" / "notebook.md").write_text(NOTEBOOK, encoding="utf-8")
    return srcdir


def publish(srcdir):
    """Publish the site with the comparison nox -s docs makes; return the report."""
    site = srcdir.parent / "_build" / "html"
    result = subprocess.run(
        [sys.executable, "-m", "jaxcourse.tools.sitebuild", str(site), "-D", "nb_execution_mode=force"],
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


def edit(srcdir, old, new, page="lessons/watched.md"):
    path = srcdir / page
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
    assert sorted(report["pages"]) == ["docs/notebook", "watched"]  # every executed page, not only lessons
    assert report["pages"]["watched"]["status"] == "unchanged"
    assert report["pages"]["watched"]["varying"] == 1
    assert report["pages"]["watched"]["outputs"] == []
    assert report["summary"] == "2 pages unchanged; 1 output differs only in varying values, as expected"
    assert "seconds:" not in json.dumps(report)  # counted, never diffed
    assert not page.select(".page-changes")


def test_the_recordings_keep_what_each_cell_showed_and_its_varying_values(site):
    recordings = json.loads((site.parent / "_build" / "html" / "recordings.json").read_text(encoding="utf-8"))
    cells = recordings["pages"]["watched"]["cells"]
    assert [cell["shown"] for cell in cells[:2]] == ["value: 42\n", "42\n"]  # printed, then displayed
    assert cells[2]["varies"] == ["(?<=seconds: ).*"] and cells[2]["shown"].endswith("steady line\n")
    assert recordings["pages"]["docs/notebook"]["cells"][0]["shown"] == "from docs: 1\n"


@pytest.fixture(scope="module")
def edited(site):
    """A printed value, a displayed value, a line printed beside a timing, the figure's data and the
    notebook page's print all change; the timing changes as always."""
    edit(site, "value = 6 * 7", "value = 6 * 8")
    edit(site, "answer = 40", "answer = 41")
    edit(site, "print('steady line')", "print('steady line, edited')")
    text = edit(site, "'y': [1.0]", "'y': [2.0]")
    edit(site, "print('from docs:', 1)", "print('from docs:', 2)", page="docs/notebook.md")
    return text, *publish(site)


def test_a_changed_printed_value_is_reported_at_its_line_with_the_diff(site, edited):
    text, report, page = edited
    watched = report["pages"]["watched"]
    assert watched["status"] == "changed"
    change = watched["outputs"][0]
    assert change["line"] == line_of(text, "value = 6 * 8") - 1  # the cell's opening fence
    assert "-value: 42" in change["diff"] and "+value: 48" in change["diff"]
    assert f"this build: lessons/watched.md:{change['line']}" in change["diff"]
    assert "+value: 48" in page.get_text()
    markdown = (site.parent / "_build" / "changes.md").read_text(encoding="utf-8")
    assert "+value: 48" in markdown


def test_a_changed_displayed_value_is_reported(edited):
    text, report, _ = edited
    change = report["pages"]["watched"]["outputs"][1]
    assert change["line"] == line_of(text, "answer = 41") - 1
    assert "-42" in change["diff"] and "+43" in change["diff"]


def test_a_line_printed_beside_a_timing_is_compared_and_the_timing_masked(edited):
    text, report, _ = edited
    change = report["pages"]["watched"]["outputs"][2]
    assert change["line"] == line_of(text, ":varies:") - 1  # the opening fence, above the option
    assert "-steady line" in change["diff"] and "+steady line, edited" in change["diff"]
    assert " seconds: <varies>" in change["diff"]  # the timing itself is masked on both sides


def test_every_change_is_in_the_summary(edited):
    _, report, _ = edited
    lines = ", ".join(str(change["line"]) for change in report["pages"]["watched"]["outputs"])
    notebook_line = report["pages"]["docs/notebook"]["outputs"][0]["line"]
    assert report["summary"] == (
        f"0 pages unchanged; docs/notebook changed 1 output (line {notebook_line}); "
        f"watched changed 3 outputs (lines {lines}) and changed figure watched.svg (light and dark)"
    )


def test_a_changed_figure_is_reported(edited):
    _, report, page = edited
    assert report["pages"]["watched"]["figures"] == ["watched-dark.svg", "watched.svg"]  # both themes' files
    assert "changed figure watched.svg (light and dark)" in page.get_text()


def test_a_new_lesson_and_a_new_notebook_page_are_reported_as_added(site, edited):
    (site / "lessons" / "newcomer.md").write_text(lesson("newcomer", code_cell("print('hi')")), encoding="utf-8")
    (site / "docs" / "second.md").write_text(notebook_page("Second", code_cell("print(2)")), encoding="utf-8")
    report, page = publish(site)
    assert report["pages"]["newcomer"]["status"] == "added"
    assert report["pages"]["docs/second"]["status"] == "added"
    assert "newcomer added" in report["summary"] and "docs/second added" in report["summary"]
    assert {link.get_text() for link in page.select(".page-changes-title a")} >= {"newcomer", "docs/second"}


def test_compare_to_takes_another_site(site, tmp_path):
    other = tmp_path / "published"
    other.mkdir()
    recordings = json.loads((site.parent / "_build" / "html" / "recordings.json").read_text(encoding="utf-8"))
    recordings["pages"]["watched"]["stamp"]["jax"] = "0.0.1"  # as if published with an older JAX
    (other / "recordings.json").write_text(json.dumps(recordings), encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxcourse.tools.sitebuild",
            str(site.parent / "_build" / "html"),
            "--compare-to",
            str(other),
        ],
        cwd=site,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((site.parent / "_build" / "changes.json").read_text(encoding="utf-8"))
    assert report["compared_with"] == str(other)
    assert report["pages"]["watched"]["stamp"]["jax"][0] == "0.0.1"
    assert "watched ran under jax" in report["summary"]


def test_a_stamp_change_shared_by_many_pages_is_summarized_once():
    """A JAX upgrade moves every stamp; the summary names it once and still lists each changed output."""
    from jaxcourse.execution.changes import ChangeReport, OutputChange, PageChanges

    upgrade = {"jax": ["0.10.2", "0.10.1"], "jaxlib": ["0.10.2", "0.10.1"]}

    def moved(name: str, *lines: int) -> PageChanges:
        outputs = [OutputChange(line=line, old_line=line, diff="") for line in lines]
        return PageChanges(name, f"lessons/{name}.md", "changed", stamp=dict(upgrade), outputs=outputs)

    pages = [moved("a-01"), moved("a-02", 88, 140), moved("a-03")]
    pages.append(PageChanges("b-01", "lessons/b-01.md", "changed", stamp={"python": ["3.11.7", "3.12.1"]}))
    pages.append(PageChanges("b-02", "lessons/b-02.md", "unchanged"))
    report = ChangeReport(compared_with="_build/html", pages=pages)
    assert report.summary() == (
        "3 pages ran under jax 0.10.1 (was 0.10.2), jaxlib 0.10.1 (was 0.10.2); "
        "3 pages with unchanged outputs and figures; "
        "a-02 changed 2 outputs (lines 88, 140); "
        "b-01 ran under python 3.12.1 (was 3.11.7)"
    )

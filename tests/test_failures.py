"""A bad lesson fails the build with one message per mistake, naming its file, exact line and error.

All the broken lessons sit in one tiny site, built once: every message names
its own file, so each lesson's messages are still checked exactly. The whole
console output must be those messages and nothing else (no kernel traceback,
no log timestamps).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml
from conftest import build, make_site
from tiny import code_cell, exercise, lesson, line_of, notebook_page

# Sphinx prints located problems as "<path>:<line>: ERROR: ..." (or WARNING under -W).
PROBLEM = re.compile(r"^(?P<path>\S+?):(?P<line>\d+): (?:ERROR|WARNING): (?P<message>.*)$")
CELL_FAILURE = re.compile(r"cell failed: .*; full traceback: (?P<report>\S+\.err\.log)")

# Three mistakes that Sphinx, myst-parser and the math renderer each report.
MISTAKES = [
    ("{ref}`no-such-label`", r"undefined label: 'no-such-label'"),
    ("$\\lossfunction(w)$", r"cannot render math '\\\\lossfunction\(w\)': Unknown LaTeX command \"\\lossfunction\""),
    ("```{no-such-directive}", r"Unknown directive type: 'no-such-directive'"),
    # Prose is input too: raw HTML reaches no page, wherever it stands.
    ("<img src=x onerror=alert(1)>", r"^raw HTML '<img src=x onerror=alert\(1\)>' in the page's text is not published"),
]
# The reference and the math sit on a paragraph's second line, not its first.
PROSE = (
    "A paragraph that opens on this line;\nsee {ref}`no-such-label` for more.\n\n"
    "The loss, defined on the next line,\nis $\\lossfunction(w)$ here.\n\n"
    "An image written as HTML,\n<img src=x onerror=alert(1)> on a second line.\n\n"
    "```{no-such-directive}\nSome content.\n```\n"
)
FIGURE_CELL = (
    "```{code-cell} ipython3\n:tags: [remove-cell]\n\nfrom jaxcourse.runtime import save_figure\n\n"
    "save_figure({'kind': 'bar', 'labels': ['a'], 'ylabel': 'y', 'series': [{'label': 's', 'y': [1.0]}]}, title='T')\n"
    "```\n"
)


def figure(lesson_id: str, *, alt: str = ":alt: One bar of height one.", caption: str = "One bar.") -> str:
    fence = "````" if "```" in caption else "```"  # a longer fence around a nested directive
    return f"{fence}{{figure}} ../figures/{lesson_id}.svg\n{alt}\n\n{caption}\n{fence}\n"


# Where prose sits in a lesson; every kind of mistake must be reported at its exact line in each.
POSITIONS = {
    "before-first-cell": PROSE + "\n" + code_cell("x = 1"),
    "between-cells": code_cell("x = 1") + "\n" + PROSE + "\n" + code_cell("y = 2"),
    "inside-exercise": code_cell("x = 1") + "\n" + exercise("Foundation", "pos-exercise", PROSE),
    "inside-solution": (
        code_cell("x = 1")
        + "\n"
        + exercise("Foundation", "pos-solution-exercise", "Do it.")
        + "\n```{solution-start} pos-solution-exercise\n:class: dropdown\n```\n\n"
        + PROSE
        + "\n"
        + code_cell("y = 2")
        + "\n```{solution-end}\n```\n"
    ),
    "inside-figure": (
        FIGURE_CELL
        + "\n"
        + figure(
            "pos-inside-figure",
            caption="A caption that goes on\nwith {ref}`no-such-label` and $\\lossfunction(w)$.\n\n"
            "A legend that shows\n<img src=x onerror=alert(1)> as HTML.\n\n"
            "```{no-such-directive}\nIn the legend.\n```",
        )
    ),
    "after-last-cell": code_cell("x = 1") + "\n" + PROSE,
}

# One mistake each: (lesson text, [(text on the line to report, message pattern)]).
CASES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    f"pos-{name}": (lesson(f"pos-{name}", body), MISTAKES) for name, body in POSITIONS.items()
}
CASES |= {
    # myst-parser puts its message for the unknown role inside the paragraph; the
    # reference after it must still be counted from the author's own lines.
    "reference-after-an-unknown-role": (
        lesson(
            "reference-after-an-unknown-role",
            "A {nosuchrole}`x` on the first line\nand {ref}`no-such-label` on the second.\n\n" + code_cell("x = 1"),
        ),
        [
            ("{nosuchrole}", r'Unknown interpreted text role "nosuchrole"'),
            ("{ref}`no-such-label`", r"undefined label: 'no-such-label'"),
        ],
    ),
    "broken-front-matter": (
        lesson("broken-front-matter", code_cell("print(1)")).replace("  minutes: 5\n", "  minutes: [5\n"),
        [("minutes: [5", r"front matter is not valid YAML")],
    ),
    "misspelt-key": (
        lesson("misspelt-key", code_cell("print(1)")).replace("  device: CPU\n", "  devise: CPU\n"),
        [("devise: CPU", r"unknown key 'lesson.devise'; did you mean 'device'\?")],
    ),
    "no-lesson-mapping": (
        lesson("no-lesson-mapping", code_cell("print(1)")).replace("lesson:\n", "lessons:\n"),
        [("lessons:", r"lacks the 'lesson:' mapping \(copy it from lessons/_template.md.*did you mean 'lesson'")],
    ),
    # A ':::' block is not a cell myst-nb runs; the cells after it are still located exactly.
    "colon-fenced-cell-before-a-failure": (
        lesson(
            "colon-fenced-cell-before-a-failure",
            ":::{code-cell} ipython3\nprint('never run')\n:::\n\n" + code_cell("x = 1\nassert x == 2, 'x is one'"),
        ),
        [
            (
                ":::{code-cell} ipython3",
                r"^this code cell is never executed or shown: myst-nb runs only cells fenced",
            ),
            ("assert x == 2", r'^cell failed: AssertionError at "assert x == 2, \'x is one\'": x is one'),
        ],
    ),
    # Nor does the front matter need a minimum height: three lines of it are enough.
    "short-front-matter": (
        '---\n{"jupytext": {"text_representation": {"format_name": "myst"}}, "kernelspec": {"name": "python3", '
        '"display_name": "Python 3"}, "lesson": {"id": "short-front-matter", "title": "Short", "phase": 9, '
        '"phase_title": "Test phase", "order": 2, "minutes": 5, "device": "CPU"}}\n---\n# Short\n\n'
        "See {ref}`no-such-label` here.\n\n" + code_cell("x = 1\nassert x == 2"),
        [
            ("See {ref}`no-such-label`", r"undefined label: 'no-such-label'"),
            ("assert x == 2", r'^cell failed: AssertionError at "assert x == 2"; full traceback'),
        ],
    ),
}
#: One mistake each, the lesson written out as a contributor writes it: failed cells, kernels that die, outputs
#: the page cannot publish, settings a page cannot use (tests/failure_cases.yml). The key is the lesson's id.
ONE_MISTAKE = yaml.safe_load(Path(__file__).with_name("failure_cases.yml").read_text(encoding="utf-8"))
CASES |= {
    name: (lesson(name, case["body"], extra=case.get("front_matter", "")), [(case["where"], case["message"])])
    for name, case in ONE_MISTAKE.items()
}


def checked_exercise(lesson_id: str, check_body: str) -> str:
    """A lesson with one exercise: its scaffold, its check (``check_body`` is the function's body), its solution."""
    return lesson(
        lesson_id,
        code_cell("base = 2")
        + "\n"
        + exercise("Foundation", f"{lesson_id}-foundation", "Square base into squared.")
        + "\n```python\nsquared = ...  # TODO: base squared\n```\n\n"
        + f"```{{code-cell}} ipython3\n:tags: [exercise-check]\n:exercise: {lesson_id}-foundation\n\n"
        + f"def check_foundation():\n{check_body}\n```\n\n"
        + f"```{{solution-start}} {lesson_id}-foundation\n:class: dropdown\n```\n\n"
        + code_cell("squared = base**2")
        + "\n```{solution-end}\n```\n",
    )


# Each exercise check is proved by the build; a check that cannot tell right from wrong fails at the exercise.
BROKEN_CHECKS = {
    "check-accepts-the-scaffold": (
        checked_exercise("check-accepts-the-scaffold", "    pass"),
        [("{exercise} Foundation", r"^the check of Foundation \(check_foundation\) passes on the untouched scaffold")],
    ),
    "check-rejects-the-solution": (
        checked_exercise(
            "check-rejects-the-solution",
            "    answer = globals().get('squared')\n    assert answer == 5, f'expected five, found {answer!r}'",
        ),
        [
            (
                "{exercise} Foundation",
                r"^the check of Foundation \(check_foundation\) fails on the lesson's own solution: "
                r"AssertionError: expected five, found 4",
            )
        ],
    ),
    "check-crashes-on-the-scaffold": (
        checked_exercise("check-crashes-on-the-scaffold", "    assert squared + 0 == 4"),
        [("{exercise} Foundation", r"^the check of Foundation \(check_foundation\) raised TypeError on the untouched")],
    ),
}
CASES |= BROKEN_CHECKS
# A notebook page outside lessons/ (docs/) fails the build too, and so do settings a page cannot use.
NOTEBOOK_PAGE = notebook_page("A notebook page", code_cell("x = 1") + "\nProse.\n\n" + code_cell("assert x == 2"))
NOTEBOOK_PAGE_PROBLEMS = [("assert x == 2", r'^cell failed: AssertionError at "assert x == 2"')]
DOCS_PAGES = {
    "notebook-page": (NOTEBOOK_PAGE, NOTEBOOK_PAGE_PROBLEMS),
    # Lesson metadata on a page that is not a lesson would be ignored: refused at its line.
    "notebook-page-with-lesson-metadata": (
        notebook_page("Lesson metadata elsewhere", code_cell("x = 1")).replace(
            "orphan: true\n", "orphan: true\nlesson:\n  phase: 2\n"
        ),
        [("lesson:", r"^'lesson:' is for the lessons in lessons/, and this page is not one")],
    ),
    # Raw HTML in a prose page, and an SVG file it shows that would run script when opened.
    "prose-page-with-raw-html": (
        '---\norphan: true\n---\n\n# Prose\n\nA paragraph.\n\n<div onclick="steal()">\nA block.\n</div>\n\n'
        "![A square that runs script](square.svg)\n",
        [
            ('<div onclick="steal()">', r"^raw HTML '<div onclick=.*' in the page's text is not published"),
            ("![A square", r"^docs/square\.svg holds an event handler \(onload\) on <svg> \(and 1 more\); the site"),
        ],
    ),
    # A page that is not a notebook runs none of its cells: each is reported.
    "prose-page-with-a-code-cell": (
        "---\norphan: true\n---\n\n# Prose\n\nThis page forgot its notebook front matter.\n\n"
        + code_cell("print('never runs')"),
        [("```{code-cell}", r"^this page is not a notebook, so this code cell never runs")],
    ),
    # A page loads nothing from outside: a remote image is refused at its line.
    "prose-page-with-remote-image": (
        "---\norphan: true\n---\n\n# Prose\n\nA chart from elsewhere:\n\n![A chart](https://images.example/chart.png)\n",
        [("![A chart]", r"^the image https://images\.example/chart\.png would load from another site")],
    ),
    # Sphinx's and myst-parser's own warnings on a prose page name its file and the line they mean: a link to an
    # anchor on no page, on a paragraph's second line and in a note, and directives the site does not know, one of
    # them in a domain it lacks (sphinx-proof's, in QuantEcon's lectures).
    "prose-page-with-sphinx-warnings": (
        "---\norphan: true\n---\n# Prose\n\nA paragraph that\nlinks to [nowhere](#no-such-anchor).\n\n"
        ":::{note}\nSee [elsewhere](#no-such-label).\n:::\n\n```{no-such-directive}\nx\n```\n\n"
        "```{prf:algorithm}\nx\n```\n",
        [
            ("links to [nowhere]", r"^'myst' cross-reference target not found: 'no-such-anchor'"),
            ("See [elsewhere]", r"^'myst' cross-reference target not found: 'no-such-label'"),
            ("```{no-such-directive}", r"^Unknown directive type: 'no-such-directive'"),
            ("```{prf:algorithm}", r"^Unknown directive type: 'prf:algorithm'"),
        ],
    ),
    # A page no table of contents lists, and not marked orphan: at its first line, with both ways out.
    "page-outside-every-toctree": (
        "# Lost page\n\nNo toctree lists this page.\n",
        [("# Lost page", r"^this page is in no table of contents.*'orphan: true' in its front matter")],
    ),
    # A prose page executes nothing: execution settings on it are refused at their line.
    "prose-page-with-execution-settings": (
        "---\norphan: true\nexecution:\n  cpu_devices: 4\n---\n\n# Prose\n\nNo cells here.\n",
        [("execution:", r"^'execution:' has no effect here: this page is not a notebook")],
    ),
}


# An .ipynb page fails at the line of its JSON that holds the failing statement.
NOTEBOOK_JSON = nbformat.writes(
    nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# A failing notebook"),
            nbformat.v4.new_code_cell("x = 1"),
            nbformat.v4.new_code_cell("y = x + 1\nassert y == 3, 'y is two'"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}, "orphan": True},
    )
)
# A notebook that names no kernel runs in the course's, like any other page: the failure is located at the statement
# (a plain kernel records no line, and the failure would be reported at the cell's "source" key).
NO_KERNELSPEC_JSON = nbformat.writes(
    nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# A notebook that names no kernel"),
            nbformat.v4.new_code_cell("def half(n):\n    return n / 0\n\nhalf(4)"),
        ],
        metadata={"orphan": True},
    )
)
NOTEBOOK_FILES = {
    "failing-notebook": (NOTEBOOK_JSON, [('"assert y == 3', r'^cell failed: AssertionError at "assert y == 3')]),
    "notebook-without-kernelspec": (NO_KERNELSPEC_JSON, [('"    return n / 0', r"^cell failed: ZeroDivisionError")]),
}


@pytest.fixture(scope="module")
def failed(tmp_path_factory):
    root = tmp_path_factory.mktemp("failures")
    srcdir = make_site(root, lessons={name: text for name, (text, _) in CASES.items()})
    # Drawn by an earlier run and committed: the lesson that no longer draws it must not publish it.
    (srcdir / "figures" / "figure-not-drawn.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    for name, (text, _) in DOCS_PAGES.items():
        (srcdir / "docs" / f"{name}.md").write_text(text, encoding="utf-8")
    for name, (text, _) in NOTEBOOK_FILES.items():
        (srcdir / "docs" / f"{name}.ipynb").write_text(text, encoding="utf-8")
    (srcdir / "docs" / "square.svg").write_text(
        "<svg xmlns='http://www.w3.org/2000/svg' onload='steal()'><script>steal()</script><rect width='9'/></svg>"
    )
    return build(srcdir, "-j", "2")


def problems(result) -> list[re.Match]:
    return [match for line in result.output.splitlines() if (match := PROBLEM.match(line))]


def test_build_fails(failed):
    assert failed.returncode != 0


def test_the_output_is_located_messages_only(failed):
    """No kernel traceback, no timestamped log line, no summary noise: one line per problem."""
    lines = [line for line in failed.output.splitlines() if line.strip()]
    assert lines and all(PROBLEM.match(line) for line in lines), failed.output
    assert not re.search(r"\d{2}:\d{2}:\d{2}[.,]\d+", failed.output), failed.output
    assert "Traceback" not in failed.output and "ZMQError" not in failed.output


def expected_problems(path: str, text: str, wanted: list[tuple[str, str]], found: list[re.Match]):
    mine = [match for match in found if match["path"].endswith(path)]
    assert len(mine) == len(wanted), "\n".join(match.group(0) for match in mine)
    for needle, message in wanted:
        line = line_of(text, needle)
        hits = [match for match in mine if re.search(message, match["message"])]
        assert len(hits) == 1, f"{message!r} in:\n" + "\n".join(match.group(0) for match in mine)
        assert int(hits[0]["line"]) == line, f"{hits[0].group(0)}\nexpected line {line}: {needle!r}"
    return mine


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_mistake_is_reported_once_at_its_line(failed, name):
    text, wanted = CASES[name]
    expected_problems(f"lessons/{name}.md", text, wanted, problems(failed))


@pytest.mark.parametrize("name", sorted(DOCS_PAGES))
def test_a_page_outside_lessons_fails_at_its_line(failed, name):
    text, wanted = DOCS_PAGES[name]
    expected_problems(f"docs/{name}.md", text, wanted, problems(failed))


@pytest.mark.parametrize("name", sorted(NOTEBOOK_FILES))
def test_an_ipynb_page_fails_at_the_line_of_its_json(failed, name):
    text, wanted = NOTEBOOK_FILES[name]
    expected_problems(f"docs/{name}.ipynb", text, wanted, problems(failed))


@pytest.mark.parametrize("name", ["failing-assert", "raising-in-function", "hanging-cell"])
def test_a_failed_cell_names_its_saved_traceback(failed, name):
    message = next(match["message"] for match in problems(failed) if match["path"].endswith(f"lessons/{name}.md"))
    report = CELL_FAILURE.search(message)
    assert report, message
    saved = open(report["report"], encoding="utf-8").read()
    assert "Traceback" in saved or "timed out" in saved.lower()

"""A bad lesson fails the build with one message naming its file, line and error.

Each case builds its own tiny site holding one broken lesson.
"""

from __future__ import annotations

import re

import pytest
from conftest import build, make_site
from tiny import code_cell, lesson, line_of

# Sphinx prints located problems as "<path>:<line>: ERROR: ..." (or WARNING under -W).
PROBLEM = re.compile(r"^(?P<path>\S+?):(?P<line>\d+): (?:ERROR|WARNING): (?P<message>.*)$", re.M)

CELL_FAILURES = {"failing-assert", "raising-cell", "hanging-cell"}
CASES = {
    "failing-assert": (
        lesson(
            "failing-assert",
            code_cell("x = 1\nprint('before the check')")
            + "\nSome prose.\n\n"
            + code_cell("y = x + 1\nassert y == 3, 'y should be three'"),
        ),
        "assert y == 3",
        r"cell failed: AssertionError: y should be three",
    ),
    "raising-cell": (
        lesson("raising-cell", code_cell("import math\n\nvalue = math.sqrt(-1)")),
        "math.sqrt(-1)",
        r"cell failed: ValueError: math domain error",
    ),
    "hanging-cell": (
        lesson(
            "hanging-cell",
            code_cell("print('start')") + "\n" + code_cell("import time\ntime.sleep(120)"),
            extra="mystnb:\n  execution_timeout: 3\n",
        ),
        "time.sleep(120)",  # the interrupted statement
        r"cell failed: CellTimeoutError: the cell ran past the per-cell timeout \(3 s",
    ),
    "broken-front-matter": (
        lesson("broken-front-matter", code_cell("print(1)")).replace("  minutes: 5\n", "  minutes: [5\n"),
        "minutes: [5",
        r"front matter is not valid YAML",
    ),
    "incomplete-front-matter": (
        lesson("incomplete-front-matter", code_cell("print(1)")).replace("  device: CPU\n", "  devise: CPU\n"),
        "devise: CPU",
        r"unknown key 'lesson.devise'; did you mean 'device'\?",
    ),
    "broken-reference": (
        lesson("broken-reference", code_cell("print(1)") + "\nSee {ref}`no-such-label` for more.\n"),
        "no-such-label",
        r"undefined label: 'no-such-label'",
    ),
    "bad-math": (
        lesson("bad-math", code_cell("print(1)") + "\nThe loss is $\\lossfunction(w)$ here.\n"),
        "lossfunction",
        r"cannot render math .*unknown LaTeX command \\lossfunction",
    ),
    "missing-figure": (
        lesson(
            "missing-figure",
            code_cell("print(1)")
            + "\n```{figure} ../figures/missing-figure.svg\n:alt: A chart that was never drawn.\n\nCaption.\n```\n",
        ),
        "{figure} ../figures/missing-figure.svg",
        r"image file not readable",
    ),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def failed(request, tmp_path_factory):
    name = request.param
    text, needle, message = CASES[name]
    srcdir = make_site(tmp_path_factory.mktemp(name), lessons={name: text})
    return name, text, needle, message, build(srcdir)


def test_build_fails(failed):
    name, _, _, _, result = failed
    assert result.returncode != 0, result.output


def test_one_message_names_the_file_line_and_error(failed):
    name, text, needle, message, result = failed
    problems = [match for match in PROBLEM.finditer(result.output)]
    assert len(problems) == 1, result.output
    problem = problems[0]
    assert problem["path"].endswith(f"lessons/{name}.md"), result.output
    assert int(problem["line"]) == line_of(text, needle), result.output
    assert re.search(message, problem["message"]), result.output
    if name in CELL_FAILURES:
        # The full traceback is saved, and the message says where.
        report = re.search(r"full traceback: (\S+\.err\.log)", problem["message"])
        assert report, result.output
        saved = open(report.group(1), encoding="utf-8").read()
        assert "Traceback" in saved or "timed out" in saved

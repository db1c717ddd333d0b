"""The lesson checker: every lesson passes; a broken one gets every problem, located."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import LESSON_FILES, ROOT
from jaxcourse.tools.checker import docs_pages
from tiny import line_of

CHECKER = [sys.executable, "-m", "jaxcourse.tools.checker"]
LOCATED = re.compile(r"^(?P<path>\S+\.md):(?P<line>\d+): (?P<message>.+)$", re.M)


def check(*paths, cwd=ROOT):
    return subprocess.run([*CHECKER, *map(str, paths)], capture_output=True, text=True, cwd=cwd)


def test_every_lesson_passes():
    result = check()
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(LESSON_FILES)} lessons and {len(docs_pages(ROOT))} pages checked, 0 problems" in result.stderr


# Each mutation of transforms-04 breaks one rule; (old text, new text, line marker, expected message).
# A marker is the text on the reported line, or (text, offset) for the line `offset` lines after it.
MUTATIONS = {
    "deleted title": ("# Compile a function with jit\n", "\n", ("---", 0), r"missing the '# Title' heading"),
    "misspelt tag": (
        ":tags: [remove-cell]",
        ":tags: [remove-cel]",
        (":tags: [remove-cel]", -1),
        r"unknown cell tag 'remove-cel'; did you mean 'remove-cell'\?",
    ),
    "undeclared timing": (
        ":varies: '(?<=median / min / max seconds: ).*'\n",
        ":tags: [remove-stderr]\n",
        (":tags: [remove-stderr]", -1),
        r"this cell prints a timing: declare the values that vary",
    ),
    "whole-cell varies tag": (
        ":varies: '(?<=First/repeat seconds: ).*'\n",
        ":tags: [varies]\n",
        (":tags: [varies]", -1),
        r"the 'varies' tag exempted every output of the cell",
    ),
    "bad varies pattern": (
        ":varies: '(?<=median seconds: ).*'\n",
        ":varies: '(?<=median seconds: .*'\n",
        (":varies: '(?<=median seconds: .*'", -1),
        r"the varies pattern .* is not a regular expression",
    ),
    # A cell fenced with ':::' (opened and closed) is not a cell myst-nb runs.
    "a colon-fenced code cell": (
        "```{code-cell} ipython3\ncompiled_step = jax.jit(",
        ":::{code-cell} ipython3\ncompiled_step = jax.jit(",
        ":::{code-cell} ipython3",
        r"this \{code-cell\} is never executed",
    ),
    "the colon fence's close": (
        "atol=1e-6)\n```\n\nTo benchmark both outputs",
        "atol=1e-6)\n:::\n\nTo benchmark both outputs",
        ":::{code-cell} ipython3",
        r"this \{code-cell\} is never executed",
    ),
    "wrong id": ("  id: transforms-04", "  id: transforms-4", "  id: transforms-4", r"'lesson.id' is 'transforms-4'"),
    "missing minutes": ("  minutes: 55\n", "", "lesson:", r"'lesson.minutes' is missing"),
    "missing section": ("## Carry forward\n", "## Carried forward\n", "## Diagnose the result", r"missing '## Carry"),
    "no alt text": (
        ':alt: Bar chart titled "Compilation preserves the result".',
        ":width: 500px",
        "{figure} ../figures/transforms-04.svg",
        r"figure .* has no :alt: text",
    ),
    "solution not executed": (
        "```{code-cell} ipython3\n# Check that a new value remains",
        "```python\n# Check that a new value remains",
        "{solution-start} transforms-04-practice",
        r"solution of 'transforms-04-practice' has no executed \{code-cell\}",
    ),
    "solution shown": (
        "```{solution-start} transforms-04-challenge\n:class: dropdown\n",
        "```{solution-start} transforms-04-challenge\n",
        "{solution-start} transforms-04-challenge",
        r"must be collapsed",
    ),
    "no scaffold": (
        "```python\n# Exercise solution: Foundation",
        "```text\n# Exercise solution: Foundation",
        "{exercise} Foundation",
        r"'transforms-04-foundation' has no starter scaffold",
    ),
    "reference elsewhere": (
        "- [JAX: benchmarking](https://docs.jax.dev/en/latest/benchmarking.html)",
        "- [A blog on benchmarking](https://example.com/benchmarking.html)",
        "https://example.com/benchmarking.html",
        r"primary reference https://example.com/benchmarking.html is not a docs.jax.dev page",
    ),
    # Prose is input too: raw HTML and {raw} reach no page (docs/contributing.md, "Prose is input too").
    "raw HTML block": (
        "## The idea\n",
        '## The idea\n\n<div onclick="steal()">A block of HTML.</div>\n',
        '<div onclick="steal()">',
        r"raw HTML '<div onclick=.*' in the page's text is not published .*'\{container\}' directive",
    ),
    "inline HTML": (
        "Compilation prepares a program that can be reused for compatible calls.",
        "Compilation prepares a program <img src=x onerror=alert(1)> that can be reused.",
        "<img src=x onerror=alert(1)>",
        r"raw HTML '<img src=x onerror=alert\(1\)>' in the page's text is not published .*'!\[alt text\]\(path\)'",
    ),
    "raw directive": (
        "## Keep your evidence\n",
        "## Keep your evidence\n\n```{raw} html\n<script>alert(1)</script>\n```\n",
        "{raw} html",
        r"a \{raw\} directive in the page's text is not published",
    ),
    "ruff finding": (
        "import statistics\n",
        "import statistics\nimport os\n",
        "import os",
        r"ruff F401",
    ),
    # Visible code lines fit the code box at 1280 px; the checker names the line that does not.
    "a long code line": (
        "def loss(w, x, y):\n    return jnp.mean((x @ w - y) ** 2)\n",
        "def loss(w, x, y):\n    return jnp.mean((x @ w - y) ** 2)  # the mean squared error of the linear model, "
        "over rows\n",
        "    return jnp.mean((x @ w - y) ** 2)  # the mean squared error",
        r"this code line is 94 characters long; a visible code line has at most 88",
    ),
    "a long scaffold line": (
        "compiled_step = jax.jit(...)  # TODO: compile value_and_grad of loss\n",
        "compiled_step = jax.jit(...)  # TODO: compile value_and_grad of loss, then call it on w, x and y\n",
        "compiled_step = jax.jit(...)  # TODO: compile value_and_grad of loss, then",
        r"this code line is \d+ characters long",
    ),
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """transforms-04 with every mutation applied at once, checked in one run."""
    text = (ROOT / "lessons" / "transforms-04.md").read_text(encoding="utf-8")
    for old, new, _, _ in MUTATIONS.values():
        assert old in text, old
        text = text.replace(old, new, 1)
    folder = tmp_path_factory.mktemp("checker") / "lessons"
    folder.mkdir()
    path = folder / "transforms-04.md"
    path.write_text(text, encoding="utf-8")
    return text, check(path, cwd=folder.parent)


def test_broken_lesson_fails(broken):
    assert broken[1].returncode == 1


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_each_problem_is_reported_with_its_line(broken, mutation):
    text, result = broken
    _, _, marker, message = MUTATIONS[mutation]
    found = [m for m in LOCATED.finditer(result.stdout) if re.search(message, m["message"])]
    assert found, result.stdout
    assert found[0]["path"].endswith("lessons/transforms-04.md")
    needle, offset = marker if isinstance(marker, tuple) else (marker, 0)
    assert line_of(text, needle) + offset in [int(match["line"]) for match in found], result.stdout


def test_hidden_code_may_be_long_and_visible_code_may_not(tmp_path):
    """remove-cell and exercise-check cells are never shown: their lines are not held to the limit."""
    from jaxcourse.source.lessonsource import parse
    from jaxcourse.tools.checker import CODE_LINE_LIMIT, check_code_lines

    long = "x = " + "1 + " * 30 + "1"
    assert len(long) > CODE_LINE_LIMIT
    text = "\n".join(
        [
            "```{code-cell} ipython3", ":tags: [remove-cell]", "", long, "```", "",
            "```{code-cell} ipython3", ":tags: [exercise-check]", ":exercise: x-practice", "", long, "```", "",
            "```{code-cell} ipython3", ":tags: [remove-input]", "", long, "```", "",
            "```{code-cell} ipython3", ":tags: [hide-input]", "", long, "```", "",
            "```python", long, "```", "",
        ]
    )  # fmt: skip
    lines = [problem.line for problem in check_code_lines(parse(text))]
    assert lines == [text.splitlines().index(long, 20) + 1, len(text.splitlines()) - 1]


def test_a_longer_closing_fence_closes_its_block(tmp_path):
    """CommonMark: a fence closes with at least as many backticks; a scanner that wants equal ones breaks."""
    text = (ROOT / "lessons" / "transforms-04.md").read_text(encoding="utf-8")
    start = text.index("```python\n# Exercise solution: Foundation")
    end = text.index("\n```\n", start)
    text = text[:end] + "\n`````\n" + text[end + len("\n```\n") :]
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "transforms-04.md").write_text(text, encoding="utf-8")
    result = check(tmp_path / "lessons" / "transforms-04.md", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_docs_page_with_raw_html_fails_at_its_line(tmp_path):
    """Not only lessons: every page under docs/ is prose a pull request can bring."""
    page = tmp_path / "docs" / "notes.md"
    page.parent.mkdir()
    text = "# Notes\n\nA paragraph,\nthen <iframe src='https://evil.example'></iframe> on its second line.\n"
    page.write_text(text, encoding="utf-8")
    result = check(page, cwd=tmp_path)
    assert result.returncode == 1
    (found,) = LOCATED.findall(result.stdout) and list(LOCATED.finditer(result.stdout))
    assert found["path"].endswith("docs/notes.md") and int(found["line"]) == line_of(text, "<iframe")
    assert "a page embeds no other page" in found["message"]
    assert "0 lessons and 1 page checked, 1 problem" in result.stderr


def test_problems_are_counted(broken):
    _, result = broken
    count = len(LOCATED.findall(result.stdout))
    assert count >= len(MUTATIONS)
    assert f"1 lesson checked, {count} problems" in result.stderr

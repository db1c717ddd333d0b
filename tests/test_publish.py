"""Publishing (jaxcourse.tools.publishing, behind nox -s docs): only a passing build replaces the site.

A failed build keeps the last good site; a kill in the middle of the swap is
finished or undone by the next run; build internals never reach the site.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from conftest import make_site
from jaxcourse.tools import publishing
from tiny import code_cell, lesson, line_of


def publish(srcdir, site, *options):
    return subprocess.run(
        [sys.executable, "-m", "jaxcourse.tools.sitebuild", str(site), *options],
        cwd=srcdir,
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    root = tmp_path_factory.mktemp("publish")
    good = lesson("kept-lesson", code_cell("print('first version')"))
    srcdir = make_site(root, lessons={"kept-lesson": good})
    site = root / "_build" / "html"
    first = publish(srcdir, site)
    assert first.returncode == 0, first.stdout + first.stderr
    return srcdir, site


def test_the_published_site_holds_no_build_internals(published):
    _, site = published
    assert (site / "lessons" / "kept-lesson.html").is_file()
    for name in publishing.BUILD_INTERNALS:
        assert not (site / name).exists(), name
    assert not list(site.rglob("*.doctree")) and not list(site.rglob("*.pickle"))
    assert not (site.parent / "html.new.doctrees").exists()  # removed once published


def test_failed_build_keeps_the_last_good_site(published):
    srcdir, site = published
    page = site / "lessons" / "kept-lesson.html"
    before = page.read_text(encoding="utf-8")
    assert "first version" in before
    bad = lesson("kept-lesson", code_cell("print('second version')\nassert False, 'broken on purpose'"))
    (srcdir / "lessons" / "kept-lesson.md").write_text(bad, encoding="utf-8")
    second = publish(srcdir, site)
    assert second.returncode != 0
    assert page.read_text(encoding="utf-8") == before  # the old page, untouched
    assert not (site.parent / "html.old").exists()
    summary = second.stderr[second.stderr.index("BUILD FAILED") :]
    assert f"BUILD FAILED (1 problem listed above); the last good site in {site} was kept" in summary
    message = "cell failed: AssertionError at \"assert False, 'broken on purpose'\": broken on purpose"
    located = f"kept-lesson.md:{line_of(bad, 'assert False')}: ERROR: {message}"
    assert second.stderr.count(located) == 1, second.stderr  # printed once, not repeated by the summary
    assert (site.parent / "html.new" / "lessons" / "kept-lesson.html").exists()  # the failed build, to inspect


def test_an_unknown_lesson_is_refused_with_the_choices(published):
    srcdir, site = published
    result = publish(srcdir, site.parent / "lesson", "--lesson", "no-such-lesson")
    assert result.returncode == 2
    assert "no lesson 'no-such-lesson' in lessons/" in result.stderr
    assert result.stderr.rstrip().endswith("the lessons are: kept-lesson")


def test_a_one_page_build_of_a_prose_page_builds_it_and_says_nothing_ran(published):
    """nox -s lesson -- docs/page.md for a page that is not a notebook: checked and built, and said so."""
    srcdir, site = published
    result = publish(srcdir, site.parent / "one-page", "--lesson", "docs/contributing.md")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "docs/contributing: not a notebook, so nothing on it ran; page: " in result.stdout
    assert (site.parent / "one-page" / "docs" / "contributing.html").is_file()


GLUED_PAGE = """---
orphan: true
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---
# A page whose numbers are glued in

```{code-cell}
samples = load_samples()
```

```{code-cell}
from myst_nb import glue

glue("mean", sum(samples) / len(samples))
```

The mean is {glue:text}`mean:.2f`, and again {glue:text}`mean:.1f`.
"""


def test_among_many_problems_the_summary_names_the_failed_run_they_may_follow_from(tmp_path):
    """As myst-nb's glue guide fails without pandas: its one failed cell, then a missing glued value per use."""
    srcdir = make_site(tmp_path)
    (srcdir / "docs" / "glued.md").write_text(GLUED_PAGE, encoding="utf-8")
    result = publish(srcdir, tmp_path / "_build" / "html", "--lesson", "docs/glued.md")
    assert result.returncode != 0
    failed = f"glued.md:{line_of(GLUED_PAGE, 'load_samples')}: ERROR: cell failed: NameError"
    assert result.stderr.count(failed) == 2, result.stderr  # where it happened, and again in the summary
    summary = result.stderr[result.stderr.index("BUILD FAILED") :]
    assert summary.startswith("BUILD FAILED (3 problems listed above)")
    (named,) = [line for line in summary.splitlines() if line.startswith("  ")]
    assert failed in named and named.endswith("[course.exec]")
    assert "The failed runs, which problems on the same page may follow from:" in summary


def test_a_one_page_build_runs_the_pages_it_pastes_glued_values_from(tmp_path):
    """myst-nb's cross-document glue: the page alone would have no value to paste, and the build would fail."""
    srcdir = make_site(tmp_path)
    front = GLUED_PAGE[: GLUED_PAGE.index("# A page")]
    glued = front + "# The answer\n\n```{code-cell}\nfrom myst_nb import glue\n\nglue('answer', 6 * 7)\n```\n"
    (srcdir / "docs" / "answer.md").write_text(glued, encoding="utf-8")
    (srcdir / "docs" / "pasting.md").write_text(
        front + "# Pasting\n\n```{code-cell}\nprint('here')\n```\n\nIt is {glue:text}`answer.md::answer:d`.\n",
        encoding="utf-8",
    )
    site = tmp_path / "_build" / "html"
    result = publish(srcdir, site, "--lesson", "docs/pasting.md")
    assert result.returncode == 0, result.stderr
    page = (site / "docs" / "pasting.html").read_text(encoding="utf-8")
    assert 'It is <span class="pasted-text">42</span>.' in page
    assert result.stdout.startswith("docs/pasting: its cells ran in ")


def test_a_one_page_build_resolves_references_to_the_figures_exercises_and_equations_of_pages_left_out(tmp_path):
    """As QuantEcon's numpy lecture points at an exercise of python_essentials: the whole build resolves it, so a
    build of the one page must too."""
    srcdir = make_site(tmp_path)
    front = GLUED_PAGE[: GLUED_PAGE.index("# A page")]
    (srcdir / "docs" / "essentials.md").write_text(
        front + "# Essentials\n\n$$\na = 1\n$$ (first-eq)\n\n```{math}\n:label: second-eq\nb = 2\n```\n\n"
        "````{exercise} Evaluate a polynomial\n:label: poly-exercise\n\nWrite it.\n\n"
        "```{figure} ../figures/none.svg\n:name: poly-figure\n:alt: Nothing.\n\nA caption.\n```\n````\n\n"
        "```{code-cell}\nprint('not run by this build')\n```\n",
        encoding="utf-8",
    )
    (srcdir / "docs" / "numpy.md").write_text(
        front + "# NumPy\n\n```{code-cell}\nprint('here')\n```\n\n"
        "See {ref}`poly-exercise`, {ref}`the figure <poly-figure>` and {eq}`second-eq`.\n",
        encoding="utf-8",
    )
    site = tmp_path / "_build" / "html"
    result = publish(srcdir, site, "--lesson", "docs/numpy.md")
    assert result.returncode == 0, result.stderr
    page = (site / "docs" / "numpy.html").read_text(encoding="utf-8")
    assert 'href="essentials.html#poly-exercise"' in page and 'href="essentials.html#poly-figure"' in page
    assert "Evaluate a polynomial" in page and 'href="essentials.html#equation-second-eq">(2)</a>' in page


# ------------------------------------------------------------------ a kill during the swap


def make_tree(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(text, encoding="utf-8")
    return folder


def killed_at_rename(number: int):
    """Path.rename that works until its `number`-th call, which is killed (KeyboardInterrupt)."""
    real = Path.rename
    calls = []

    def rename(self, target):
        calls.append(self)
        if len(calls) == number:
            raise KeyboardInterrupt(f"killed before rename {number}")
        return real(self, target)

    return rename


@pytest.mark.parametrize("killed_rename", [1, 2], ids=["before-the-first-rename", "between-the-renames"])
def test_a_kill_during_the_swap_is_recovered_by_the_next_run(tmp_path, killed_rename):
    site = make_tree(tmp_path / "html", "good")
    staging = make_tree(tmp_path / "html.new", "newer")
    with mock.patch.object(Path, "rename", killed_at_rename(killed_rename)), pytest.raises(KeyboardInterrupt):
        publishing.publish(staging, site)
    if killed_rename == 2:
        assert not site.exists() and (tmp_path / "html.old").exists()  # the dangerous moment
    publishing.recover(site)  # what the next run does first
    assert (site / "index.html").read_text(encoding="utf-8") == "good"
    assert not (tmp_path / "html.old").exists()


def test_a_kill_after_the_swap_leaves_the_new_site(tmp_path):
    site = make_tree(tmp_path / "html", "good")
    staging = make_tree(tmp_path / "html.new", "newer")
    real_rmtree = publishing.shutil.rmtree

    def killed_rmtree(path, *args, **kwargs):
        if Path(path).name == "html.old":
            raise KeyboardInterrupt("killed while removing the old site")
        return real_rmtree(path, *args, **kwargs)

    with mock.patch.object(publishing.shutil, "rmtree", killed_rmtree), pytest.raises(KeyboardInterrupt):
        publishing.publish(staging, site)
    publishing.recover(site)
    assert (site / "index.html").read_text(encoding="utf-8") == "newer"
    assert not (tmp_path / "html.old").exists()

"""Lessons show real errors: a cell given `:raises: TypeError` shows `Type: message`.

One tiny site whose lesson raises on purpose, in a cell that promises the error
(`:raises: TypeError`), with a message that holds a backtick and a machine path
(a JAX tracing error). A promising cell that does not raise (or raises another
error), and an untagged cell that raises, fail the build at their lines: see
test_failures.py. myst-nb's standard tag keeps its standard meaning: a cell
tagged raises-exception may raise, and one that does not passes (a ported page here).
"""

from __future__ import annotations

import re

import nbformat
import pytest
from conftest import build, make_site
from tiny import code_cell, lesson, notebook_page

RAISING = "jax.jit(lambda n: jnp.ones((n,)))(3)"
BODY = (
    code_cell("import jax\nimport jax.numpy as jnp\nprint('before the error')")
    + "\nThe size of an array must be known when JAX traces; here it is a traced argument.\n\n"
    + f"```{{code-cell}} ipython3\n:raises: TypeError\n\n{RAISING}\n```\n"
    + "\nThe lesson goes on after the error.\n\n"
    + code_cell("print('after the error')")
    + "\n```{recorded-run}\n```\n"
)


# What IPython's full tracebacks carry and a page must not: frames, paths, hidden-frame markers.
MACHINE_TRACES = re.compile(r"site-packages|/tmp/|ipykernel_|Traceback|skipping hidden|File \"|Cell In\[")


# A page from elsewhere, with myst-nb's tag on a cell that may raise and, under this JAX, does not.
MAY_RAISE = notebook_page(
    "A ported page",
    "```{code-cell} ipython3\n:tags: [raises-exception]\n\nprint('this cell may raise')\n```\n\n"
    + code_cell("print('and the page goes on')"),
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    srcdir = make_site(tmp_path_factory.mktemp("raises"), lessons={"shows-an-error": lesson("shows-an-error", BODY)})
    (srcdir / "docs" / "may-raise.md").write_text(MAY_RAISE, encoding="utf-8")
    result = build(srcdir)
    assert result.returncode == 0, result.output  # a backtick in the message breaks no highlighter
    return result


@pytest.fixture(scope="module")
def page(site):
    return site.html("lessons/shows-an-error.html")


def error_output(page):
    outputs = page.select("div.cell_output .error-summary pre")
    assert len(outputs) == 1
    return outputs[0].get_text()


def test_the_page_shows_the_exception_type_and_message(page):
    text = error_output(page)
    assert text.startswith("TypeError: Shapes must be 1D sequences of concrete values of integer type")
    assert "`static_argnums`" in text  # the backtick, as JAX wrote it


def test_the_page_shows_no_frames_and_no_paths_of_the_build_machine(page):
    text = error_output(page)
    assert not MACHINE_TRACES.search(text), text
    assert "<cell>:1" in text  # JAX names where it traced: the cell, not this machine's temp file
    assert not MACHINE_TRACES.search(page.select_one("article").get_text())


def test_the_error_is_plain_text_not_highlighted_markup(page):
    block = page.select_one("div.cell_output .error-summary")
    assert "highlight-none" in block["class"]
    assert not block.select("span[class]")  # no lexer tokens


def test_the_transcript_records_the_error_line_in_order(page):
    transcript = page.select_one(".recorded-transcript pre").get_text().splitlines()
    error = next(i for i, line in enumerate(transcript) if line.startswith("TypeError: Shapes must be"))
    assert transcript.index("before the error") < error < transcript.index("after the error")
    assert transcript[-1] == "PASS: shows-an-error"


def test_the_executed_notebook_carries_the_short_error(site):
    notebook = nbformat.read(site.outdir / "_downloads" / "lessons" / "shows-an-error.ipynb", as_version=4)
    errors = [output for cell in notebook.cells for output in cell.get("outputs", []) if output.output_type == "error"]
    assert len(errors) == 1
    assert errors[0].ename == "TypeError"
    assert errors[0].traceback == [f"TypeError: {errors[0].evalue}"]
    assert not MACHINE_TRACES.search(errors[0].evalue)


def test_the_full_traceback_stays_out_of_the_site(site):
    for path in site.outdir.rglob("*"):
        if path.is_file() and path.suffix in {".html", ".ipynb", ".txt", ".js", ".json"}:
            text = path.read_text(encoding="utf-8", errors="replace")
            assert "site-packages/jax" not in text, path


def test_the_standard_tag_on_a_cell_that_does_not_raise_passes(site):
    page = site.html("docs/may-raise.html").select_one("article").get_text()
    assert "this cell may raise" in page and "and the page goes on" in page

"""Equations become MathML at build time: escaped text, numbers and labels, no script.

Unknown commands fail the build at their line: see test_failures.py.
"""

from __future__ import annotations

import pytest
from conftest import build, make_site
from tiny import code_cell, lesson

BODY = (
    code_cell("x = 1")
    + "\nA formula whose text is markup: $\\text{<script>document.title='hacked'</script>}$.\n\n"
    + "An inline $\\frac{2}{N} X^\\mathsf{T}(Xw - y)$ and a numbered one:\n\n"
    + "$$\nL(w) = \\frac{1}{N} \\sum_i (x_i^\\top w - y_i)^2\n$$ (eq-loss)\n\n"
    + "Equation {eq}`eq-loss` is the loss; $0, 0.1, \\dots, 1.1$ uses an amsmath command.\n"
)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    srcdir = make_site(tmp_path_factory.mktemp("math"), lessons={"math-lesson": lesson("math-lesson", BODY)})
    result = build(srcdir)
    assert result.returncode == 0, result.output
    return result.html("lessons/math-lesson.html")


def test_markup_inside_math_stays_text(page):
    texts = [node.get_text() for node in page.select("math mtext")]
    assert "<script>document.title='hacked'</script>" in texts
    assert not page.select("math script") and not page.select("mtext *")
    inline_scripts = [script.get_text() for script in page.find_all("script") if not script.get("src")]
    assert not any("hacked" in text for text in inline_scripts)


def test_equations_are_mathml_without_mathjax(page):
    assert len(page.select("math")) >= 4
    assert page.select_one("div.math-display math[display='block']")
    assert not page.find("script", src=lambda src: src and "mathjax" in src.lower())


def test_a_labelled_equation_is_numbered_and_linked(page):
    display = page.select_one("div.math-display#equation-eq-loss")
    assert display is not None
    assert display.select_one("span.eqno").get_text(strip=True).startswith("(1)")
    references = [a for a in page.select("a.reference") if a.get("href", "").endswith("#equation-eq-loss")]
    assert references and references[0].get_text(strip=True) == "(1)"

"""Equations become MathML at build time: escaped text, numbers and labels, no script, and
everything the JAX tutorials write (arrays with rules, aligned and gathered rows, matrices),
drawn with the site's own math font.

Unknown commands fail the build at their line: see test_failures.py.
"""

from __future__ import annotations

import re

import pytest
from conftest import ROOT, build, make_site
from tiny import code_cell, lesson

BODY = (
    code_cell("x = 1")
    + "\nA formula whose text is markup: $\\text{<script>document.title='hacked'</script>}$.\n\n"
    + "An inline $\\frac{2}{N} X^\\mathsf{T}(Xw - y)$ and a numbered one:\n\n"
    + "$$\nL(w) = \\frac{1}{N} \\sum_i (x_i^\\top w - y_i)^2\n$$ (eq-loss)\n\n"
    + "Equation {eq}`eq-loss` is the loss; $0, 0.1, \\dots, 1.1$ uses an amsmath command.\n\n"
    # What the JAX tutorials write: an array with column and row rules, and derivatives stacked in one.
    + "$$\n\\begin{array} {r|rr}\n\\hline \\\n\\textrm{construct} & \\textrm{jit} & \\textrm{grad} \\\\\n"
    + "\\hline \\\n\\textrm{if} & ❌ & ✔ \\\\\n\\textrm{for} & ✔* & ✔\\\\\n\\hline\n\\end{array}\n$$\n\n"
    + "$$\n\\begin{aligned} f(x) &= x^3 \\\\ f'(x) &= 3x^2 \\end{aligned}\n$$\n\n"
    + "$$\n\\begin{gathered} a = 1 \\\\ b = 2 \\end{gathered}\n$$\n\n"
    + "$$\nJ = \\begin{pmatrix} 4 & 4 & 0 \\\\ 1 & 0 & 1 \\end{pmatrix}\n$$\n"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    srcdir = make_site(tmp_path_factory.mktemp("math"), lessons={"math-lesson": lesson("math-lesson", BODY)})
    result = build(srcdir)
    assert result.returncode == 0, result.output
    return result


@pytest.fixture(scope="module")
def page(site):
    return site.html("lessons/math-lesson.html")


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


def test_every_formula_is_mathml_none_is_left_as_code(page):
    assert not page.select("div.math-display > code") and not page.select("p > code.math")
    assert len(page.select("math mtable")) == 4  # the array, the aligned, the gathered rows and the matrix


def test_table_rules_and_alignment_are_drawn_with_css(page):
    """MathML Core ignores rowlines/columnlines/columnalign; the renderer turns them into styles."""
    table = next(table for table in page.select("math mtable") if "construct" in table.get_text())
    rows = table.find_all("mtr")
    assert [row.find("mtd").get_text(strip=True) for row in rows] == ["construct", "if", "for"]
    first_cells = [row.find("mtd")["style"] for row in rows]
    assert all("border-right" in style and "justify-items: end" in style for style in first_cells)  # r
    assert "border-top" in first_cells[0] and "border-top" in first_cells[1] and "border-top" not in first_cells[2]
    assert "border-bottom" in first_cells[2]
    assert not table.has_attr("rowlines") and not table.has_attr("columnlines")


def test_gathered_rows_stay_on_separate_lines(page):
    gathered = next(
        table for table in page.select("math mtable") if "b" in table.get_text() and "a" in table.get_text()
    )
    assert len(gathered.find_all("mtr")) == 2


def test_the_site_serves_its_math_font_subset_to_its_formulas(site):
    """STIX Two Math with a MATH table, a small subset, named in the CSS every page loads."""
    import io

    from fontTools.ttLib import TTFont

    static = site.outdir / "_static"
    data = (static / "jaxcourse-math.woff2").read_bytes()
    assert len(data) < 120_000
    font = TTFont(io.BytesIO(data))
    assert "MATH" in font and font["name"].getDebugName(1).startswith("STIX Two Math")
    assert {ord("∑"), ord("⊤"), 0x1D465} <= set(font.getBestCmap())  # used here, and the italic x of <mi>x</mi>
    css = (static / "course.css").read_text(encoding="utf-8")
    assert 'url("jaxcourse-math.woff2")' in css and 'math { font-family: "STIX Two Math", math; }' in css


def test_the_font_is_the_same_bytes_for_the_same_characters():
    from jaxcourse.output.mathfont import subset

    assert subset("abc∑") == subset("abc∑") != subset("abc∑ℝ")  # ℝ is not among the letters always kept


def test_a_build_reuses_the_font_subset_made_for_the_same_characters(tmp_path):
    from jaxcourse.output.mathfont import cached_subset, subset

    first = cached_subset("abc∑", tmp_path)
    assert first == subset("abc∑")
    (kept,) = tmp_path.glob("*.woff2")
    kept.write_bytes(b"from the cache")
    assert cached_subset("abc∑", tmp_path) == b"from the cache"  # read back, not made again
    assert cached_subset("abc∑ℝ", tmp_path) == subset("abc∑ℝ")  # other characters, another file
    assert len(list(tmp_path.glob("*.woff2"))) == 2


# ----------------------------------------------------------------- function names and their arguments


def formulas(text: str) -> list[str]:
    """Every $...$ and $$...$$ formula of a page's text."""
    displays = re.findall(r"\$\$(.+?)\$\$", text, flags=re.S)
    inline = re.findall(r"(?<!\$)\$(?!\$)([^$\n]+?)\$", re.sub(r"\$\$.+?\$\$", "", text, flags=re.S))
    return displays + inline


def test_a_function_name_is_applied_to_its_argument_and_spaced_in_transforms_08():
    """'sin x₂' reads as sin applied to x₂, not as the product 'sinx₂'; 'W tanh(x)' keeps its space."""
    import xml.etree.ElementTree as ET

    from jaxcourse.output.mathml import FUNCTION_APPLICATION, THIN_SPACE, to_mathml

    text = (ROOT / "lessons" / "transforms-08.md").read_text(encoding="utf-8")
    found = [latex for latex in formulas(text) if re.search(r"\\(sin|cos|tanh|operatorname)\b", latex)]
    assert len(found) >= 5, found
    applied = 0
    for latex in found:
        tree = ET.fromstring(to_mathml(latex, block=False))
        for row in tree.iter():
            if row.tag in ("msub", "msup", "msubsup", "mfrac"):
                continue  # a base and its scripts, not a row of terms
            children = list(row)
            for index, child in enumerate(children):
                name = child[0] if child.tag in ("msub", "msup", "msubsup") and len(child) else child
                if name.tag != "mi" or (name.text or "").strip() not in {"sin", "cos", "tanh", "diag"}:
                    continue
                following = children[index + 1] if index + 1 < len(children) else None
                assert following is not None and following.tag == "mo", (latex, ET.tostring(row, "unicode"))
                assert following.text == FUNCTION_APPLICATION, (latex, ET.tostring(row, "unicode"))
                after = children[index + 2] if index + 2 < len(children) else None
                bracket = after is not None and after.tag == "mo" and after.text in "([{"
                assert following.get("rspace") == ("0" if bracket else THIN_SPACE), latex
                applied += 1
    assert applied >= 8
    caption = ET.fromstring(to_mathml(r"W \tanh(x)", block=False))[0]
    assert [child.tag for child in caption][:4] == ["mi", "mspace", "mi", "mo"]  # W, thin space, tanh, U+2061
    assert caption[1].get("width") == THIN_SPACE


@pytest.mark.parametrize(
    ("latex", "expected"),
    [
        (r"\sin x_2", '<mi>sin</mi><mo lspace="0" rspace="0.1667em">\u2061</mo><msub>'),
        (r"\exp(-x)", '<mi>exp</mi><mo lspace="0" rspace="0">\u2061</mo><mo stretchy="false">(</mo>'),
        (r"\log p", '<mi>log</mi><mo lspace="0" rspace="0.1667em">\u2061</mo><mi>p</mi>'),
        (r"\operatorname{softmax}(z)", '<mi>softmax</mi><mo lspace="0" rspace="0">\u2061</mo>'),
        (r"\cos^2 x", '<msup><mi>cos</mi><mn>2</mn></msup><mo lspace="0" rspace="0.1667em">\u2061</mo>'),
        (r"\tanh", "<mrow><mi>tanh</mi></mrow>"),  # applied to nothing: no U+2061
        (r"\arg z", '<mi>arg</mi><mo lspace="0" rspace="0.1667em">\u2061</mo><mi>z</mi>'),
        (r"\arg\min_x", '<mi>arg</mi><mo lspace="0" rspace="0.1667em">\u2061</mo><msub><mi>min</mi>'),
        (r"a \bmod b", "<mi>a</mi><mo>mod</mo><mi>b</mi>"),  # an operator, not a function
    ],
)
def test_function_application_in_each_form(latex, expected):
    from jaxcourse.output.mathml import to_mathml

    assert expected in to_mathml(latex, block=False)


@pytest.mark.parametrize(
    "latex",
    [
        r"\style{position:fixed;inset:0;background:#fff url(https://evil.example/bg.png)}{x}",
        r"\href{https://evil.example/}{x}",
        r"\class{admonition warning}{x}",
    ],
)
def test_formulas_from_prose_keep_no_incoming_style_link_or_class(latex):
    """Prose is input too: a lesson's $...$ goes through the same cleaner as a LaTeX output."""
    import xml.etree.ElementTree as ET

    from jaxcourse.output.mathml import to_mathml

    tree = ET.fromstring(to_mathml(latex, block=True))
    assert "".join(tree.itertext()) == "x"
    for element in tree.iter():
        assert not {"style", "href", "class"} & set(element.attrib), (latex, element.tag, element.attrib)

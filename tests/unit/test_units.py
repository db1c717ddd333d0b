"""The pure parts of the course extension, tested without building a site: fast, and exact.

Records read from executed notebooks, stamps, the reader's cell lines, change
diffing with varying values masked, sanitizing, and how a dead kernel's trail
is read.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import types
from pathlib import Path

import nbformat
import pytest
from docutils import nodes
from jaxcourse.execution import changes, parser, record
from jaxcourse.output import render, sanitize
from jaxcourse.published import figures, stamps
from jaxcourse.runtime import RECORD_MIME
from jaxcourse.source import pagesource, reader
from tiny import STAMP

# --- sanitizing -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "markup",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<iframe src='https://evil.example'></iframe>",
        "<a href='javascript:alert(1)'>x</a>",
        "<a href='java\tscript:alert(1)'>x</a>",
        "<a href='//evil.example/x'>x</a>",
        "<a href='/\\evil.example/x'>x</a>",
        "<img src='https://evil.example/p.png'>",
        "<div style='background: url(https://evil.example/p.png)'>x</div>",
        "<form action='/x'><input name=a></form>",
        "<svg><script>alert(1)</script></svg>",
        "<math><mtext><script>alert(1)</script></mtext></math>",
        "<object data='x.swf'></object><embed src='x.swf'>",
        "<meta http-equiv='refresh' content='0;url=https://evil.example'>",
        "<link rel='stylesheet' href='https://evil.example/x.css'>",
        "<base href='https://evil.example/'>",
    ],
)
def test_sanitized_html_has_no_script_no_handler_and_no_address_off_the_site(markup):
    clean = sanitize.html(markup)
    for forbidden in ("<script", "onerror", "<iframe", "javascript:", "evil.example", "<form", "<input", "url("):
        assert forbidden not in clean.lower(), (markup, clean)
    for tag in ("<object", "<embed", "<meta", "<link", "<base", "<svg", "<math"):
        assert tag not in clean.lower(), (markup, clean)


def test_sanitized_html_keeps_what_libraries_emit():
    rich = '<pre style="white-space:pre;line-height:normal"><span style="color: #800080">x</span></pre>'
    assert (
        sanitize.html(rich)
        == '<pre style="white-space:pre;line-height:normal"><span style="color:#800080">x</span></pre>'
    )
    table = (
        '<table border="1" class="dataframe"><thead><tr><th>a</th></tr></thead>'
        "<tbody><tr><td>1</td></tr></tbody></table>"
    )
    assert sanitize.html(table) == table
    assert sanitize.html('<a href="#part">on this page</a>').startswith('<a href="#part"')
    assert sanitize.html('<img src="data:image/png;base64,AAAA" alt="inline">') == (
        '<img src="data:image/png;base64,AAAA" alt="inline">'
    )


def test_markdown_renders_without_raw_html_or_directives():
    html = sanitize.markdown("# Title\n\n<b>raw</b> and `code`\n\n```{danger}\nx\n```")
    assert "<h1>Title</h1>" in html and "&lt;b&gt;raw&lt;/b&gt;" in html and "<code>code</code>" in html
    assert "<pre><code>x\n</code></pre>" in html and "admonition" not in html  # a code block, not a directive


# --- stamps -----------------------------------------------------------------------------------------------------


def test_one_time_format_for_readers_and_iso_for_data():
    assert stamps.stamp_time(STAMP) == "2026-12-01 19:22:07 UTC"
    assert stamps.stamp_iso(STAMP) == "2026-12-01T19:22:07+00:00"


def test_the_stamp_names_the_backend_once():
    text = stamps.stamp_text(STAMP, fresh=True)
    assert text == (
        "Executed by this build on CPU at 2026-12-01 19:22:07 UTC · 8 simulated CPU devices · "
        "JAX 0.10.2 · jaxlib 0.10.2 · Python 3.11.7"
    )
    assert stamps.stamp_text({**STAMP, "simulated_devices": False}, fresh=False).startswith(
        "Recorded on CPU at 2026-12-01 19:22:07 UTC, reused by this build from the execution cache"
    )


def test_a_stamp_from_before_the_build_was_reused(monkeypatch):
    started = datetime.datetime.fromisoformat(STAMP["started"]).timestamp()
    monkeypatch.setitem(stamps._build, "started", started + 1)
    assert not stamps.ran_in_this_build(STAMP)
    monkeypatch.setitem(stamps._build, "started", started - 1)
    assert stamps.ran_in_this_build(STAMP)


# --- the reader's lines ------------------------------------------------------------------------------------------

PAGE = """---
kernelspec: {name: python3, display_name: Python 3}
---
# Title

```{code-cell} ipython3
:tags: [raises-exception]

x = 1
y = 2
```
Text right after the fence.


Text after two blank lines.
:::{code-cell} ipython3
not a cell for myst-nb
:::

```{code-cell} ipython3
z = 3
```
"""


def test_the_reader_records_each_cells_fence_and_first_line_of_code():
    from myst_nb.core.read import read_myst_markdown_notebook

    notebook = read_myst_markdown_notebook(PAGE, add_source_map=True)
    lines = reader.code_cell_lines(notebook, PAGE.splitlines())
    assert sorted(value["line"] for value in lines.values()) == [6, 20]
    assert sorted(value["code_line"] for value in lines.values()) == [9, 21]


def test_markdown_cells_are_numbered_from_their_first_line_of_text():
    from myst_nb.core.read import read_myst_markdown_notebook

    notebook = read_myst_markdown_notebook(PAGE, add_source_map=True)
    reader.even_markdown_lines(notebook, PAGE.splitlines())
    markdown = [index for index, cell in enumerate(notebook.cells) if cell.cell_type == "markdown"]
    # myst-nb reports a markdown cell's first line at its source map entry + 2 (1-based).
    first_lines = [notebook.metadata["source_map"][index] + 2 for index in markdown]
    assert first_lines == [4, 12]  # "# Title"; the text right after the first cell's fence


def test_the_course_and_myst_nb_must_agree_on_the_cells():
    from jaxcourse.source import lessonsource

    source = lessonsource.parse(PAGE)
    assert [fence.line for fence in source.code_cells()] == [6, 20]
    assert [fence.line for fence in source.unexecuted_code_cells()] == [16]
    assert reader.pairing_problems(source, {1: {"line": 6}, 3: {"line": 20}}) == []
    problems = reader.pairing_problems(source, {1: {"line": 6}, 3: {"line": 16}})
    assert [problem.line for problem in problems] == [16, 20]


# --- records -----------------------------------------------------------------------------------------------------


def executed_notebook() -> nbformat.NotebookNode:
    v4 = nbformat.v4

    def record_output(item):
        return v4.new_output("display_data", data={RECORD_MIME: item})

    setup = v4.new_code_cell("setup", metadata={"tags": ["remove-cell", reader.SETUP_TAG]}, execution_count=1)
    setup.outputs = [record_output({"kind": "stamp", "page": "p", **{k: STAMP[k] for k in ("started", "jax")}})]
    first = v4.new_code_cell("x = 1\ny = 1 / 0", execution_count=2)
    first.outputs = [
        record_output({"kind": "error", "ename": "ZeroDivisionError", "line": 2}),
        v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=[]),
    ]
    quiet = v4.new_code_cell("z = 1", metadata={"tags": ["raises-exception"], "raises": "KeyError"}, execution_count=3)
    verdict = v4.new_code_cell("finish", metadata={"tags": ["remove-cell", reader.VERDICT_TAG]}, execution_count=4)
    verdict.outputs = [record_output({"kind": "verdict", "page": "p", "figures": [], "backend": "cpu"})]
    notebook = v4.new_notebook(cells=[setup, v4.new_markdown_cell("# T"), first, quiet, verdict])
    notebook.metadata[reader.METADATA_KEY] = {
        "cells": {"2": {"line": 10, "code_line": 11}, "3": {"line": 20, "code_line": 21}}
    }
    return notebook


def test_a_record_locates_the_failing_statement_and_the_quiet_raiser():
    run = render.ExecutedRun()
    run.notebook = executed_notebook()
    kernel = record.collect(run)
    assert [cell.line for cell in kernel.cells] == [10, 20]
    error = kernel.unexpected_error
    assert (error.ename, error.summary, kernel.cell(error.cell_index).line_of(error.line_in_cell)) == (
        "ZeroDivisionError",
        "ZeroDivisionError: division by zero",
        12,
    )
    ((index, message),) = kernel.unmet_raises
    assert index == 3 and message.startswith("expected KeyError: this cell has ':raises: KeyError' but ran without")
    assert kernel.stamp["backend"] == "cpu"  # the devices come with the verdict
    assert kernel.transcript[-1] == "PASS: p\n"


def test_a_promised_error_is_met_by_its_class_or_a_subclass_and_by_nothing_else():
    def error(ename, *bases):
        return record.CellError(0, ename, f"{ename}: boom", 1, True, [ename, *bases, "Exception"])

    assert record.unmet_raises("LookupError", [error("KeyError", "LookupError")]) is None
    assert record.unmet_raises("KeyError", [error("KeyError", "LookupError")]) is None
    wrong = record.unmet_raises("TypeError", [error("KeyError")])
    assert wrong == "expected TypeError, but this cell raised KeyError: boom"
    # The standard tag alone promises nothing: a tagged cell that does not raise is fine.
    run = render.ExecutedRun()
    run.notebook = executed_notebook()
    run.notebook.cells[3].metadata.pop("raises")
    assert record.collect(run).unmet_raises == []


def test_a_display_records_its_text_form():
    display = nbformat.v4.new_output("display_data", data={"text/plain": "<Figure>", "image/png": "AAAA"})
    assert render.shown_text(display) == "<Figure>\n"
    assert (
        render.shown_text(nbformat.v4.new_output("display_data", data={"image/png": "AAAA"})) == "<image/png output>\n"
    )
    assert render.output_size(nbformat.v4.new_output("stream", name="stdout", text="é" * 10)) == 20


def test_a_stream_names_installed_code_and_cells_by_placeholder_and_keeps_paths_a_page_chose():
    """A warning names the file that issued it (orbax's, under this machine's site-packages); a page's own
    checkpoint folder under /tmp is what its code chose, and reads as written."""
    import site
    import tempfile

    installed = site.getsitepackages()[0]
    cell_file = f"{tempfile.gettempdir()}/ipykernel_4242/123456.py"
    text = f"{installed}/orbax/handlers.py:1027: UserWarning: x\n{cell_file}:3: UserWarning: y\nsaved /tmp/ckpt/0\n"
    assert render.shown_stream(text) == (
        "<site-packages>/orbax/handlers.py:1027: UserWarning: x\n<cell>:3: UserWarning: y\nsaved /tmp/ckpt/0\n"
    )


# --- change diffing ----------------------------------------------------------------------------------------------


def page(*cells, stamp=None):
    return {"source": "lessons/p.md", "stamp": stamp or {"jax": "0.10.2"}, "cells": list(cells), "figures": {}}


def cell(shown, line=5, code="c1", varies=None, tags=()):
    entry = {"line": line, "code": code, "tags": list(tags), "shown": shown}
    if varies is not None:
        entry["varies"] = varies
    return entry


def test_only_the_declared_values_vary():
    pattern = ["(?<=seconds: ).*"]
    old = page(cell("seconds: 0.1\nsteady\n", varies=pattern))
    same = page(cell("seconds: 0.2\nsteady\n", varies=pattern))
    report = changes.compare({"p": old}, {"p": same}, "earlier")
    assert report.pages[0].status == "unchanged" and report.pages[0].varying == 1
    moved = page(cell("seconds: 0.3\nsteady, moved\n", varies=pattern))
    report = changes.compare({"p": old}, {"p": moved}, "earlier")
    (change,) = report.pages[0].outputs
    assert "-steady" in change.diff and "+steady, moved" in change.diff and " seconds: <varies>" in change.diff


def test_an_earlier_site_of_format_1_masks_the_numbers_of_its_tagged_cells(tmp_path):
    path = tmp_path / "recordings.json"
    path.write_text('{"format": 1, "lessons": {"p": {"cells": []}}}', encoding="utf-8")
    assert changes.load_recordings(tmp_path) == {"p": {"cells": []}}
    old = page(cell("took 0.5 s\n", tags=["varies"]))
    new = page(cell("took 0.7 s\n", varies=["[0-9.]+(?= s)"]))
    assert changes.compare({"p": old}, {"p": new}, "earlier").pages[0].status == "unchanged"


def test_a_pattern_must_be_valid_and_match_what_the_cell_showed():
    assert changes.pattern_problem(["[0-9.]+ s"], "took 0.5 s") is None
    assert "not a regular expression" in changes.pattern_problem(["(unclosed"], "x")
    assert "matches nothing" in changes.pattern_problem(["seconds"], "took 0.5 s")
    assert changes.varying_patterns({"varies": "a"}, []) == ["a"]
    assert changes.varying_patterns({}, ["varies"]) == [changes.NUMBER_PATTERN]


# --- a dead kernel's trail ---------------------------------------------------------------------------------------

TRAIL = """cell 1111111111111111111111111111111111111111
cell 2222222222222222222222222222222222222222
Fatal Python error: Segmentation fault

Current thread 0x00007f (most recent call first):
  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at
  File "/tmp/ipykernel_42/777.py", line 5 in crash
  File "/tmp/ipykernel_42/777.py", line 8 in <module>
  File "/site-packages/IPython/core/interactiveshell.py", line 3577 in run_code
"""


def test_a_dead_kernels_trail_names_its_cell_and_statement(tmp_path):
    trail = tmp_path / "kernel-42.crash"
    trail.write_text(TRAIL, encoding="utf-8")
    assert parser.read_crash_file(trail) == ("2" * 40, 5)
    assert parser.read_crash_file(tmp_path / "missing") == (None, None)
    assert parser.running_line("no frames at all") is None


def test_how_a_kernel_ended_is_said_plainly():
    assert "exited with status 1" in parser.ending(1)
    assert "SIGSEGV" in parser.ending(-11)
    assert "out-of-memory" in parser.ending(-9)
    assert parser.ending(None) == "it stopped"


# --- figures -----------------------------------------------------------------------------------------------------


def test_a_figure_file_is_found_before_and_after_sphinx_rewrites_its_uri(tmp_path):
    """Sphinx's image collector rewrites the uri relative to the source folder and adds candidates."""
    env = types.SimpleNamespace(relfn2path=lambda uri, docname: (None, str(tmp_path / "lessons" / uri)))
    app = types.SimpleNamespace(srcdir=str(tmp_path), env=env)
    before = nodes.image(uri="../figures/a.svg")
    after = nodes.image(uri="figures/a.svg", candidates={"*": "figures/a.svg"})
    expected = Path(tmp_path, "figures", "a.svg").resolve()
    assert figures.figure_file(app, "lessons/x", before) == expected
    assert figures.figure_file(app, "lessons/x", after) == expected


# --- the kernel spec and scheduling ----------------------------------------------------------------------------


def test_a_build_checks_the_kernel_spec_and_never_writes_it(tmp_path, monkeypatch):
    from jaxcourse import extension
    from jaxcourse.runtime import kernel
    from jupyter_client.kernelspec import KernelSpecManager
    from sphinx.errors import ConfigError

    def refuse(*args, **kwargs):
        raise AssertionError("a build must not install the kernel spec")

    monkeypatch.setattr(KernelSpecManager, "install_kernel_spec", refuse)
    monkeypatch.setenv(kernel.STDERR_DIR_VARIABLE, "")  # restored afterwards: configure_notebooks sets it
    app = types.SimpleNamespace(doctreedir=str(tmp_path))
    config = types.SimpleNamespace(
        nb_kernel_rgx_aliases={}, nb_custom_formats={}, myst_enable_extensions=["dollarmath"]
    )
    extension.configure_notebooks(app, config)  # this environment's spec is current (nox installed it)
    assert config.nb_render_plugin == "jaxcourse" and ".md" in config.nb_custom_formats
    assert "is not installed" in kernel.installed_problem(prefix=str(tmp_path))
    monkeypatch.setattr(kernel, "installed_problem", lambda: "the course kernel spec is out of date")
    with pytest.raises(ConfigError, match="out of date"):
        extension.configure_notebooks(app, config)


def test_every_executed_page_costs_its_run_time_and_prose_costs_nothing(tmp_path):
    from jaxcourse.execution import scheduling

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notebook.md").write_text(
        "---\njupytext: {text_representation: {format_name: myst}}\nkernelspec: {name: python3}\n---\n# N\n"
    )
    (tmp_path / "docs" / "prose.md").write_text("# Prose\n")
    recorded = types.SimpleNamespace(runtime=7.5)
    domain = types.SimpleNamespace(pages={"docs/recorded": recorded})
    env = types.SimpleNamespace(get_domain=lambda name: domain, doc2path=lambda docname: tmp_path / f"{docname}.md")
    app = types.SimpleNamespace(config=types.SimpleNamespace(course_lessons_dir="lessons"))
    assert scheduling.expected_seconds(app, env, "docs/recorded", {}) == 7.5
    assert scheduling.expected_seconds(app, env, "docs/notebook", {"docs/notebook": 3.0}) == 3.0
    assert scheduling.expected_seconds(app, env, "docs/notebook", {}) > 0
    assert scheduling.expected_seconds(app, env, "docs/prose", {}) == 0.0


# --- porting a page written for the JAX docs ---------------------------------------------------------------------

JAX_PAGE = """---
kernelspec:
  name: python3
---
(here)=
# A page

See {ref}`here`, {ref}`there`, {ref}`the other page <elsewhere-label>`, {term}`tracers <Tracer>`,
{doc}`custom_pytrees`, {func}`jax.jit`, [Tracing](tracing-tutorial) and [this page](here).
"""


def test_a_ported_page_keeps_its_text_and_only_loses_references_that_cannot_resolve():
    from jaxcourse.tools import port

    ported = port.port_text(JAX_PAGE, pagesource.labels(JAX_PAGE), set(), image_alt="A plot.")
    assert ported.startswith('---\norphan: true\nmystnb:\n  render_image_options:\n    alt: "A plot."\nkernelspec:')
    assert "See {ref}`here`, there, the other page, tracers,\ncustom pytrees, {func}`jax.jit`, Tracing and " in ported
    assert "[this page](here)" in ported  # a label this page defines still resolves
    assert ported.split("\n---\n", 1)[1] == port.port_text(JAX_PAGE, {"here"}, set()).split("\n---\n", 1)[1]


def test_a_label_that_a_directive_names_is_a_label_of_the_page():
    """As myst-nb's glue guide labels a figure (':name: "fig-boot"' under a {glue:figure}) and an equation."""
    from jaxcourse.tools import port

    page = (
        '```{glue:figure} boot_fig\n:figwidth: 300px\n:name: "fig-boot"\n\nA caption.\n```\n\n'
        ":::{figure} plot.png\n:name: plot-label\n:::\n\n"
        "```{code-cell}\n:name: a-cell\nprint(1)\n```\n\n"
        "```{glue:math} sym_eq\n:label: eq-sym\n```\n\n$$ y = 2x $$ (eq-line)\n\n"
        "See {ref}`the figure <fig-boot>`, {ref}`plot-label` and {ref}`a-cell`.\n"
    )
    assert pagesource.labels(page) == {"fig-boot", "plot-label", "eq-sym", "eq-line"}
    ported = port.port_text(page, pagesource.labels(page), set())
    assert "See {ref}`the figure <fig-boot>`, {ref}`plot-label` and a cell." in ported


def test_sphinx_design_s_layout_goes_and_what_it_holds_stays():
    """As myst-nb's own guide sets two examples side by side: '::::{grid} 2' of ':::{grid-item-card} Title'."""
    from jaxcourse.tools import port

    page = (
        "# Basics\n\n::::{grid} 2\n:gutter: 1\n\n:::{grid-item-card} RestructuredText\n\n```\n.. _target:\n:::\n```\n"
        ":::\n\n:::{grid-item-card} MyST Markdown\nSee {doc}`elsewhere`.\n:::\n::::\n\n"
        "````{tab-set}\n```{tab-item} pip\n:sync: pip\npip install x\n```\n````\n\n"
        "```{dropdown} More\n:open:\nHidden words.\n```\n\nAfter {doc}`gone`.\n"
    )
    ported = port.port_text(page, set(), set()).split("---\n", 2)[2]
    assert ported == (
        "# Basics\n\n\n**RestructuredText**\n\n\n```\n.. _target:\n:::\n```\n\n**MyST Markdown**\n\nSee elsewhere.\n\n"
        "**pip**\n\npip install x\n\n```{admonition} More\n:class: dropdown\nHidden words.\n```\n\nAfter gone.\n"
    )
    porter = port.Porter(
        port.Page("page", Path("page.md"), Path("/nonexistent/page.md")), port.Site(set(), set()), Path(".")
    )
    porter.port(page, port._line)
    said = [f"{change.where}: {change.what}" for change in porter.page.changes]
    assert said == [
        "line 3: {grid} '2' (sphinx-design's, not loaded here) went; what it holds stays",
        "line 6: {grid-item-card} 'RestructuredText' (sphinx-design's, not loaded here) became its title in bold, "
        "then what it holds",
        "line 14: {grid-item-card} 'MyST Markdown' (sphinx-design's, not loaded here) became its title in bold, "
        "then what it holds",
        "line 19: {tab-set} (sphinx-design's, not loaded here) went; what it holds stays",
        "line 20: {tab-item} 'pip' (sphinx-design's, not loaded here) became its title in bold, then what it holds",
        "line 26: {dropdown} 'More' (sphinx-design's, not loaded here) became a collapsed {admonition}",
        "line 15: {doc}`elsewhere` became plain text 'elsewhere' (not on this site)",  # lines as in the source
        "line 31: {doc}`gone` became plain text 'gone' (not on this site)",
    ]


def test_a_jupyter_book_lecture_brings_its_includes_and_loses_its_raw_html_and_inventory_links(tmp_path):
    """As QuantEcon's lectures write: a {raw} html banner, an {include} of _admonition/gpu.md, {cite}, inv: links."""
    from jaxcourse.tools import port

    source = tmp_path / "lectures"
    (source / "_admonition").mkdir(parents=True)
    (source / "_admonition" / "gpu.md").write_text("```{admonition} GPU\nSee {doc}`elsewhere`.\n```\n")
    (source / "lecture.md").write_text(
        "# A lecture\n\n```{raw} html\n<div id='header' align='right'>\n        <a href='https://qe.example/'>\n"
        "                <img src='https://qe.example/logo.svg' alt='The logo'>\n        </a>\n</div>\n```\n\n"
        "```{include} _admonition/gpu.md\n```\n\n```{include} ../outside.md\n```\n\n"
        "See [the images guide](inv:myst#syntax/images) and [](inv:myst:std:label#syntax/math).\n"
        "As in {cite}`Are08`, and {cite:p}`Are08,Hop92`. More in {doc}`jax:automatic_differentiation`.\n",
        encoding="utf-8",
    )
    (tmp_path / "outside.md").write_text("Outside.\n", encoding="utf-8")
    (page,) = port.port(source, tmp_path / "site" / "docs" / "ported", ["lecture"])
    ported = page.dest.read_text(encoding="utf-8").split("---\n", 2)[2]
    assert "<" not in ported and "{raw}" not in ported
    assert "\n[image: The logo](https://qe.example/logo.svg)\n" in ported  # no longer indented: not a code block
    assert (
        "See the images guide and syntax/math.\nAs in [Are08], and [Are08, Hop92]. More in automatic differentiation.\n"
        in ported
    )
    included = page.dest.parent / "_admonition" / "gpu.md"
    assert included.read_text(encoding="utf-8") == "```{admonition} GPU\nSee elsewhere.\n```\n"
    assert not (tmp_path / "site" / "docs" / "outside.md").exists()
    said = [f"{change.where}: {change.what}" for change in page.changes]
    assert "line 3: the {raw} html directive went; its HTML is ported as HTML" in said
    assert "line 11: ported _admonition/gpu.md, which the page includes, to the same place beside it" in said
    assert "_admonition/gpu.md, line 2: {doc}`elsewhere` became plain text 'elsewhere' (not on this site)" in said
    assert "line 14: left {include} ../outside.md, outside the page's folder: bring it by hand" in said


def test_a_directive_s_closing_fence_opens_no_code_block():
    """As the JAX docs write it: a ```{note}, then prose with raw HTML, then a code cell the port leaves alone."""
    from jaxcourse.tools import port

    page = (
        "# A page\n\n```{note}\nSee {doc}`elsewhere`.\n```\n\n<center>\n\n![A chart](https://x.example/c.png)\n\n"
        "</center>\n\n```{code-cell}\nprint('[a link](somewhere) and <b>bold</b>')\n```\n\n"
        "````{tip}\n```python\n[kept](as-is)\n```\n{doc}`inside`\n````\n\nAfter {doc}`the tip <other>`.\n"
    )
    ported = port.port_text(page, set(), set())
    assert "See elsewhere." in ported  # a directive's body is MyST: ported
    assert "<center>" not in ported and "![A chart]" not in ported  # the prose after the note is ported too
    assert "print('[a link](somewhere) and <b>bold</b>')" in ported  # a code cell is left exactly as written
    assert "[kept](as-is)" in ported and "\ninside\n" in ported and "After the tip." in ported


def test_a_tag_between_words_leaves_them_apart():
    """As the JAX docs' GPU tables write a cell on two lines: '8 (F32)<br>16 (BF16)'."""
    from jaxcourse.tools import port

    page = "| 8 (F32)<br>16 (BF16) | 16 (F32)<br/>32 |\nrunning.<br /><br />\n"
    page += "a<p>b and <b>bold</b><br>\nx <span>y</span>z\n"
    ported = port.port_text(page, set(), set()).split("---\n", 2)[2]
    assert ported == "| 8 (F32) 16 (BF16) | 16 (F32) 32 |\nrunning.\na b and **bold**\nx yz\n"


def test_a_tag_that_wraps_onto_the_next_line_is_ported_like_one_on_a_single_line():
    """As new_docs/201/profiling.md writes it: 'click "CAPTURE".<br' and then '/><br />' on the next line."""
    from jaxcourse.tools import port

    page = 'Enter a duration, and click "CAPTURE".<br\n   /><br />\n\n1. Then <a\nhref="x.md">run it</a> again.\n'
    ported = port.port_text(page, set(), set())
    assert ported == '---\norphan: true\n---\nEnter a duration, and click "CAPTURE".\n\n\n1. Then run it again.\n'


def test_a_link_whose_words_wrap_onto_the_next_line_is_ported_like_one_on_a_single_line():
    """As device_memory_profiling.md writes it: '[XProf' at the end of a line, 'profiling](xprof-profiling)' next."""
    from jaxcourse.tools import port

    page = "```{note}\nUse [XProf\nprofiling](xprof-profiling) or [the\nguide](guide.md).\n```\n[kept\nhere](here)\n"
    ported = port.port_text(page, {"here"}, set()).split("---\n", 2)[2]
    assert ported == "```{note}\nUse XProf\nprofiling or the\nguide.\n```\n[kept\nhere](here)\n"
    page = port.Page("page", Path("page.md"), Path("/nonexistent/page.md"))
    wrapped = "See [XProf\n  profiling](xprof).\n[![Open in\nColab](https://x.example/b.svg)](https://x.example)\n"
    wrapped += "\n![A diagram (the input\nis passed on\nto a layer.)](https://x.example/d.png)\n"
    ported = port.Porter(page, port.Site(set(), set()), Path(".")).port(wrapped, port._line)
    assert [f"{change.where}: {change.what}" for change in page.changes] == [
        "line 3: removed the badge 'Open in Colab' linking https://x.example",
        "line 1: [XProf profiling](xprof) became plain text 'XProf profiling' (not on this site)",
        "line 6: linked https://x.example/d.png instead of showing it (a page loads nothing from outside)",
    ]
    assert "![" not in ported


def test_a_role_whose_body_wraps_onto_the_next_line_is_ported_like_one_on_a_single_line():
    """As QuantEcon's jax_intro writes it: '{ref}`a Monte' at the end of a line, 'Carlo example <numba_ex4>`.' next."""
    from jaxcourse.tools import port

    page = "Try {ref}`a Monte\nCarlo example <numba_ex4>` and {ref}`this\none <kept>`, with `code` between.\n"
    ported = port.port_text(page, {"kept"}, set()).split("---\n", 2)[2]
    assert ported == "Try a Monte\nCarlo example and {ref}`this\none <kept>`, with `code` between.\n"
    page = port.Page("page", Path("page.md"), Path("/nonexistent/page.md"))
    port.Porter(page, port.Site(set(), set()), Path(".")).port("{ref}`a Monte\nCarlo example <x>`\n", port._line)
    assert [change.what for change in page.changes] == [
        "{ref}`a Monte Carlo example <x>` became plain text 'a Monte Carlo example' (not on this site)"
    ]


def test_a_toctree_keeps_the_pages_ported_with_it_and_loses_the_others(tmp_path):
    """As advanced_autodiff.md lists its pages: an entry for a page not ported would fail the build."""
    from jaxcourse.tools import port

    source = tmp_path / "docs"
    (source / "notebooks").mkdir(parents=True)
    for name in ("index", "higher-order", "complex", "notebooks/rules", "notebooks/other"):
        (source / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
    (source / "index.md").write_text(
        "# Index\n\n```{toctree}\n:maxdepth: 1\n\nhigher-order\nThe complex page <complex>\n/notebooks/rules\n"
        "notebooks/*\nhttps://example.org\n```\n\n```{toctree}\n:glob:\n\nnotebooks/o*\n```\nAfter.\n",
        encoding="utf-8",
    )
    (index, *_) = port.port(source, tmp_path / "ported", ["index", "higher-order", "notebooks/rules"])
    assert index.dest.read_text(encoding="utf-8") == (
        "---\norphan: true\n---\n# Index\n\n```{toctree}\n:maxdepth: 1\n\nhigher-order\n\nnotebooks/rules\n"
        "notebooks/*\nhttps://example.org\n```\n\n```{toctree}\n:glob:\n\n\n```\nAfter.\n"
    )
    notes = [f"{change.where}: {change.what}" for change in index.changes]
    assert notes == [
        "line 7: the toctree entry 'The complex page <complex>' went (not on this site)",
        "line 16: the toctree entry 'notebooks/o*' went (not on this site)",
    ]


def test_a_page_ported_in_an_earlier_run_keeps_the_links_to_it(tmp_path):
    """Ported one run at a time, NumPy's MNIST tutorial kept its {doc} link to the SVD tutorial ported before it."""
    from jaxcourse.tools import port

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "svd.md").write_text("(svd-intro)=\n# SVD\n", encoding="utf-8")
    (tmp_path / "docs" / "ma.md").write_text("# Masked arrays\n", encoding="utf-8")
    page = "# MNIST\n\nSee {doc}`svd`, {ref}`its start <svd-intro>` and {doc}`ma`.\n"
    (tmp_path / "docs" / "mnist.md").write_text(page, encoding="utf-8")
    port.port(tmp_path / "docs", tmp_path / "ported", ["svd"])
    (mnist,) = port.port(tmp_path / "docs", tmp_path / "ported", ["mnist"])
    assert mnist.dest.read_text(encoding="utf-8").endswith(
        "See {doc}`svd`, {ref}`its start <svd-intro>` and Masked arrays.\n"
    )


def test_a_reference_to_a_page_not_ported_reads_as_the_title_the_source_site_shows(tmp_path):
    """As the JAX docs write them: references by label, by page and by name; figures in backtick fences."""
    from jaxcourse.tools import port

    source = tmp_path / "docs"
    (source / "guide").mkdir(parents=True)
    (source / "_static").mkdir()
    (source / "_static" / "pic.png").write_bytes(b"png")
    (source / "jaxpr.md").write_text("# JAX internals: the jaxpr language\n", encoding="utf-8")
    (source / "tutorials.rst").write_text(".. _draft:\n\nDraft tutorials\n===============\n", encoding="utf-8")
    ruled = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("---\n# A notebook\n\n---\n")])
    nbformat.write(ruled, source / "nb.ipynb")  # a rule atop its first cell is no front matter
    (source / "other.md").write_text(
        "---\ntitle: ignored\n---\n(other-page)=\n# The `other` page\n\n```python\n# a comment, not a heading\n```\n\n"
        "(async)=\n\n## Asynchronous dispatch\n\n(loose)=\nA paragraph, so this label names no section.\n\n## Later\n",
        encoding="utf-8",
    )
    (source / "guide" / "page.md").write_text(
        "# Guide\n\nSee {ref}`async`, {ref}`draft`, {ref}`loose`, {doc}`../nb`, {term}`jaxpr` and [](../other.md).\n"
        "Read [Distributed arrays and\nparallelization][arrays] and [the web][web].\n"
        "Also [](#async), [its words](#async) and [the top](#guide).\n\n"
        "```{figure} ../_static/pic.png\n:alt: A picture.\n```\n\n[arrays]: ../other.md\n[web]: https://example.org\n",
        encoding="utf-8",
    )
    (page,) = port.port(source, tmp_path / "ported", ["guide/page"])
    assert page.dest.read_text(encoding="utf-8") == (
        "---\norphan: true\n---\n# Guide\n\n"
        "See Asynchronous dispatch, Draft tutorials, loose, A notebook, jaxpr and The other page.\n"
        "Read Distributed arrays and\nparallelization and [the web][web].\n"
        "Also Asynchronous dispatch, its words and [the top](#guide).\n\n"
        "```{figure} images/pic.png\n:alt: A picture.\n```\n\n\n[web]: https://example.org\n"
    )
    assert (tmp_path / "ported" / "guide" / "images" / "pic.png").read_bytes() == b"png"
    notes = [f"{change.where}: {change.what}" for change in page.changes]
    assert (
        "line 4: [Distributed arrays and parallelization][arrays] became plain text "
        "'Distributed arrays and parallelization' (not on this site)" in notes
    )


def test_reference_style_images_and_badges_are_ported_as_inline_ones_are(tmp_path):
    """As MyST-Parser's intro writes its badges: '[![PyPI][pypi-badge]][pypi-link]', the addresses defined below."""
    from jaxcourse.tools import port

    (tmp_path / "docs" / "img").mkdir(parents=True)
    (tmp_path / "docs" / "img" / "fish.png").write_bytes(b"png")
    (tmp_path / "docs" / "intro.md").write_text(
        "# Intro\n\n[![PyPI][pypi-badge]][pypi-link]\n![A fish][fish] and ![a chart][]\n\n"
        "[pypi-badge]: https://img.shields.io/pypi/v/myst-parser.svg\n[pypi-link]: https://pypi.org/project/myst-parser\n"
        "[fish]: img/fish.png\n[a chart]: https://x.example/chart.png\n",
        encoding="utf-8",
    )
    (page,) = port.port(tmp_path / "docs", tmp_path / "ported", ["intro"])
    ported = page.dest.read_text(encoding="utf-8")
    assert "![A fish](images/fish.png) and [image: a chart](https://x.example/chart.png)\n" in ported
    assert (tmp_path / "ported" / "images" / "fish.png").read_bytes() == b"png"
    assert [f"{change.where}: {change.what}" for change in page.changes][0] == (
        "line 3: removed the badge 'PyPI' linking https://pypi.org/project/myst-parser"
    )


def test_a_link_whose_words_hold_code_is_ported_and_keeps_its_code():
    """As MyST-Parser's docs link '[`app.add_lexer` method](inv:sphinx#...)' and the JAX docs '[`jax.jit`](...)'."""
    from jaxcourse.tools import port

    page = "The [`app.add_lexer` method](inv:sphinx#*.Sphinx.add_lexer), [`jax.jit`](jit-compilation), "
    page += "[`kept`](kept.md) and `[code](not-a-link)`.\n"
    ported = port.port_text(page, set(), {"kept"}).split("---\n", 2)[2]
    assert ported == "The `app.add_lexer` method, `jax.jit`, [`kept`](kept) and `[code](not-a-link)`.\n"


def test_the_jax_docs_issue_role_becomes_the_link_it_draws_there():
    """The JAX docs' JEPs cite issues with {jax-issue}, a role of their own extension that this site does not load."""
    from jaxcourse.tools import port

    page = port.Page("page", Path("page.md"), Path("/nonexistent/page.md"))
    ported = port.Porter(page, port.Site(set(), set()), Path(".")).port("See {jax-issue}`#22746`.\n", port._line)
    assert ported == "See [#22746](https://github.com/jax-ml/jax/issues/22746).\n"
    assert [change.kind for change in page.changes] == ["role"]


def test_markup_shown_in_a_code_block_is_left_as_written():
    """As MyST-Parser's cross-referencing page shows reference links: in a ```md block, an example, not a link."""
    from jaxcourse.tools import port

    example = "[Explicit text][label]\n[![badge](https://x.example/b.svg)](https://x.example)\n\n[label]: destination\n"
    page = (
        f"```md\n{example}```\n\n~~~{{note}}\n[Words][label] [![badge](https://x.example/b.svg)](https://x.example)\n"
    )
    ported = port.port_text(page + "~~~\n\n[label]: destination\n", set(), set()).split("---\n", 2)[2]
    assert ported == f"```md\n{example}```\n\n~~~{{note}}\nWords \n~~~\n\n\n"


def test_preformatted_text_objects_and_inline_images_are_ported_as_what_a_reader_saw(tmp_path):
    """As pallas/pipelining (<pre>), pallas/gpu/reference (<object>) and notebooks/shard_map (data: images)."""
    import base64

    from jaxcourse.tools import port

    source = tmp_path / "docs"
    (source / "guide").mkdir(parents=True)
    (source / "_static").mkdir()
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><rect width="9" height="9"/>{}</svg>'
    (source / "_static" / "scripted.svg").write_text(svg.format("<script>draw()</script>"), encoding="utf-8")
    (source / "_static" / "plain.svg").write_text(svg.format(""), encoding="utf-8")
    dot = base64.b64encode(b"\x89PNG a dot").decode()
    (source / "guide" / "page.md").write_text(
        "# Guide\n\n<pre>\nfor i in range(N):\n  # Itr 1\n  x = a &lt; <b>b</b>\n</pre>\nAfter.\n\n<center>\n"
        '<object type="image/svg+xml" data="../_static/scripted.svg">\n  Scripting is off: this shows tiles.\n'
        '</object>\n</center>\n\n<object data="../_static/plain.svg">A square.</object>\n\n'
        f'<img alt="A dot." src="data:image/png;base64,{dot}">\n\n```html\n<pre>kept</pre>\n```\n',
        encoding="utf-8",
    )
    (page,) = port.port(source, tmp_path / "ported", ["guide/page"])
    saved = "inline-" + hashlib.sha256(b"\x89PNG a dot").hexdigest()[:12] + ".png"
    assert page.dest.read_text(encoding="utf-8") == (
        "---\norphan: true\n---\n# Guide\n\n```\nfor i in range(N):\n  # Itr 1\n  x = a < b\n```\nAfter.\n\n\n"
        "Scripting is off: this shows tiles.\n\n\n\n\n![A square.](images/plain.svg)\n\n"
        f"![A dot.](images/{saved})\n\n```html\n<pre>kept</pre>\n```\n"
    )
    images = tmp_path / "ported" / "guide" / "images"
    assert sorted(path.name for path in images.iterdir()) == sorted(["plain.svg", saved])
    assert (images / saved).read_bytes() == b"\x89PNG a dot"
    notes = [f"{change.where}: {change.what}" for change in page.changes]
    assert "line 3: '<pre>' (to '</pre>') became a code block" in notes
    assert "line 11: <object data='../_static/scripted.svg'>, drawn by a script, became its words" in notes
    length = len(f"data:image/png;base64,{dot}")
    assert f"line 18: saved data:image/png ({length} characters) as images/{saved}" in notes


def test_raw_html_attributes_without_quotes_are_read_as_html_reads_them(tmp_path):
    """As orbax's optimized_checkpointing guide writes its benchmark charts: '<img src=https://...png>'."""
    from jaxcourse.tools import port

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "plain.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>', encoding="utf-8")
    (tmp_path / "docs" / "page.md").write_text(
        "<img src=https://x.example/save.png alt=Saving>\n\n"
        "See <a href=other.md>the other page</a>.\n\n<object data=plain.svg>A square.</object>\n",
        encoding="utf-8",
    )
    (page,) = port.port(tmp_path / "docs", tmp_path / "ported", ["page"])
    assert page.dest.read_text(encoding="utf-8").split("---\n", 2)[2] == (
        "[image: Saving](https://x.example/save.png)\n\nSee the other page.\n\n![A square.](images/plain.svg)\n"
    )


def test_an_image_directive_whose_image_cannot_come_is_left_for_its_author_and_said_so(tmp_path):
    from jaxcourse.tools import port

    (tmp_path / "docs").mkdir()
    written = "# T\n\n```{image} https://x.example/y.png\n:alt: Y.\n```\n\n:::{figure} gone.png\nZ.\n:::\n"
    remote = "\nAnd ![w](https://x.example/w.png), ![](http://x.example/v.png), ![u](//x.example/u.png).\n"
    (tmp_path / "docs" / "page.md").write_text(written + remote, encoding="utf-8")
    (page,) = port.port(tmp_path / "docs", tmp_path / "ported", ["page"])
    # A remote markdown image becomes a link to it; one with no scheme of the web is removed.
    linked = "\nAnd [image: w](https://x.example/w.png), [an image on x.example](http://x.example/v.png), .\n"
    assert page.dest.read_text(encoding="utf-8") == "---\norphan: true\n---\n" + written + linked
    assert [f"{change.where}: {change.what}" for change in page.changes] == [
        "line 3: left https://x.example/y.png (a page loads nothing from outside); replace it by hand: the build "
        "refuses it",
        "line 7: left gone.png: no such file in the source; replace it by hand: the build refuses it",
        "line 11: linked https://x.example/w.png instead of showing it (a page loads nothing from outside)",
        "line 11: linked http://x.example/v.png instead of showing it (a page loads nothing from outside)",
        "line 11: removed //x.example/u.png (a page loads nothing from outside)",
    ]


def test_a_one_page_build_says_how_its_page_ran_or_that_it_is_not_a_notebook(tmp_path):
    from jaxcourse.tools import sitebuild

    # As report.write_json keys it: a lesson by its id, each row naming its docname.
    record = {
        "docname": "lessons/x-01",
        "fresh": False,
        "runtime_seconds": 4.42,
        "started": "2026-12-05T12:59:09+00:00",
    }
    (tmp_path / "execution.json").write_text(json.dumps({"x-01": record}), encoding="utf-8")
    assert sitebuild.page_summary(tmp_path, "lessons/x-01") == (
        "lessons/x-01: its cells ran in 4.4 s in the run of 2026-12-05T12:59:09+00:00 (reused: its code and the "
        f"environment are unchanged); page: {tmp_path}/lessons/x-01.html"
    )
    assert sitebuild.page_summary(tmp_path, "docs/guide") == (
        f"docs/guide: not a notebook, so nothing on it ran; page: {tmp_path}/docs/guide.html"
    )


def test_pages_leave_out_mystnb_s_stylesheet_and_keep_the_others():
    from jaxcourse.output import pagestyles
    from sphinx.builders.html._assets import _CascadingStyleSheet

    context = {
        "css_files": [_CascadingStyleSheet("_static/mystnb.0123.css"), _CascadingStyleSheet("_static/course.css")]
    }
    pagestyles.leave_out_mystnb_css(None, "page", "page.html", context, None)
    assert [pagestyles.stylesheet_name(css) for css in context["css_files"]] == ["course.css"]


def test_plain_code_spans_are_unwrapped_and_coloured_ones_kept():
    from jaxcourse.output.pagestyles import slim_code_markup

    context = {
        "body": '<span class="n">x</span><span class="w"> </span><span class="o">=</span><span class="mi">1</span>'
    }
    slim_code_markup(None, "page", "page.html", context, None)
    assert context["body"] == 'x =<span class="mi">1</span>'


def test_displayed_text_is_made_readable_on_its_own_background():
    from jaxcourse.runtime.colours import contrast_ratio

    pale = sanitize.html('<span style="color: #ffffff; background-color: #de9ed6">CPU 4,5</span>')
    assert pale == '<span style="color:#000000;background-color:#de9ed6">CPU 4,5</span>'
    assert contrast_ratio("#000000", "#de9ed6") >= 4.5
    dark = '<span style="color:#ffffff;background-color:#393b79">CPU 0,1</span>'
    assert sanitize.html(dark) == dark  # already readable: untouched


# --- inline styles, classes and images in HTML outputs ---------------------------------------------------------


def test_a_style_is_read_as_declarations_not_as_text():
    """A ';' inside a quoted font name does not split the declaration; text that looks like a style stays text."""
    quoted = sanitize.html(
        '<span style="font-family:&quot;X;Y&quot;;color:#fff;background-color:#fff">t</span><p>style="color:#fff"</p>'
    )
    assert "color:#000000;background-color:#fff" in quoted  # the contrast fix still sees both colours
    assert '<p>style="color:#fff"</p>' in quoted  # a paragraph's text is never rewritten


@pytest.mark.parametrize(
    "style",
    [
        "margin:-2000px",
        "font-size:90px",
        "width:5000px",
        "padding:calc(-10px)",
        "position:fixed;inset:0",
        "background-color:#fff;background-image:url(https://evil.example/p.png)",
        "color:expression(alert(1))",
        "font-family:x\\,y",
        "color:var(--site-warning)",
    ],
)
def test_an_output_cannot_move_grow_or_load_with_its_style(style):
    clean = sanitize.html(f'<div style="{style}">x</div>')
    for forbidden in ("-2000", "90px", "5000", "calc", "position", "inset", "url(", "expression", "\\", "var("):
        assert forbidden not in clean, (style, clean)


def test_bounded_styles_survive():
    style = "padding:4px;margin:0 2px;font-size:1.2em;width:50%;border:1px solid #ccc"
    assert f'style="{style}"' in sanitize.html(f'<div style="{style}">x</div>')


def test_an_output_keeps_only_the_classes_it_may_use():
    clean = sanitize.html('<div class="admonition warning">Fake warning</div><table class="dataframe x"></table>')
    assert "admonition" not in clean and "warning" not in clean.split(">", 1)[0]
    assert 'class="dataframe"' in clean


def test_images_in_html_outputs_are_found_with_their_address_and_alt():
    markup = '<img src="a.png"><img src="b.png" alt=" "><img alt="C" src="data:image/png;base64,AA">'
    assert sanitize.images(markup) == [("a.png", ""), ("b.png", ""), ("data:image/png;base64,AA", "C")]


def test_a_downloads_html_is_never_replaced_by_its_markdown():
    from jaxcourse.published.downloads import safe_data

    both = safe_data({"text/html": "<b>the page's</b>", "text/markdown": "**other**", "text/plain": "x"})
    assert both["text/html"] == "<b>the page's</b>"
    assert safe_data({"text/markdown": "**only**"})["text/html"] == "<p><strong>only</strong></p>\n"


# --- SVG --------------------------------------------------------------------------------------------------------

HOSTILE_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert(1)">'
    "<script>alert(2)</script>"
    '<rect width="10" height="10" onclick="x()" style="fill:url(https://evil.example/a.png)"/>'
    '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>'
    '<a xlink:href="javascript:alert(3)"><text>t</text></a>'
    '<use xlink:href="https://evil.example/s.svg#a"/><image href="https://evil.example/p.png"/>'
    "<style>@import url(https://evil.example/s.css);</style>"
    '<h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(4)</h:script>'
    '<set attributeName="href" to="javascript:alert(5)"/>'
    '<circle r="2" fill="url(#ok)" clip-path="url(#clip)"/></svg>'
)


def test_an_svg_output_keeps_drawing_and_loses_what_runs_or_loads():
    from jaxcourse.output import safesvg

    found = safesvg.problems(HOSTILE_SVG)
    assert len(found) == 11, found
    clean = safesvg.clean(HOSTILE_SVG)
    for forbidden in ("script", "onload", "onclick", "evil.example", "foreignObject", "javascript", "@import", "<set"):
        assert forbidden not in clean, (forbidden, clean)
    assert '<circle r="2" fill="url(#ok)" clip-path="url(#clip)" />' in clean
    assert "<g><text>t</text></g>" in clean and "<a" not in clean  # a link's drawing stays; pprof's nodes are links
    assert safesvg.problems(clean) == []


def test_an_svg_loses_its_web_font_import_and_keeps_the_rules_that_colour_it():
    """As pallas/gpu/memory_spaces.svg in the JAX docs: a Google Fonts @import atop the classes that fill each box."""
    from jaxcourse.output import safesvg

    font = "@import url('https://fonts.googleapis.com/css2?family=Inter:wght@400;500;700&display=swap');"
    sheet = f'<style><![CDATA[ {font} @import "a;b.css" screen; .box {{ fill: #FEE2E2; }} ]]></style>'
    svg = f'<svg xmlns="http://www.w3.org/2000/svg">{sheet}<rect class="box" width="9" height="9"/></svg>'
    assert [problem.split(" '")[0].split(' "')[0] for problem in safesvg.problems(svg)] == ["a style import"] * 2
    assert safesvg.clean(svg) == (
        '<svg xmlns="http://www.w3.org/2000/svg"><style>   .box { fill: #FEE2E2; } </style>'
        '<rect class="box" width="9" height="9" /></svg>'
    )
    loading = svg.replace(".box {", "@font-face { src: url(https://fonts.example/f.woff); } .box {")
    assert "<style" not in safesvg.clean(loading)  # a sheet that still loads once the imports go is dropped whole


def test_an_svg_with_entities_or_that_is_not_svg_is_refused():
    from jaxcourse.output import safesvg

    for text in (
        '<!DOCTYPE svg [<!ENTITY a "b">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>',
        "<svg xmlns='http://www.w3.org/2000/svg'><unclosed></svg>",
        "<html xmlns='http://www.w3.org/1999/xhtml'><script>alert(1)</script></html>",
    ):
        with pytest.raises(safesvg.UnsafeSvg):
            safesvg.clean(text)


def test_every_committed_figure_is_already_safe():
    """matplotlib's own SVG passes unchanged, so the published-SVG check can hold the figures to it."""
    from conftest import ROOT
    from jaxcourse.output import safesvg

    figures = sorted((ROOT / "figures").glob("*.svg"))
    assert figures
    for path in figures:
        assert safesvg.problems(path.read_text(encoding="utf-8")) == [], path.name


def test_a_figure_s_text_is_text_big_enough_for_a_phone_and_the_same_bytes_each_time():
    """save_figure's charts: <text> in a font with fallbacks, at least 11 CSS px when 358 px wide."""
    import re
    import xml.etree.ElementTree as ET

    from conftest import ROOT
    from jaxcourse.output import safesvg
    from jaxcourse.runtime import charts

    data = {
        "kind": "bar",
        "labels": ["eager loss", "first compiled call", "repeated compiled call"],
        "ylabel": "loss",
        "series": [{"label": "loss", "y": [0.46, 0.46, 0.46]}],
    }
    svg = charts.render_svg(data, title="Compilation preserves the result")
    assert svg == charts.render_svg(data, title="Compilation preserves the result")
    assert safesvg.problems(svg.decode()) == []
    root = ET.fromstring(svg)
    width = float(root.get("viewBox").split()[2])
    assert width == charts.FIGURE_SIZE[0] * 72
    texts = [element for element in root.iter("{http://www.w3.org/2000/svg}text") if (element.text or "").strip()]
    sizes = [float(re.search(r"font-size: ([\d.]+)px", element.get("style"))[1]) for element in texts]
    # The font, with fallbacks, once in the figure's style sheet rather than on each <text>.
    sheet = "".join(style.text or "" for style in root.iter("{http://www.w3.org/2000/svg}style"))
    assert texts and "text{font-family: 'DejaVu Sans'" in sheet and "sans-serif" in sheet
    assert not any("font-family" in element.get("style", "") for element in texts)
    phone_width = 358  # a figure's width on a 390 px phone, inside furo's margins
    assert min(sizes) * phone_width / width >= 11, (min(sizes), width)
    # The page keeps the figure's shape before it loads (lazily): course.css's aspect ratio is the figure's.
    css = (ROOT / "docs" / "_ext" / "jaxcourse" / "static" / "course.css").read_text(encoding="utf-8")
    ratio = re.search(r"aspect-ratio: ([\d.]+) / ([\d.]+)", css)
    assert (float(ratio[1]), float(ratio[2])) == charts.FIGURE_SIZE


def test_a_chart_is_the_same_bytes_when_its_values_differ_in_the_last_bits_that_another_cpu_changes():
    """practice-05's losses differ by up to 7e-8 between an AVX2 and an AVX-512 build of the same step."""
    import math

    from jaxcourse.runtime import charts

    losses = [0.5712, 0.2641, 0.2493, 0.1921, 0.1232, 0.1398, 0.1254]
    other_cpu = [loss * (1 + 3e-7 * (-1) ** index) for index, loss in enumerate(losses)]
    visibly_lower = [*losses[:-1], losses[-1] - 0.01]

    def chart(kind: str, values: list[float]) -> bytes:
        data = {"kind": kind, "labels": list(range(1, 8)), "ylabel": "loss", "series": [{"label": "loss", "y": values}]}
        return charts.render_svg(data, title="Validation loss per epoch")

    for kind in ("line", "bar"):
        assert chart(kind, other_cpu) == chart(kind, losses) != chart(kind, visibly_lower), kind
    # A gap in a line stays a gap, and equal values or zeros are drawn as they are.
    gap = charts.drawn([0.12345678, math.nan, 0.6])
    assert gap[0] == 0.1235 and math.isnan(gap[1]) and charts.drawn([3.0, 3.0]) == [3.0, 3.0]
    assert charts.drawn([0.0, 0.0]) == [0.0, 0.0]


# --- raw HTML in prose ------------------------------------------------------------------------------------------


def test_raw_html_in_prose_is_found_at_its_line_wherever_it_stands():
    from jaxcourse.output import rawhtml

    text = (
        "---\nfront: matter\n---\n# T\n\nA paragraph with <b onclick='x()'>bold</b>\n"
        "and <img src=x onerror=alert(1)> on its second line.\n\n<div>\nblock\n</div>\n\n"
        "```{raw} html\n<script>alert(1)</script>\n```\n\n"
        "```{admonition} Inside\n:class: dropdown\n\nAn <iframe src='https://x'></iframe> here.\n```\n\n"
        "```{code-cell} ipython3\nprint('<b>')\n```\n\nNot HTML: `<b>`, <https://x.example> and a < b.\n\n"
        "A tag may wrap: <br\n/> and then <wbr> on the line after it.\n"
    )
    found = [(item.line, item.message.split(" in the page")[0]) for item in rawhtml.find_in_page(text)]
    lines = text.splitlines()
    assert [line for line, _ in found] == [
        next(number for number, line in enumerate(lines, 1) if needle in line)
        for needle in ("<b onclick", "<img", "<div>", "{raw} html", "<iframe", "<br", "<wbr>")
    ]
    assert found[1][1] == "raw HTML '<img src=x onerror=alert(1)>'"
    assert found[3][1] == "a {raw} directive"


# --- cells the markup swallowed -----------------------------------------------------------------------------------


def test_an_amsmath_environment_that_swallows_a_cell_is_named_at_the_cell():
    """The shape of the JAX autodiff cookbook: inline math whose second line starts \\begin{bmatrix}."""
    from jaxcourse.source import cellscan

    text = (
        "# T\n\nThe product $a\n\\begin{bmatrix} c \\\\ d \\end{bmatrix}$ and then:\n\n"
        "```{code-cell} ipython3\nprint('lost')\n```\n\n"
        "More $\\begin{bmatrix} e \\end{bmatrix}\n\\begin{bmatrix} f \\end{bmatrix}$.\n"
    )
    cell_line = text.splitlines().index("```{code-cell} ipython3") + 1
    assert cellscan.written_cells(text) == [cell_line]
    ((line, message),) = cellscan.lost_cells(text, set(), {"dollarmath", "amsmath"})
    assert line == cell_line and "the amsmath environment '\\begin{bmatrix} c" in message and "line 4" in message
    assert cellscan.lost_cells(text, {cell_line}, {"dollarmath"}) == []  # with the site's extensions: it runs


def test_a_cell_shown_inside_a_code_block_is_an_example_not_a_cell():
    from jaxcourse.source import cellscan

    text = "# T\n\n````markdown\n```{code-cell} ipython3\nexample\n```\n````\n\n:::{code-cell} ipython3\nx\n:::\n"
    assert cellscan.written_cells(text) == [9]
    ((_, message),) = cellscan.lost_cells(text, set(), {"dollarmath"})
    assert "not ':::' blocks" in message


def test_a_file_in_an_underscore_folder_under_docs_is_no_page():
    """As Jupyter Book keeps the snippets its pages include (_admonition/gpu.md): read by them, never built alone."""
    import runpy

    from conftest import ROOT
    from sphinx.util.matching import Matcher

    excluded = Matcher(runpy.run_path(str(ROOT / "conf.py"))["exclude_patterns"])
    assert excluded("docs/qe/_admonition/gpu.md") and excluded("docs/_ext/jaxcourse/README.md")
    assert not excluded("docs/qe/lecture.md") and not excluded("docs/contributing.md")
    assert excluded("lessons/_template.md") and not excluded("lessons/transforms-04.md")

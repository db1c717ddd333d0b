"""The source stage, before anything runs: what a page is and how its problems are reported.

One located message per problem (``located``), conf.py's settings (``options``), the page being read
(``pages``), what ``source-read`` makes of a lesson, a notebook page and a prose page (``pagesource``),
``.ipynb`` pages located by the lines of their JSON (``ipynbpages``), and a lesson's MyST as the plain
notebook markdown of its downloads (``notebookmarkdown``).
"""

from __future__ import annotations

import json
import types
from pathlib import Path
from unittest import mock

import nbformat
import pytest
from jaxcourse.source import (
    frontmatter,
    ipynbpages,
    located,
    notebookmarkdown,
    options,
    pages,
    pagesource,
    reader,
)
from sphinx.errors import ConfigError
from tiny import code_cell, lesson, line_of, page_being_read

NOTEBOOK_FRONT_MATTER = """---
jupytext:
  text_representation: {format_name: myst}
kernelspec: {name: python3, display_name: Python 3}
execution:
  timeout: 30
---
"""

# --- one located message ------------------------------------------------------------------------------------------


def test_a_problem_is_one_error_at_its_page_and_line_of_a_suppressible_course_type():
    with mock.patch.object(located.logger, "error") as error:
        located.report("lessons/a", 12, "the figure was not drawn", subtype="figure")
        located.report("lessons/a", 3, "cell failed")
    assert error.call_args_list == [
        mock.call("the figure was not drawn", location=("lessons/a", 12), type="course", subtype="figure"),
        mock.call("cell failed", location=("lessons/a", 3), type="course", subtype="exec"),
    ]


def test_each_front_matter_problem_is_reported_at_its_own_line():
    problems = [frontmatter.Problem(4, "'lesson.id' is missing"), frontmatter.Problem(9, "unknown key")]
    with mock.patch.object(located.logger, "error") as error:
        located.report_front_matter("lessons/b", problems)
    assert [(call.args[0], call.kwargs["location"], call.kwargs["subtype"]) for call in error.call_args_list] == [
        ("'lesson.id' is missing", ("lessons/b", 4), "frontmatter"),
        ("unknown key", ("lessons/b", 9), "frontmatter"),
    ]


# --- conf.py's settings -------------------------------------------------------------------------------------------


def configured(tmp_path: Path, conf: str, lessons_dir: str = "lessons"):
    (tmp_path / "conf.py").write_text(conf, encoding="utf-8")
    app = types.SimpleNamespace(confdir=str(tmp_path), srcdir=str(tmp_path))
    return app, types.SimpleNamespace(course_lessons_dir=lessons_dir)


def test_a_misspelt_setting_gets_a_did_you_mean_hint(tmp_path):
    (tmp_path / "lessons").mkdir()
    app, config = configured(tmp_path, 'project = "x"\ncourse_lesson_dir = "lessons"\n')
    with pytest.raises(ConfigError) as raised:
        options.check(app, config)
    assert str(raised.value) == "unknown setting 'course_lesson_dir' in conf.py; did you mean 'course_lessons_dir'?"


def test_an_unknown_setting_like_no_other_is_refused_without_a_guess(tmp_path):
    (tmp_path / "lessons").mkdir()
    app, config = configured(tmp_path, "course_zzz: int = 1\n")
    with pytest.raises(ConfigError, match=r"^unknown setting 'course_zzz' in conf.py$"):
        options.check(app, config)


def test_known_settings_and_other_projects_names_pass(tmp_path):
    (tmp_path / "lessons").mkdir()
    app, config = configured(tmp_path, 'course_progress = True\nhtml_theme = "furo"\nmy_course_x = 1\n')
    options.check(app, config)  # no error


def test_a_lessons_folder_that_is_not_there_names_the_closest_folder(tmp_path):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "figures").mkdir()
    app, config = configured(tmp_path, 'course_lessons_dir = "lesson"\n', lessons_dir="lesson")
    with pytest.raises(
        ConfigError, match=r"^course_lessons_dir 'lesson' is not a folder of .*; did you mean 'lessons'\?$"
    ):
        options.check(app, config)


def test_the_names_conf_py_sets_are_read_from_its_top_level(tmp_path):
    conf = tmp_path / "conf.py"
    conf.write_text(
        "import os\nplain = 1\nannotated: str = 'x'\nplain += 1\ndef f():\n    inside = 2\nclass C:\n    member = 3\n",
        encoding="utf-8",
    )
    assert options.names_set_in(conf) == {"plain", "annotated"}
    assert options.names_set_in(tmp_path / "missing.py") == set()


def test_every_setting_is_registered_with_a_default_of_its_declared_type():
    registered = {}
    app = types.SimpleNamespace(add_config_value=lambda name, *args, **kwargs: registered.setdefault(name, kwargs))
    options.register(app)
    assert registered.keys() == options.OPTIONS.keys()
    for name, (default, _, kind, _) in options.OPTIONS.items():
        assert name.startswith(options.PREFIX) and isinstance(default, kind), name
        assert registered[name]["types"] == [kind] and registered[name]["description"], name


# --- the page being read ------------------------------------------------------------------------------------------


def make_page(text: str, *, lesson_page: bool, docname: str = "docs/page") -> pages.Page:
    return page_being_read(text, docname, lesson_page=lesson_page)


def test_a_page_is_named_by_its_lesson_id_or_its_docname_and_titled_by_its_heading():
    text = lesson("one-01", code_cell("x = 1"), title="The lesson title")
    assert make_page(text, lesson_page=True, docname="lessons/one-01").page_id == "one-01"
    assert make_page(text, lesson_page=True, docname="lessons/one-01").title == "The lesson title"
    page = make_page(NOTEBOOK_FRONT_MATTER + "Intro.\n\n## Not the title\n\n# The page title\n", lesson_page=False)
    assert (page.page_id, page.title) == ("docs/page", "The page title")
    assert make_page(NOTEBOOK_FRONT_MATTER + "## Only a subheading\n", lesson_page=False).title == "docs/page"


def test_nox_s_lesson_names_a_page_by_lesson_id_or_by_its_md_or_ipynb_file(tmp_path):
    from jaxcourse.source import catalogue

    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "one-01.md").write_text(lesson("one-01", code_cell("x = 1")), encoding="utf-8")
    (tmp_path / "docs" / "ported").mkdir(parents=True)
    (tmp_path / "docs" / "ported" / "guide.md").write_text(NOTEBOOK_FRONT_MATTER, encoding="utf-8")
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "docs" / "ported" / "walkthrough.ipynb")
    assert catalogue.page_docname(tmp_path, "one-01") == "lessons/one-01"
    assert catalogue.page_docname(tmp_path, "docs/ported/guide.md") == "docs/ported/guide"
    assert catalogue.page_docname(tmp_path, "docs/ported/walkthrough.ipynb") == "docs/ported/walkthrough"
    with pytest.raises(ValueError, match=r"no lesson 'missing.ipynb' in lessons/ .*the lessons are: one-01"):
        catalogue.page_docname(tmp_path, "docs/ported/missing.ipynb")
    # Back from a docname to the file sphinx-build is given in a build of chosen pages.
    assert catalogue.page_file(tmp_path, "lessons/one-01") == tmp_path / "lessons" / "one-01.md"
    assert catalogue.page_file(tmp_path, "docs/ported/walkthrough") == tmp_path / "docs/ported/walkthrough.ipynb"
    with pytest.raises(ValueError, match=r"no page 'docs/gone': neither docs/gone.md nor docs/gone.ipynb"):
        catalogue.page_file(tmp_path, "docs/gone")


def test_a_page_that_pastes_glued_values_names_the_pages_they_come_from(tmp_path):
    """As myst-nb's glue guide pastes from orphaned_nb.ipynb, by role and by directive, in .md and .ipynb pages."""
    from jaxcourse.source import catalogue

    (tmp_path / "docs" / "render").mkdir(parents=True)
    pastes = (
        "Its own {glue:text}`mean:.2f`, and {glue:text}`orphaned_nb.ipynb::var_float:.2E`, {glue}`../other::x`.\n\n"
        "```{glue} var_img\n:doc: orphaned_nb.ipynb\n```\n\n```{glue} y\n:doc: ../third.md\n```\n"
    )
    (tmp_path / "docs" / "render" / "glue.md").write_text(NOTEBOOK_FRONT_MATTER + pastes, encoding="utf-8")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(pastes)])
    nbformat.write(notebook, tmp_path / "docs" / "render" / "glued.ipynb")
    for name in ("render/orphaned_nb.ipynb", "other.md", "third.md"):
        (tmp_path / "docs" / name).write_text(NOTEBOOK_FRONT_MATTER, encoding="utf-8")
    expected = ["docs/render/orphaned_nb", "docs/other", "docs/third"]
    assert catalogue.pasted_from(tmp_path, "docs/render/glue") == expected
    assert catalogue.pasted_from(tmp_path, "docs/render/glued") == expected
    # Its own values, and a page that is not there (as contributing.md quotes the syntax): the build's to report.
    text = NOTEBOOK_FRONT_MATTER + "{glue}`own` and `` {glue:text}`missing.ipynb::key:.2f` ``\n"
    (tmp_path / "docs" / "plain.md").write_text(text, encoding="utf-8")
    assert catalogue.pasted_from(tmp_path, "docs/plain") == []


def test_the_files_a_page_s_code_names_beside_it_are_found_and_nothing_outside_its_folder(tmp_path):
    """They are copied into the kernel's scratch folder: a path that leaves the page's folder would be written there."""
    page_folder = tmp_path / "docs" / "render"
    (page_folder / "images").mkdir(parents=True)
    (page_folder / "images" / "fish.png").write_bytes(b"png")
    (page_folder / "notes.txt").write_text("x", encoding="utf-8")
    (page_folder / ".secret").write_text("x", encoding="utf-8")
    (tmp_path / "docs" / "outside.txt").write_text("x", encoding="utf-8")
    code = [
        "Image('images/fish.png')\nopen(\"notes.txt\").read()\n",
        "open('../outside.txt'); open('.secret'); open('missing.txt'); f'{x}'; 'images'\n%ls 'images/fish.png'",
    ]
    found = reader.files_named_beside(page_folder, code)
    assert found == {
        "images/fish.png": str((page_folder / "images" / "fish.png").resolve()),
        "notes.txt": str((page_folder / "notes.txt").resolve()),
    }
    assert reader.files_named_beside(page_folder, ["print('no files')"]) == {}


def test_only_the_document_being_read_has_a_page(monkeypatch):
    monkeypatch.setattr(pages, "_now", {})
    assert pages.reading() is None and pages.page_being_read("docs/page") is None
    page = make_page(NOTEBOOK_FRONT_MATTER + "# T\n", lesson_page=False)
    pages.start_reading(pages.Reading("docs/page", page.path, page))
    assert pages.page_being_read("docs/page") is page
    assert pages.page_being_read("docs/other") is None
    pages.start_reading(pages.Reading("docs/prose", Path("docs/prose.md"), None))
    assert pages.page_being_read("docs/prose") is None and pages.reading().docname == "docs/prose"


# --- source-read --------------------------------------------------------------------------------------------------


@pytest.fixture
def reading(tmp_path, monkeypatch):
    """A fake Sphinx app whose documents are <tmp>/<docname>.md; returns read(docname, text, **config)."""
    monkeypatch.setattr(pages, "_now", {})
    domain = types.SimpleNamespace(fingerprints={})

    def read(docname, text, **config):
        """``docname`` names an .ipynb page by its suffix (docs/nb.ipynb); any other is an .md page."""
        suffix = ".ipynb" if docname.endswith(".ipynb") else ".md"
        docname = docname.removesuffix(".ipynb")
        settings = {
            "course_lessons_dir": "lessons",
            "course_only_pages": [],
            "course_environment_files": [],
            "course_figures_dir": "figures",
            "course_require_recorded": False,
            "nb_execution_cache_path": "cache",
            **config,
        }
        env = types.SimpleNamespace(doc2path=lambda name: tmp_path / f"{name}{suffix}", get_domain=lambda name: domain)
        app = types.SimpleNamespace(env=env, srcdir=str(tmp_path), config=types.SimpleNamespace(**settings))
        source = [text]
        with mock.patch.object(located.logger, "error") as error:
            pagesource.on_source_read(app, docname, source)
        reported = [(call.kwargs["location"][1], call.args[0]) for call in error.call_args_list]
        return types.SimpleNamespace(source=source[0], reported=reported, reading=pages.reading(), domain=domain)

    return read


def test_a_notebook_page_under_docs_is_handed_to_the_reader_with_its_settings(reading):
    text = NOTEBOOK_FRONT_MATTER + "# A page\n\n" + code_cell("x = 1")
    read = reading("docs/page", text)
    assert read.source == text and read.reported == []
    page = read.reading.page
    assert (page.page_id, page.lesson, page.settings.timeout, page.settings.stderr) == ("docs/page", False, 30, "show")
    assert page.recorded_in is None
    assert read.domain.fingerprints == {"docs/page": page.fingerprint}


def test_a_page_for_a_kernel_of_another_language_is_refused_at_its_kernelspec(reading):
    """As myst-nb's own guide runs Coconut: the build has one kernel, for Python, and a missing one crashed it."""
    text = NOTEBOOK_FRONT_MATTER.replace("{name: python3, display_name: Python 3}", "{name: coconut}") + "# C\n"
    read = reading("docs/coconut", text)
    message = "this page asks for the Jupyter kernel 'coconut', and the build runs every page in its own Python kernel"
    assert [(line, said.split(";")[0]) for line, said in read.reported] == [(line_of(text, "kernelspec"), message)]
    assert "This page was not built" in read.source
    ((_, said),) = reading("docs/r.ipynb", notebook_json({"kernelspec": {"name": "ir", "language": "R"}})).reported
    assert said.startswith("this page asks for the Jupyter kernel 'ir' (R), and the build")
    for spec in ({"name": "python"}, {"name": "python3.11"}, {"name": "env", "display_name": "Python 3 (ipykernel)"}):
        assert frontmatter.is_python_kernel(spec)
    assert not frontmatter.is_python_kernel({"name": "python3", "language": "julia"})


def test_a_build_from_recordings_hands_the_page_its_cache(reading):
    read = reading("docs/page", NOTEBOOK_FRONT_MATTER + "# A page\n", course_require_recorded=True)
    assert read.reading.page.recorded_in == Path("cache")


def test_a_lesson_with_invalid_front_matter_is_reported_at_its_lines_and_published_as_a_stub(reading):
    text = lesson("bad", code_cell("x = 1"), title="Bad lesson").replace("  device: CPU\n", "  devise: CPU\n")
    read = reading("lessons/bad", text)
    assert read.reported == [(line_of(text, "devise: CPU"), "unknown key 'lesson.devise'; did you mean 'device'?")]
    assert (
        read.source == "---\norphan: true\n---\n# Bad lesson\n\nThis page was not built: its front matter is invalid.\n"
    )
    assert read.reading.page is None


def test_a_lesson_that_is_not_a_notebook_says_which_front_matter_it_lacks(reading):
    text = (
        lesson("plain", "Text.\n")
        .replace("jupytext:\n  text_representation:\n    extension: .md\n", "")
        .replace("    format_name: myst\n", "")
    )
    read = reading("lessons/plain", text)
    ((_, message),) = read.reported
    assert "lacks 'jupytext: {text_representation: {format_name: myst}}'" in message
    assert "its front matter is invalid" in read.source


def test_code_cells_on_a_prose_page_are_each_reported_and_the_page_is_a_stub(reading):
    text = "# Prose\n\nText.\n\n" + code_cell("print(1)") + "\n" + code_cell("print(2)")
    read = reading("docs/prose", text)
    assert [line for line, _ in read.reported] == [5, 9]
    assert all("this page is not a notebook, so this code cell never runs" in message for _, message in read.reported)
    assert read.source.startswith("---\norphan: true\n---\n# Prose\n\nThis page was not built: it has code cells")


def test_myst_nb_settings_that_would_break_a_promise_are_refused_at_their_line(reading):
    """A page cannot turn its execution off, run in the checkout, keep a cache elsewhere, or let errors pass."""
    front = (
        "---\njupytext: {text_representation: {format_name: myst}}\nkernelspec: {name: python3}\nmystnb:\n"
        "  render_image_options: {alt: A plot.}\n  execution_timeout: 90\n  execution_in_temp: false\n"
        '  execution_cache_path: escaped\n  execution_mode: "off"\n---\n'
    )
    read = reading("docs/page", front + "# Page\n\n" + code_cell("print(1)"))
    assert [(line, message.split(":")[0]) for line, message in read.reported] == [
        (7, "'mystnb.execution_in_temp' is not a course setting"),
        (8, "'mystnb.execution_cache_path' is not a course setting"),
        (9, "'mystnb.execution_mode' is not a course setting"),
    ]
    messages = {message.split(": ", 1)[0]: message for _, message in read.reported}
    assert "show code that must not run as a code block" in messages["'mystnb.execution_mode' is not a course setting"]
    # myst-nb's inline mode, which its {eval} roles need (as its own guide to them sets it), is told apart.
    ((line, message),) = reading(
        "docs/page", front.replace('execution_mode: "off"', "execution_mode: inline")
    ).reported[2:]
    assert line == 9 and "{eval} roles and directives that inline mode serves have no kernel to ask" in message
    ((_, message),) = reading("docs/page", front.replace('execution_mode: "off"', "execution_mode: cache")).reported[2:]
    assert message.endswith("nox -s lesson reuses a run whose code and environment are unchanged)")
    unlimited = notebook_json({"mystnb": {"execution_allow_errors": True}})
    ((line, message),) = reading("docs/nb.ipynb", unlimited).reported
    assert message.startswith("'mystnb.execution_allow_errors' is not a course setting: errors are never allowed")
    assert line == line_of(unlimited, '"mystnb":')  # in a notebook, a setting's line is its mapping's


def test_execution_settings_on_a_prose_page_are_reported_not_ignored(reading):
    text = "---\ntitle: x\nexecution:\n  timeout: 5\n---\n# Prose\n\nText.\n"
    read = reading("docs/prose", text)
    ((line, message),) = read.reported
    assert line == 3 and message.startswith("'execution:' has no effect here: this page is not a notebook")
    assert read.source == text and read.reading.page is None


def test_a_partial_build_publishes_the_other_executed_pages_as_stubs_that_keep_their_headings_and_labels(reading):
    """The pages that are built may link to a label or a heading of a page that is not: the links still resolve."""
    body = code_cell("# a comment, not a heading\nx = 1") + "\n(skipped-result)=\n## The result\n\nText.\n\nA\n-\n"
    text = lesson("skipped", body, title="Skipped lesson")
    read = reading("lessons/skipped", text, course_only_pages=["lessons/chosen"])
    assert read.source == (
        "---\norphan: true\n---\n# Skipped lesson\n\n"
        "This page is not executed by this partial build; `nox -s docs` builds the whole site.\n\n"
        "(skipped-result)=\n## The result\n\n## A\n"
    )
    assert read.reported == [] and read.reading.page is None
    chosen = reading("lessons/chosen", lesson("chosen", code_cell("x = 1")), course_only_pages=["lessons/chosen"])
    assert chosen.reading.page.page_id == "chosen"


def notebook_json(metadata: dict) -> str:
    v4 = nbformat.v4
    notebook = v4.new_notebook(cells=[v4.new_markdown_cell("# Notebook title\n\nText."), v4.new_code_cell("x = 1")])
    notebook.metadata.update(metadata)
    return nbformat.writes(notebook)


def test_an_ipynb_page_with_invalid_metadata_is_reported_at_its_json_line(reading, tmp_path):
    text = notebook_json({"execution": {"timout": 5}})
    read = reading("docs/nb.ipynb", text)
    assert read.reported == [(line_of(text, '"execution":'), "unknown key 'execution.timout'; did you mean 'timeout'?")]
    assert read.source == "---\norphan: true\n---\n# nb\n\nThis page was not built: its metadata is invalid.\n"
    unlimited = notebook_json({"execution": {"timeout": -1}})  # as optax's reduce_on_plateau example asks
    assert reading("docs/nb.ipynb", unlimited).reported == [
        (
            line_of(unlimited, '"execution":'),
            "'execution.timeout' must be positive: a build never runs a cell without a time limit",
        )
    ]
    broken = reading("docs/nb.ipynb", "{not json")
    ((line, message),) = broken.reported
    assert line == 1 and message.startswith("this notebook cannot be read:")


def test_an_ipynb_page_executes_with_its_metadata_as_front_matter_or_is_a_stub_named_by_its_heading(reading):
    text = notebook_json({"execution": {"timeout": 7}})
    assert reading("docs/nb.ipynb", text).reading.page.settings.timeout == 7
    skipped = reading("docs/nb.ipynb", text, course_only_pages=["docs/other"])
    assert skipped.source.startswith("---\norphan: true\n---\n# Notebook title\n\nThis page is not executed")
    labelled = text.replace("# Notebook title", "(nb-top)=\\n# Notebook title\\n\\n## Part\\n")
    skipped = reading("docs/nb.ipynb", labelled, course_only_pages=["docs/other"])
    assert skipped.source.endswith(
        "---\n(nb-top)=\n# Notebook title\n\nThis page is not executed by this partial build.\n\n## Part\n"
    )
    # A notebook's cells hold no front matter: a rule atop its first cell is a rule.
    ruled = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("---\n# Notebook title\n\n---\n## Part")])
    skipped = reading("docs/nb.ipynb", nbformat.writes(ruled), course_only_pages=["docs/other"])
    assert skipped.source.endswith(
        "---\n# Notebook title\n\nThis page is not executed by this partial build.\n\n## Part\n"
    )


def test_which_documents_are_lessons():
    app = types.SimpleNamespace(config=types.SimpleNamespace(course_lessons_dir="lessons/"))
    assert pagesource.is_lesson(app, "lessons/transforms-04")
    assert not pagesource.is_lesson(app, "lessons/_template")
    assert not pagesource.is_lesson(app, "docs/lessons")
    assert not pagesource.is_lesson(app, "lessons-old/x")


def test_a_stub_keeps_the_lesson_title_else_the_first_heading_else_the_file_name():
    why = "Not built."
    assert "# From front matter\n" in pagesource.stub(lesson("x", "", title="From front matter"), Path("x.md"), why)
    assert "# From heading\n" in pagesource.stub("Intro\n# From heading\n", Path("x.md"), why)
    assert pagesource.stub("---\nbroken: [\n---\nno heading\n", Path("lessons/file-name.md"), why) == (
        "---\norphan: true\n---\n# file-name\n\nNot built.\n"
    )


def test_a_stub_keeps_what_links_point_at_labelled_directives_and_equations_too():
    text = (
        "# Page\n\n(intro)=\n## Intro\n\n$$\na = 1\n$$ (first-eq)\n\n````{exercise} Evaluate it\n:label: ex-1\n\n"
        "```{figure} x.svg\n:name: fig-x\n:alt: X.\n```\n\nNo section\n---\n````\n\n"
        "```{code-cell}\n:name: cell\nx = 1\n```\n"
        # As QuantEcon's debugging lecture shows pdb's help: in a code block, no heading and no raw HTML.
        "\n```{code-block} text\n:name: pdb-help\nDocumented commands (type help <topic>):\n====\n```\n"
    )
    assert pagesource.outline(text) == [
        "# Page",
        "(intro)=",
        "## Intro",
        "$$\na = 1\n$$ (first-eq)",
        "(ex-1)=",
        "```{rubric} Evaluate it\n```",
        "(fig-x)=",
        "```{rubric} fig-x\n```",
        "(pdb-help)=",
        "```{rubric} pdb-help\n```",
    ]


def test_pages_read_under_another_environment_are_read_again(tmp_path):
    app = types.SimpleNamespace(srcdir=str(tmp_path), config=types.SimpleNamespace(course_environment_files=[]))
    current = pagesource.current_fingerprint(app)
    domain = types.SimpleNamespace(fingerprints={"lessons/same": current, "lessons/older": "0123456789abcdef"})
    env = types.SimpleNamespace(get_domain=lambda name: domain)
    assert pagesource.pages_run_in_another_environment(app, env, set(), set(), set()) == ["lessons/older"]
    (tmp_path / "requirements.txt").write_text("jax==0.10.2\n", encoding="utf-8")
    app.config.course_environment_files = ["requirements.txt"]
    assert pagesource.current_fingerprint(app) != current  # the pinned requirements key the cache too


# --- .ipynb pages -------------------------------------------------------------------------------------------------


def test_each_cell_of_an_ipynb_is_located_at_its_source_key():
    v4 = nbformat.v4
    cells = [v4.new_markdown_cell("# T", metadata={"source": "a cell's own metadata"}), v4.new_code_cell("x = 1")]
    text = nbformat.writes(v4.new_notebook(cells=cells))
    notebook = ipynbpages.read(text)
    lines = ipynbpages.source_lines(text, notebook)
    assert len(lines) == len(notebook.cells) == 2  # a "source" key deeper in a cell is not its source
    json_lines = text.splitlines()
    assert all(json_lines[number].strip() == '"source": [' for number in lines)
    assert json_lines[lines[1] + 1].strip() == '"x = 1"'  # the code follows its key, a line each
    assert ipynbpages.source_lines(json.dumps(notebook), notebook) is None  # not nbformat's layout: no lines
    assert ipynbpages.is_notebook_json("\n  " + text) and not ipynbpages.is_notebook_json("---\n{}")


def test_an_ipynb_that_names_no_kernel_runs_in_python_3_and_one_that_names_its_kernel_keeps_it():
    v4 = nbformat.v4
    unnamed = ipynbpages.read(nbformat.writes(v4.new_notebook(cells=[v4.new_code_cell("x = 1")])))
    assert unnamed.metadata["kernelspec"]["name"] == "python3"  # the name the course kernel's alias takes
    other = {"name": "julia-1.10", "display_name": "Julia", "language": "julia"}
    named = ipynbpages.read(nbformat.writes(v4.new_notebook(metadata={"kernelspec": other})))
    assert named.metadata["kernelspec"] == other


def test_an_ipynb_s_metadata_keys_are_located_in_the_notebook_s_own_metadata_not_a_cell_s():
    v4 = nbformat.v4
    notebook = v4.new_notebook(cells=[v4.new_code_cell("x = 1", metadata={"orphan": "a cell's"})])
    notebook.metadata.update({"execution": {"timeout": 30}, "orphan": True})
    text = nbformat.writes(notebook)
    front = ipynbpages.front_matter(text, ipynbpages.read(text))
    assert front.data == {"execution": {"timeout": 30}, "orphan": True, "kernelspec": ipynbpages.DEFAULT_KERNELSPEC}
    lines = text.splitlines()
    assert lines[front.line_of("orphan") - 1].strip() == '"orphan": true'
    assert lines[front.line_of("execution.timeout") - 1].strip() == '"execution": {'  # a key's line is its mapping's
    assert frontmatter.execution_settings(front).timeout == 30


def test_a_page_whose_lesson_is_not_a_mapping_gets_messages_not_a_crash():
    front = frontmatter.parse("---\nlesson: 3\nexecution:\n  cpu_devices: 2\n---\n# A page\n")
    problems = frontmatter.validate_notebook_page(front)
    assert problems[0].line == 2 and "'lesson:' is for the lessons in lessons/" in problems[0].message
    assert frontmatter.execution_settings(front).cpu_devices == 2


# --- notebook markdown for the downloads --------------------------------------------------------------------------

LESSON_MARKDOWN = """Intro with {func}`~jax.jit`, {doc}`the basics <basics>` and {ref}`label`.
% a MyST comment, not for the notebook

````{exercise} Level 1
Square it: {math}`x^2`.

```{hint}
Think.
```
````

:::{admonition} Answer and explanation
:class: dropdown

Because.
:::

```{note}
Mind the gap.

Twice.
```

```{figure} ../figures/plot.svg
:alt: A [plot]

The caption.
```

```{figure} ../figures/missing.svg
Lost caption.
```

```{recorded-run}
```

```{solution-start}
```

```{math}
e = mc^2
```
"""


def test_a_lessons_myst_becomes_notebook_markdown_that_jupyter_renders(tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "plot.svg").write_text("<svg/>", encoding="utf-8")
    figure_file = notebookmarkdown.figure_resolver(tmp_path / "lessons" / "lesson.md")
    converted = notebookmarkdown.convert(LESSON_MARKDOWN, figure_file=figure_file, transcript="loss 0.5\n")
    text = converted.text
    assert text.startswith("Intro with `jax.jit`, [the basics](doc:basics) and [](ref:label).\n### Exercise: Level 1")
    assert "MyST comment" not in text and "{" not in text.replace("```text", "")
    assert "Square it: $x^2$.\n<details><summary>Hint</summary>\n\nThink.\n\n</details>" in text
    assert "<details><summary>Answer and explanation</summary>\n\nBecause.\n\n</details>" in text
    assert "> **Note**\n>\n> Mind the gap.\n>\n> Twice." in text
    assert "![A \\[plot\\]](attachment:plot.svg)\n\n*The caption.*" in text
    assert "*Lost caption.*" in text and "missing.svg" not in text  # no file: the caption alone
    assert "```text\nloss 0.5\n```" in text
    assert "$$\ne = mc^2\n$$" in text
    assert converted.attachments == {"plot.svg": b"<svg/>"}


def test_roles_become_links_code_math_or_their_text():
    text = "{doc}`/docs/index`, {ref}`see <sec-a>`, {class}`jax.Array`, {math}`a_1`, {term}`tracer <Tracer>`"
    assert notebookmarkdown.roles(text) == "[](doc:/docs/index), [see](ref:sec-a), `jax.Array`, $a_1$, tracer"


def test_doc_and_ref_links_point_at_the_hosted_pages_or_keep_their_text():
    text = "[](doc:basics) [B](doc:../docs/index) [](doc:/docs/index) [](ref:sec-a) [Lost](doc:nowhere) [](ref:nolabel)"
    resolved = notebookmarkdown.resolve_links(
        text,
        base_url="https://course.example/",
        from_docname="lessons/one",
        documents={"lessons/basics": "The basics", "docs/index": "Home"},
        labels={"sec-a": ("lessons/basics", "sec-a", "Section A")},
    )
    assert resolved == (
        "[The basics](https://course.example/lessons/basics.html) [B](https://course.example/docs/index.html) "
        "[Home](https://course.example/docs/index.html) [Section A](https://course.example/lessons/basics.html#sec-a) "
        "Lost nolabel"
    )
    assert (
        notebookmarkdown.resolve_links(
            "[](doc:basics)", base_url="", from_docname="lessons/one", documents={"lessons/basics": "B"}, labels={}
        )
        == "[B](lessons/basics.html)"
    )


def test_an_image_attachment_is_svg_text_or_base64():
    assert notebookmarkdown.attachment(b"<svg/>", "a.svg") == {"image/svg+xml": "<svg/>"}
    assert notebookmarkdown.attachment(b"\x89PNG", "a.png") == {"image/png": "iVBORw=="}


def test_code_in_a_plain_fence_of_a_markdown_cell_is_kept_as_written():
    markdown = "Time it:\n\n```python\n%timeit f(x)\nprint('{func}`f`')\n```\n"
    converted = notebookmarkdown.convert(markdown, figure_file=lambda argument: None)
    assert "%timeit f(x)\nprint('{func}`f`')" in converted.text


def test_a_pasted_image_is_shown_from_its_cell_attachment_and_an_svg_one_is_left_to_fail():
    """As Jupyter and Colab save a pasted image; markdown-it shows no SVG data: address, so it stays unread."""
    cell = nbformat.v4.new_markdown_cell("![A chart](attachment:chart.png) and ![A square](attachment:sq.svg)")
    cell["attachments"] = {
        "chart.png": {"image/png": ["iVBORw0K\n", "GgoAAA==\n"]},
        "sq.svg": {"image/svg+xml": "PHN2Zz4="},
    }
    ipynbpages.show_attached_images(cell)
    assert cell.source == "![A chart](data:image/png;base64,iVBORw0KGgoAAA==) and ![A square](attachment:sq.svg)"

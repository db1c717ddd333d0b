"""At ``source-read``: decide what each document is, check its front matter, and hand it to the reader.

A page that is not built (invalid front matter, or left out of a build of chosen pages) becomes a stub: its
title, and for a page left out its headings and labels, so links to it resolve, no kernel starts for it, and a
bad header gives no follow-on noise. The author's text is never rewritten otherwise.
"""

from __future__ import annotations

from pathlib import Path

from myst_nb.core.read import is_myst_markdown_notebook
from sphinx.application import Sphinx

from . import cellscan, fingerprint, frontmatter, ipynbpages, lessonsource, pages
from .located import report_front_matter


def is_lesson(app: Sphinx, docname: str) -> bool:
    prefix = app.config.course_lessons_dir.strip("/") + "/"
    return docname.startswith(prefix) and not Path(docname).name.startswith("_")


def executes(path: Path) -> bool:
    """Whether the build executes the page in ``path``: every ``.ipynb`` page, and every MyST notebook."""
    if path.suffix == ".ipynb":
        return True
    return path.suffix == ".md" and is_myst_markdown_notebook(path.read_text(encoding="utf-8"))


def left_out(app: Sphinx, docname: str) -> bool:
    """Whether a build of chosen pages (``course_only_pages``: ``nox -s lesson``, a shard) leaves it out."""
    only = app.config.course_only_pages
    return bool(only) and docname not in only


def current_fingerprint(app: Sphinx) -> str:
    return fingerprint.environment_fingerprint([Path(app.srcdir, name) for name in app.config.course_environment_files])


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    path = Path(app.env.doc2path(docname))
    text = source[0]
    lesson = is_lesson(app, docname)
    pages.start_reading(pages.Reading(docname, path, None))
    if path.suffix == ".ipynb":
        read_notebook_file(app, docname, path, source)
        return
    if not lesson and not is_myst_markdown_notebook(text):
        cells = cells_of_a_prose_page(text)
        report_front_matter(docname, prose_problems(text) + cells)
        if cells:  # one message each, and no follow-on noise from the cells myst-nb would try to show
            source[0] = stub(text, path, "This page was not built: it has code cells but is not a notebook.")
        return
    if left_out(app, docname):
        why = "This page is not executed by this partial build; `nox -s docs` builds the whole site."
        source[0] = stub(text, path, why, keep_outline=True)
        return
    try:
        front = frontmatter.parse(text)
        problems = frontmatter.validate(front, path) if lesson else frontmatter.validate_notebook_page(front)
    except frontmatter.FrontMatterError as error:
        front, problems = None, [frontmatter.Problem(error.line, error.message)]
    if lesson and not problems and not is_myst_markdown_notebook(text):
        problems = [
            frontmatter.Problem(
                front.line_of("jupytext"),
                "front matter lacks 'jupytext: {text_representation: {format_name: myst}}', which makes the file "
                f"a notebook that the build executes (copy it from {frontmatter.TEMPLATE})",
            )
        ]
    if problems:
        report_front_matter(docname, problems)
        source[0] = stub(text, path, "This page was not built: its front matter is invalid.")
        return
    start_executed_page(app, docname, path, front, lesson)


def read_notebook_file(app: Sphinx, docname: str, path: Path, source: list[str]) -> None:
    """An ``.ipynb`` page: its metadata is its front matter (``jaxcourse.source.ipynbpages``)."""
    text = source[0]
    if left_out(app, docname):
        try:
            cells = ipynbpages.read(text).cells
        except ValueError:
            cells = []
        # Its cells hold no front matter: the blank line first keeps a leading '---' (a rule) from reading as one.
        markdown = "\n" + "\n\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
        source[0] = _orphan(path.stem, "This page is not executed by this partial build.", outline(markdown))
        return
    try:
        notebook = ipynbpages.read(text)
        front = ipynbpages.front_matter(text, notebook)
        problems = frontmatter.validate_notebook_page(front)
    except Exception as error:  # nbformat's assorted JSON and schema errors
        problems = [frontmatter.Problem(1, f"this notebook cannot be read: {error}")]
    if problems:
        report_front_matter(docname, problems)
        source[0] = _orphan(path.stem, "This page was not built: its metadata is invalid.", [])
        return
    start_executed_page(app, docname, path, front, False)


def start_executed_page(app: Sphinx, docname: str, path: Path, front: frontmatter.FrontMatter, lesson: bool) -> None:
    """Hand the page to the reader: it executes, with the settings of its front matter."""
    page_fingerprint = current_fingerprint(app)
    app.env.get_domain("course").fingerprints[docname] = page_fingerprint
    page = pages.Page(
        docname=docname,
        path=path,
        page_id=pages.page_id(docname, front, lesson),
        lesson=lesson,
        front=front,
        settings=frontmatter.execution_settings(front),
        fingerprint=page_fingerprint,
        figures_dir=Path(app.srcdir, app.config.course_figures_dir).resolve(),
        recorded_in=Path(app.config.nb_execution_cache_path) if app.config.course_require_recorded else None,
    )
    pages.start_reading(pages.Reading(docname, path, page))


def prose_problems(text: str) -> list[frontmatter.Problem]:
    """Settings a page that executes nothing cannot use."""
    if not text.startswith("---"):
        return []
    try:
        front = frontmatter.parse(text)
    except frontmatter.FrontMatterError:
        return []  # MyST reports front matter it cannot read
    return [
        frontmatter.Problem(
            front.line_of(key),
            f"'{key}:' has no effect here: this page is not a notebook, so nothing on it executes "
            "(a notebook page's front matter has 'jupytext' and 'kernelspec', as lessons/_template.md shows)",
        )
        for key in ("execution", "lesson")
        if key in front.data
    ]


def cells_of_a_prose_page(text: str) -> list[frontmatter.Problem]:
    """A page that is not a notebook runs none of its code cells: each is reported (myst-nb's warning is off)."""
    return [
        frontmatter.Problem(
            line,
            "this page is not a notebook, so this code cell never runs: give the page the 'jupytext' and "
            f"'kernelspec' front matter of {frontmatter.TEMPLATE} (without 'lesson:')",
        )
        for line in cellscan.written_cells(text)
    ]


def stub(text: str, path: Path, why: str, *, keep_outline: bool = False) -> str:
    """A short page in place of one that is not built, so links to it still resolve.

    It is an orphan: a stub needs no place in a table of contents (a lesson keeps its own). A page left
    out of a partial build keeps its ``outline``, since the pages that are built may link to its labels
    and headings; a page with problems keeps only its title, so that they give no follow-on noise.
    """
    try:
        title = frontmatter.parse(text).lesson.get("title")
    except frontmatter.FrontMatterError:
        title = None
    if not title:
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
    return _orphan(title, why, outline(text) if keep_outline else [])


def outline(text: str) -> list[str]:
    """What a link to a page points at, in order: its label targets and headings, each labelled directive (a
    figure, an exercise) as a titled rubric, and each labelled equation as it is written, so {eq} numbers it
    as the whole build does."""
    return [markup for _, markup in _outline(_markdown(text))]


def labels(text: str) -> set[str]:
    """The labels a page's markdown defines: its targets, its directives' names and its equations' labels."""
    return {label for label, _ in _outline(_markdown(text)) if label}


def _markdown(text: str) -> str:
    lines = text.splitlines()
    return "\n".join(lines[frontmatter.front_matter_end(lines) :])


def _outline(text: str, *, nested: bool = False) -> list[tuple[str | None, str]]:
    """(the label it defines or None, its markup in a stub) for each entry of :func:`outline`."""
    tokens = lessonsource.block_parser().parse(text + "\n")
    found: list[tuple[str | None, str]] = []
    for position, token in enumerate(tokens):
        if token.level != 0:
            continue
        if token.type == "myst_target":
            found.append((token.content, f"({token.content})="))
        elif token.type == "heading_open" and not nested:  # a directive's body has no sections
            found.append((None, f"{'#' * int(token.tag[1:])} {tokens[position + 1].content}"))
        elif token.type == "math_block_label":
            found.append((token.info, f"$$\n{token.content.strip()}\n$$ ({token.info})"))
        elif token.type in ("fence", "colon_fence") and (directive := lessonsource.DIRECTIVE.match(token.info)):
            body = token.content.splitlines()
            options, count = lessonsource.option_lines(body)
            label = (options.get("name") or options.get("label") or "").strip("\"'")  # ':name: "fig-boot"'
            if directive["name"] == "math" and label:
                found.append((label, "```{math}\n:label: " + label + "\n" + "\n".join(body[count:]) + "\n```"))
            elif directive["name"] != lessonsource.CODE_CELL:  # a cell's name is no label
                literal = directive["name"] in lessonsource.LITERAL_DIRECTIVES
                if label:  # a figure's argument is its file, a code block's its language: no title
                    untitled = literal or directive["name"] in ("figure", "image")
                    title = label if untitled else directive["argument"].strip() or label
                    found += [(label, f"({label})="), (None, f"```{{rubric}} {title}\n```")]
                if not literal:
                    found += _outline("\n".join(body[count:]), nested=True)  # a figure inside an exercise
    return found


def _orphan(title: str, why: str, outline: list[str]) -> str:
    """The stub's text: ``outline`` (its first ``#`` heading, else ``title``), and ``why`` under the title."""
    if not any(line.startswith("# ") for line in outline):
        outline = [f"# {title}", *outline]
    first = next(index for index, line in enumerate(outline) if line.startswith("# "))
    blocks = [*outline[: first + 1], why, *outline[first + 1 :]]
    # A label target stays on the line before the heading it names.
    body = "".join(block + ("\n" if block.startswith("(") else "\n\n") for block in blocks)
    return f"---\norphan: true\n---\n{body.rstrip()}\n"


def pages_run_in_another_environment(app: Sphinx, env, added, changed, removed) -> list[str]:
    """Executed pages last read under other packages or requirements are read, and executed, again."""
    current = current_fingerprint(app)
    return [docname for docname, seen in env.get_domain("course").fingerprints.items() if seen != current]

"""Show the verdicts of ``nox -s compat`` on the site: a page of lessons × JAX versions, and a line per lesson.

The verdicts are the file ``course_compatibility`` (``_build/compat.json``, written by ``jaxcourse.tools.compat``).
Without it, ``docs/compatibility.md`` is left out of the build and the lessons' headers say nothing about
other versions. Every page that shows the verdicts notes the file as a dependency, so an incremental build
reads it again when the file changes or disappears.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

from docutils import nodes
from packaging.version import Version
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective

from ..source import catalogue
from .directives import doc_link
from .placeholders import execution_report
from .report import build_table, page_link, table_row

#: The page that shows the matrix; built only when the verdicts exist.
PAGE = "docs/compatibility"


def verdicts_file(app_or_env: Sphinx | BuildEnvironment) -> Path:
    """The verdicts file named by ``course_compatibility``; from a Sphinx application or its environment."""
    return Path(app_or_env.srcdir, app_or_env.config.course_compatibility)


def read_verdicts(path: Path) -> dict[str, dict[str, dict]]:
    """version -> page id -> verdict, versions in order; {} when there is no file."""
    if not path.is_file():
        return {}
    return _parsed(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _parsed(path: Path, mtime_ns: int) -> dict[str, dict[str, dict]]:
    """Read once per process and file version: every executed page's header asks for it."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {version: data[version] for version in sorted(data, key=Version)}


def leave_out_page_without_verdicts(app: Sphinx, config) -> None:
    """At config-inited: no verdicts, no page (its link would promise a table that is not there)."""
    if not verdicts_file(app).is_file():
        config.exclude_patterns = [*config.exclude_patterns, f"{PAGE}.md"]


def header_line(app: Sphinx, page_id: str, docname: str) -> nodes.paragraph | None:
    """'Checked under other JAX versions: passes on …; fails on …', for a page's header; None without verdicts."""
    path = verdicts_file(app)
    if not path.is_file():
        return None
    app.env.note_dependency(str(path))
    verdicts = read_verdicts(path)
    parts = []
    for verb, status in (("passes", "pass"), ("fails", "fail")):
        if found := [version for version, pages in verdicts.items() if pages.get(page_id, {}).get("status") == status]:
            parts.append(f"{verb} on JAX {', '.join(found)}")
    if not parts:
        return None
    line = nodes.paragraph("", "", classes=["compat-versions"])
    line += nodes.Text(f"Checked by nox -s compat: {'; '.join(parts)} (")
    line += doc_link(PAGE, "all versions", docname)
    line += nodes.Text(").")
    return line


class CompatibilityMatrix(SphinxDirective):
    """The table of pages × JAX versions: pass, or the failing file and line and its message."""

    def run(self) -> list[nodes.Node]:
        path = verdicts_file(self.env)
        self.env.note_dependency(str(path))
        verdicts = read_verdicts(path)
        if not verdicts:
            return [nodes.paragraph("", "No verdicts yet: run nox -s compat -- VERSION.")]
        lessons_dir = self.config.course_lessons_dir.strip("/")
        self.env.note_dependency(str(Path(self.env.srcdir, lessons_dir)))
        lessons = catalogue.lessons(Path(self.env.srcdir), lessons_dir)
        titles = {lesson.id: lesson.meta["title"] for lesson in lessons}
        listed = {page for pages in verdicts.values() for page in pages}
        # Lessons in course order, then the other executed pages by name.
        order = [lesson.id for lesson in lessons if lesson.id in listed] + sorted(listed - set(titles))
        rows = []
        for page_id in order:
            docname = f"{lessons_dir}/{page_id}" if page_id in titles else page_id
            label = titles.get(page_id, page_id)
            name = doc_link(docname, label, self.env.docname) if docname in self.env.found_docs else nodes.Text(label)
            rows.append(table_row([name] + [self._verdict(pages.get(page_id)) for pages in verdicts.values()]))
        return [build_table(["compat-matrix"], ("Page", *(f"JAX {version}" for version in verdicts)), rows)]

    @staticmethod
    def _verdict(verdict: dict | None) -> nodes.Node:
        if verdict is None:
            return nodes.Text("not run")
        if verdict["status"] == "pass":
            changed = verdict.get("changed_outputs", 0)
            text = "pass" + (f" ({changed} output{'s differ' if changed != 1 else ' differs'})" if changed else "")
            return nodes.inline("", text, classes=["compat-pass"])
        cell = nodes.paragraph("", "", classes=["compat-fail"])
        cell += nodes.strong("", "fail")
        cell += nodes.Text(" at ")
        cell += nodes.literal("", verdict["where"])
        if verdict.get("message"):
            # As the build printed it: a literal, so that no smart quotes or markup touch the code it quotes.
            cell += nodes.Text(": ")
            cell += nodes.literal("", verdict["message"])
        return cell


def link_from_report(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """After the execution report's table: where the verdicts under other versions are, when there are any."""
    if not verdicts_file(app).is_file():
        return
    for placeholder in doctree.findall(execution_report):
        paragraph = nodes.paragraph()
        paragraph += nodes.Text("The same pages under other JAX versions: ")
        paragraph += page_link(app, docname, PAGE, "Which JAX versions this course runs on")
        paragraph += nodes.Text(".")
        placeholder.parent.insert(placeholder.parent.index(placeholder) + 1, paragraph)


def publish_verdicts(app: Sphinx, exception: Exception | None) -> None:
    """Put compat.json in the site, so that the next build of the site, weeks later, can show it again."""
    path = verdicts_file(app)
    if exception is None and app.builder.format == "html" and path.is_file():
        shutil.copyfile(path, Path(app.outdir, "compat.json"))

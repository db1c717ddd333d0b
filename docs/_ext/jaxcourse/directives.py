"""Directives authors and the site pages use: RecordedRun, LessonIndex, ExecutionReport."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from . import frontmatter
from .nodes import execution_report, recorded_run

logger = logging.getLogger(__name__)


class RecordedRun(SphinxDirective):
    """Place this build's run stamp and the lesson's printed transcript here."""

    def run(self) -> list[nodes.Node]:
        return [recorded_run()]


class ExecutionReport(SphinxDirective):
    """A table of every lesson's execution in this build (filled after all pages are read)."""

    def run(self) -> list[nodes.Node]:
        self.env.get_domain("course").note_report_page(self.env.docname)
        return [execution_report()]


def lesson_catalogue(srcdir: Path, lessons_dir: str) -> list[dict]:
    """Front matter of every valid lesson file, sorted by phase then order.

    Invalid lessons are left out here: their own build reports them, once.
    """
    lessons = []
    for path in sorted(Path(srcdir, lessons_dir).glob("*.md")):
        if path.name.startswith("_"):
            continue
        front, problems = frontmatter.read_lesson(path)
        if not problems:
            lessons.append({**front.lesson, "docname": f"{lessons_dir}/{path.stem}", "path": path})
    lessons.sort(key=lambda lesson: (lesson["phase"], lesson["order"], lesson["id"]))
    return lessons


class LessonIndex(SphinxDirective):
    """The lessons grouped by phase, built from their front matter, with a hidden toctree."""

    def run(self) -> list[nodes.Node]:
        lessons_dir = self.config.course_lessons_dir.strip("/")
        lessons = lesson_catalogue(Path(self.env.srcdir), lessons_dir)
        # Only lessons in this build (nox -s lesson builds one).
        lessons = [lesson for lesson in lessons if lesson["docname"] in self.env.found_docs]
        self.env.note_dependency(str(Path(self.env.srcdir, lessons_dir)))
        result: list[nodes.Node] = []
        phases: dict[int, list[dict]] = {}
        for lesson in lessons:
            self.env.note_dependency(str(lesson["path"]))
            phases.setdefault(lesson["phase"], []).append(lesson)
        for phase, members in phases.items():
            titles = {lesson["phase_title"] for lesson in members}
            if len(titles) > 1:
                logger.warning(
                    f"lessons of phase {phase} disagree on phase_title: {sorted(titles)}",
                    location=(self.env.docname, self.lineno),
                    type="course",
                    subtype="catalogue",
                )
            container = nodes.container(classes=["lesson-phase"])
            container += nodes.rubric("", f"Phase {phase:02d}: {members[0]['phase_title']}")
            listing = nodes.enumerated_list(classes=["lesson-list"])
            for lesson in members:
                item = nodes.list_item()
                paragraph = nodes.paragraph()
                reference = addnodes.pending_xref(
                    "",
                    refdomain="std",
                    reftype="doc",
                    reftarget="/" + lesson["docname"],
                    refexplicit=True,
                    refdoc=self.env.docname,
                )
                reference += nodes.inline("", lesson["title"])
                paragraph += reference
                paragraph += nodes.inline(
                    "",
                    f" · {lesson['id']} · about {lesson['minutes']} minutes · {lesson['device']}",
                    classes=["lesson-list-meta"],
                )
                item += paragraph
                listing += item
            container += listing
            result.append(container)
        toctree = addnodes.toctree()
        toctree["parent"] = self.env.docname
        toctree["entries"] = [(None, lesson["docname"]) for lesson in lessons]
        toctree["includefiles"] = [lesson["docname"] for lesson in lessons]
        toctree["maxdepth"] = 1
        toctree["glob"] = False
        toctree["hidden"] = True
        toctree["caption"] = "Lessons"
        toctree["titlesonly"] = True
        toctree["numbered"] = 0
        toctree["includehidden"] = False
        wrapper = nodes.compound(classes=["toctree-wrapper"])
        wrapper += toctree
        self.add_name(wrapper)
        result.append(wrapper)
        return result

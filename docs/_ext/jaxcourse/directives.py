"""Directives authors and the site pages use: RecordedRun, LessonIndex, ExecutionReport."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from . import catalogue
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


class LessonIndex(SphinxDirective):
    """The lessons grouped by phase, built from their front matter, with a hidden toctree."""

    def run(self) -> list[nodes.Node]:
        lessons_dir = self.config.course_lessons_dir.strip("/")
        lessons = catalogue.lessons(Path(self.env.srcdir), lessons_dir)
        lessons = [lesson for lesson in lessons if f"{lessons_dir}/{lesson.id}" in self.env.found_docs]
        self.env.note_dependency(str(Path(self.env.srcdir, lessons_dir)))
        result: list[nodes.Node] = []
        phases: dict[int, list[catalogue.Lesson]] = {}
        for lesson in lessons:
            self.env.note_dependency(str(lesson.path))
            phases.setdefault(lesson.meta["phase"], []).append(lesson)
        for phase, members in phases.items():
            titles = {lesson.meta["phase_title"] for lesson in members}
            if len(titles) > 1:
                logger.warning(
                    f"lessons of phase {phase} disagree on phase_title: {sorted(titles)}",
                    location=(self.env.docname, self.lineno),
                    type="course",
                    subtype="catalogue",
                )
            container = nodes.container(classes=["lesson-phase"])
            container += nodes.rubric("", f"Phase {phase:02d}: {members[0].meta['phase_title']}")
            listing = nodes.enumerated_list(classes=["lesson-list"])
            for lesson in members:
                meta = lesson.meta
                paragraph = nodes.paragraph()
                reference = addnodes.pending_xref(
                    "",
                    refdomain="std",
                    reftype="doc",
                    reftarget=f"/{lessons_dir}/{lesson.id}",
                    refexplicit=True,
                    refdoc=self.env.docname,
                )
                reference += nodes.inline("", meta["title"])
                paragraph += reference
                devices = f" · {meta['cpu_devices']} simulated CPU devices" if meta.get("cpu_devices") else ""
                paragraph += nodes.inline(
                    "",
                    f" · {lesson.id} · about {meta['minutes']} minutes · {meta['device']}{devices}",
                    classes=["lesson-list-meta"],
                )
                listing += nodes.list_item("", paragraph)
            container += listing
            result.append(container)
        # The navigation: Sphinx's own toctree directive, one per phase under its caption, written out
        # and parsed here, so the sidebar groups the lessons as the home page does.
        toctrees = []
        for phase, members in phases.items():
            entries = "\n".join(f"/{lessons_dir}/{lesson.id}" for lesson in members)
            caption = f"Phase {phase:02d}: {members[0].meta['phase_title']}"
            toctrees.append(
                f"```{{toctree}}\n:hidden:\n:caption: {caption}\n:maxdepth: 1\n:titlesonly:\n\n{entries}\n```\n"
            )
        holder = nodes.container()
        text = "\n".join(toctrees)
        self.state.nested_parse(StringList(text.splitlines(), source=self.env.docname), self.content_offset, holder)
        result.extend(holder.children)
        return result

"""Directives authors and the site pages use: RecordedRun, StartHere, LessonIndex, ExecutionReport."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ..source import catalogue
from .placeholders import execution_report, recorded_run

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


def _course_lessons(directive: SphinxDirective) -> dict[int, list[catalogue.Lesson]]:
    """The site's lessons by phase, in course order, each noted as a dependency of the page that lists them."""
    env = directive.env
    lessons_dir = directive.config.course_lessons_dir.strip("/")
    lessons = catalogue.lessons(Path(env.srcdir), lessons_dir)
    lessons = [lesson for lesson in lessons if f"{lessons_dir}/{lesson.id}" in env.found_docs]
    env.note_dependency(str(Path(env.srcdir, lessons_dir)))
    phases: dict[int, list[catalogue.Lesson]] = {}
    for lesson in lessons:
        env.note_dependency(str(lesson.path))
        phases.setdefault(lesson.meta["phase"], []).append(lesson)
    return phases


def phase_caption(phase: int, members: list[catalogue.Lesson]) -> str:
    return f"Phase {phase:02d}: {members[0].meta['phase_title']}"


def phase_id(phase: int, members: list[catalogue.Lesson]) -> str:
    """The anchor of a phase's heading on the home page, e.g. ``phase-01-jax-foundations``."""
    return nodes.make_id(phase_caption(phase, members))


def duration(minutes: int) -> str:
    """``45 minutes``, ``1 h``, ``4 h 5 min``: a study time as a reader reads it."""
    hours, rest = divmod(int(minutes), 60)
    if not hours:
        return _count(rest, "minute")
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def doc_link(docname: str, text: str, fromdocname: str) -> addnodes.pending_xref:
    """A link to the page ``docname`` from the page ``fromdocname``, as ``{doc}`` makes (resolved when written)."""
    link = addnodes.pending_xref(
        "", refdomain="std", reftype="doc", reftarget=f"/{docname}", refexplicit=True, refdoc=fromdocname
    )
    link += nodes.inline("", text)
    return link


def _lesson_link(directive: SphinxDirective, lesson: catalogue.Lesson) -> addnodes.pending_xref:
    lessons_dir = directive.config.course_lessons_dir.strip("/")
    return doc_link(f"{lessons_dir}/{lesson.id}", lesson.meta["title"], directive.env.docname)


def _lesson_meta(lesson: catalogue.Lesson, details: str) -> nodes.inline:
    """The grey line after a lesson's link: its id (kept on one line by the style sheet), then ``details``."""
    return nodes.inline(
        "",
        "",
        nodes.Text(" · "),
        nodes.inline("", lesson.id, classes=["lesson-id"]),
        nodes.Text(f" · {details}"),
        classes=["lesson-list-meta"],
    )


class StartHere(SphinxDirective):
    """Where a newcomer begins, then every phase with its lessons and time: built from the front matter."""

    def run(self) -> list[nodes.Node]:
        phases = _course_lessons(self)
        if not phases:
            return []
        box = nodes.container(classes=["start-here"])
        first = next(iter(phases.values()))[0]
        lead = nodes.paragraph(classes=["start-first"])
        lead += nodes.strong("", "Start here: ")
        lead += _lesson_link(self, first)
        lead += _lesson_meta(first, f"about {duration(first.meta['minutes'])}")
        box += lead
        lessons = [lesson for members in phases.values() for lesson in members]
        total = sum(lesson.meta["minutes"] for lesson in lessons)
        box += nodes.paragraph(
            "",
            f"The course has {_count(len(phases), 'phase')} and {_count(len(lessons), 'lesson')}, about "
            f"{duration(total)} of study in all. Each phase builds on the ones before it:",
        )
        listing = nodes.bullet_list(classes=["start-phases"])
        for phase, members in phases.items():
            item = nodes.paragraph()
            item += nodes.reference("", phase_caption(phase, members), refid=phase_id(phase, members))
            minutes = sum(lesson.meta["minutes"] for lesson in members)
            item += nodes.inline(
                "", f" · {_count(len(members), 'lesson')} · about {duration(minutes)}", classes=["lesson-list-meta"]
            )
            listing += nodes.list_item("", item)
        box += listing
        return [box]


class LessonIndex(SphinxDirective):
    """The lessons under a heading per phase, built from their front matter, with a hidden toctree per phase.

    Each phase is a section, so its heading is in the page's outline (a screen reader's list of headings,
    the page's table of contents) one level below the heading the directive stands under.
    """

    def run(self) -> list[nodes.Node]:
        lessons_dir = self.config.course_lessons_dir.strip("/")
        phases = _course_lessons(self)
        result: list[nodes.Node] = []
        for phase, members in phases.items():
            titles = {lesson.meta["phase_title"] for lesson in members}
            if len(titles) > 1:
                logger.warning(
                    f"lessons of phase {phase} disagree on phase_title: {sorted(titles)}",
                    location=(self.env.docname, self.lineno),
                    type="course",
                    subtype="catalogue",
                )
            caption = phase_caption(phase, members)
            section = nodes.section(ids=[phase_id(phase, members)], names=[nodes.fully_normalize_name(caption)])
            section += nodes.title("", caption)
            section["classes"].append("lesson-phase")
            self.state.document.note_implicit_target(section, section)
            listing = nodes.enumerated_list(classes=["lesson-list"])
            for lesson in members:
                meta = lesson.meta
                paragraph = nodes.paragraph()
                paragraph += _lesson_link(self, lesson)
                devices = f" · {meta['cpu_devices']} simulated CPU devices" if meta.get("cpu_devices") else ""
                paragraph += _lesson_meta(lesson, f"about {meta['minutes']} minutes · {meta['device']}{devices}")
                listing += nodes.list_item("", paragraph)
            section += listing
            # The navigation: Sphinx's own toctree directive, written out and parsed here, in the phase's
            # section, so the sidebar groups the lessons under the same captions as the page.
            entries = "\n".join(f"/{lessons_dir}/{lesson.id}" for lesson in members)
            toctree = f"```{{toctree}}\n:hidden:\n:caption: {caption}\n:maxdepth: 1\n:titlesonly:\n\n{entries}\n```\n"
            holder = nodes.container()
            self.state.nested_parse(
                StringList(toctree.splitlines(), source=self.env.docname), self.content_offset, holder
            )
            section.extend(holder.children)
            result.append(section)
        return result

"""What sits under a page's title: a lesson's phase, study time and device, the run stamp, downloads."""

from __future__ import annotations

from docutils import nodes

from . import stamps


def insert_header(
    doctree: nodes.document,
    lesson: dict | None,
    stamp: dict | None,
    fresh: bool,
    download_links: nodes.Node | None,
    versions_line: nodes.Node | None = None,
) -> None:
    """The lesson's metadata (lessons only), where and when this page ran, then other JAX versions' verdicts."""
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None or not section.children or not isinstance(section[0], nodes.title):
        return
    header = nodes.container(classes=["lesson-header" if lesson else "page-header"])
    if lesson:
        phase = f"Phase {lesson['phase']:02d}: {lesson['phase_title']}"
        meta = f"{phase} · about {lesson['minutes']} minutes · {lesson['device']}"
        header += nodes.paragraph("", meta, classes=["lesson-meta"])
    if stamp:
        stamp_node = nodes.paragraph("", "", classes=["run-stamp", "fresh" if fresh else "reused"])
        stamp_node += nodes.inline("", stamps.stamp_text(stamp, fresh))
        header += stamp_node
    if versions_line is not None:
        header += versions_line
    if download_links is not None:
        header += download_links
    if header.children:
        section.insert(1, header)

"""Placeholder nodes, replaced before writing; each builder skips a leftover one."""

from __future__ import annotations

from docutils import nodes


class recorded_run(nodes.General, nodes.Element):
    """Where a lesson's stamp and printed transcript go ("Recorded reference execution")."""


class execution_report(nodes.General, nodes.Element):
    """Where the site-wide table of lesson executions goes."""


class change_report(nodes.General, nodes.Element):
    """Where the comparison of this build's recordings with an earlier site's goes."""


def skip_placeholder(self, node: nodes.Element) -> None:
    raise nodes.SkipNode


PLACEHOLDERS = (recorded_run, execution_report, change_report)

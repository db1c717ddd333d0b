"""Read what the lesson's kernel recorded out of the parsed page.

myst-nb renders each executed cell as a container carrying its metadata. The
hidden setup cell publishes the run stamp, the hidden verdict cell publishes
the figures the run wrote, and every ``print`` becomes a stream output; this
module collects those from the doctree in page order.
"""

from __future__ import annotations

import dataclasses
import json
import re

from docutils import nodes

from .inject import SETUP_TAG, VERDICT_TAG

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CELL_FRAME = re.compile(r"Cell In\[(\d+)\], line (\d+)")


@dataclasses.dataclass
class KernelRecord:
    stamp: dict | None = None
    verdict: dict | None = None
    transcript: list[str] = dataclasses.field(default_factory=list)
    setup_cell: nodes.Element | None = None
    verdict_cell: nodes.Element | None = None
    code_cells: list[nodes.Element] = dataclasses.field(default_factory=list)


def is_code_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def cell_tags(cell: nodes.Element) -> list[str]:
    return list((cell.get("cell_metadata") or {}).get("tags", []))


def _outputs(cell: nodes.Element, kind: str) -> list[str]:
    return [
        block.astext()
        for block in cell.findall(nodes.literal_block)
        if "output" in block["classes"] and kind in block["classes"]
    ]


def _published(cell: nodes.Element) -> dict | None:
    for text in _outputs(cell, "text_plain"):
        try:
            return json.loads(text)
        except ValueError:
            continue
    return None


def collect(doctree: nodes.document) -> KernelRecord:
    """The stamp, verdict and printed transcript of an executed lesson page."""
    record = KernelRecord()
    for cell in doctree.findall(is_code_cell):
        tags = cell_tags(cell)
        if SETUP_TAG in tags:
            record.setup_cell = cell
            record.stamp = _published(cell)
        elif VERDICT_TAG in tags:
            record.verdict_cell = cell
            record.verdict = _published(cell)
        else:
            record.code_cells.append(cell)
        if SETUP_TAG not in tags:
            record.transcript.extend(_outputs(cell, "stream"))
    return record


def failing_cell(record: KernelRecord) -> nodes.Element | None:
    """The cell that stopped execution: the last one the kernel started."""
    cells = [record.setup_cell, *record.code_cells, record.verdict_cell]
    started = [cell for cell in cells if cell is not None and cell.get("exec_count") is not None]
    return max(started, key=lambda cell: cell["exec_count"], default=None)


def error_summary(cell: nodes.Element) -> tuple[str | None, int | None]:
    """The final ``Error: message`` line of a cell's traceback, and the line in the cell."""
    for text in _outputs(cell, "traceback"):
        plain = _ANSI.sub("", text)
        frames = [int(line) for count, line in _CELL_FRAME.findall(plain) if str(cell.get("exec_count")) == count]
        lines = [line.strip() for line in plain.splitlines() if line.strip()]
        summary = lines[-1] if lines else None
        return summary, (frames[-1] if frames else None)
    return None, None

"""``.ipynb`` pages under docs/: read as the course reads a MyST page, located by the lines of their JSON.

Their front matter is the notebook's metadata. nbformat writes one line of a cell's source per line of JSON,
so a cell is reported at its ``"source"`` key, and a statement at the line that holds it.
"""

from __future__ import annotations

import json
import re

import nbformat
from nbformat import NotebookNode

from . import frontmatter

_KEY = re.compile(r'^(?P<indent>\s*)"(?P<key>[^"]+)":')


def is_notebook_json(text: str) -> bool:
    return text.lstrip().startswith("{")


#: The kernel of a notebook that names none (four of the JAX docs' notebooks): Jupyter opens it in its default
#: kernel, Python 3, and so does the course, whose "python3" alias is the course kernel. Unnamed, nbclient would
#: start a plain kernel, without the course's records: no statement line for a failure, no crash trail.
DEFAULT_KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


#: The image types of a cell attachment that a page shows as a data: address: the ones markdown-it lets through (an
#: SVG attachment stays 'attachment:x.svg', which the build reports as an image file it cannot read).
_ATTACHED_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def read(text: str) -> NotebookNode:
    notebook = nbformat.reads(text, as_version=4)
    notebook.metadata.setdefault("kernelspec", dict(DEFAULT_KERNELSPEC))
    for cell in notebook.cells:
        show_attached_images(cell)
    return notebook


def show_attached_images(cell: NotebookNode) -> None:
    """A markdown cell's attached images, as Jupyter and Colab save a pasted one ('![a chart](attachment:chart.png)'),
    written into its text as data: addresses, on the same line: myst-nb does not read attachments."""
    for name, bundle in cell.get("attachments", {}).items():
        if mime := next((kind for kind in _ATTACHED_IMAGES if kind in bundle), None):
            data = "".join("".join(bundle[mime]).split())  # base64 may come in lines
            cell.source = cell.source.replace(f"(attachment:{name})", f"(data:{mime};base64,{data})")


def source_lines(text: str, notebook: NotebookNode) -> list[int] | None:
    """Per cell, the 0-based line of its ``"source"`` key in the JSON; None if the layout is not nbformat's.

    nbformat writes each cell's keys in order, ``"source"`` last, one source line per JSON line.
    """
    cell_indent = None
    found = []
    for number, line in enumerate(text.splitlines()):
        if not (match := _KEY.match(line)):
            continue
        if match["key"] == "cell_type" and cell_indent is None:
            cell_indent = match["indent"]
        if match["key"] == "source" and match["indent"] == cell_indent:
            found.append(number)
    return found if len(found) == len(notebook.cells) else None


def front_matter(text: str, notebook: NotebookNode) -> frontmatter.FrontMatter:
    """The notebook's metadata as a page's front matter, each top-level key at its JSON line."""
    lines = text.splitlines()
    # The notebook's own metadata is the top-level key, indented by at most one space (after the cells).
    top = next((number for number, line in enumerate(lines) if re.match(r'^ ?"metadata":', line)), 0)
    data = json.loads(json.dumps(notebook.metadata))
    key_lines: dict[str, int] = {}
    for number in range(top, len(lines)):
        if (match := _KEY.match(lines[number])) and match["key"] in data:
            key_lines.setdefault(match["key"], number + 1)
    return frontmatter.FrontMatter(data=data, line_count=0, key_lines=key_lines)

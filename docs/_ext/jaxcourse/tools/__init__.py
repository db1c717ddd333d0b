"""Command-line tools: the checker, a new lesson, porting pages, the site build and its shards,
the compatibility run, and the workflows' reports.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def report_arguments(
    module: str, doc: str, argv: list[str], *, source: tuple[str, str], out: str, link: tuple[str, str]
) -> argparse.Namespace:
    """The command line of a workflow's report: ``python -m jaxcourse.tools.MODULE SOURCE OUT [--LINK URL]``.

    ``source`` and ``link`` are (name, help) pairs; ``out`` is the help of the markdown file written.
    """
    parser = argparse.ArgumentParser(prog=f"python -m jaxcourse.tools.{module}", description=doc.splitlines()[0])
    parser.add_argument(source[0], type=Path, help=source[1])
    parser.add_argument("out", type=Path, help=out)
    parser.add_argument(f"--{link[0]}", help=link[1])
    return parser.parse_args(argv)

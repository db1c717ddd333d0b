"""Bring MyST notebook pages written for another Sphinx site (the JAX docs) into this one.

``python -m jaxcourse.port SOURCE_DOCS DEST [NAME ...]`` (``nox -s port -- ...``)
copies each ``SOURCE_DOCS/NAME.md`` to ``DEST/NAME.md`` and changes only what
cannot resolve here: cross-references (roles and MyST links) to labels,
glossary terms and documents that exist only on the other site become their
plain text, and the front
matter marks the page ``orphan`` (it needs no place in a table of contents)
and, where the page draws images, gives them alt text, which this site
requires of every image (``--alt NAME=TEXT``). Everything else (text, code,
math, tags) is left exactly as it was, so the page is tested as its authors
wrote it. References between the ported pages, and to labels this site
defines, are kept.

The pages become first-class executed pages of this site: stamped, reported
and recorded like lessons. Keep third-party text out of the repository: port
into a scratch clone (see docs/contributing.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

#: A label target line, ``(label)=``.
_TARGET = re.compile(r"^\((?P<label>[^)\s]+)\)=\s*$", re.M)
#: ``{ref}`label``` or ``{ref}`text <label>```, and the same for ``{term}`` and ``{doc}``.
_ROLE = re.compile(r"\{(?P<role>ref|term|doc)\}`(?P<body>[^`]+)`")
_EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
#: A MyST link whose target is a bare label or document name: ``[Tracing](tracing-tutorial)``.
_LABEL_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<target>[A-Za-z0-9_-]+)\)")


def labels(text: str) -> set[str]:
    return {match["label"] for match in _TARGET.finditer(text)}


def plain(role: str, body: str) -> str:
    """The words a reader sees for a reference that cannot resolve here."""
    explicit = _EXPLICIT.match(body)
    if explicit and explicit["text"]:
        return explicit["text"]
    target = body.strip()
    if role == "doc":
        return target.rsplit("/", 1)[-1].replace("_", " ").replace("-", " ")
    if role == "ref":
        return target.replace("-", " ").replace("_", " ")
    return target.lstrip("~")


def port_text(text: str, known_labels: set[str], known_docs: set[str], image_alt: str | None = None) -> str:
    """``text`` with its unresolvable references made plain, and ``orphan: true`` (and the alt text of
    its images) in its front matter."""

    def replace(match: re.Match) -> str:
        role, body = match["role"], match["body"]
        explicit = _EXPLICIT.match(body)
        target = (explicit["target"] if explicit else body).strip()
        if role == "ref" and target in known_labels:
            return match[0]
        if role == "doc" and target.lstrip("/") in known_docs:
            return match[0]
        return plain(role, body)

    def replace_link(match: re.Match) -> str:
        target = match["target"]
        return match[0] if target in known_labels or target in known_docs else match["text"]

    ported = _LABEL_LINK.sub(replace_link, _ROLE.sub(replace, text))
    if not ported.startswith("---\n"):
        return ported
    added = "" if "\norphan:" in ported.split("\n---", 1)[0] else "orphan: true\n"
    if image_alt:
        # myst-nb's per-page image options: the alt text of every image the page's cells display.
        added += f"mystnb:\n  render_image_options:\n    alt: {json.dumps(image_alt)}\n"
    return "---\n" + added + ported[len("---\n") :]


def port(
    source_docs: Path,
    dest: Path,
    names: list[str],
    site_labels: set[str] = frozenset(),
    image_alt: dict[str, str] | None = None,
) -> list[Path]:
    """Port ``names`` from ``source_docs`` into ``dest``; return the written files."""
    texts = {name: (source_docs / f"{name}.md").read_text(encoding="utf-8") for name in names}
    known = set(site_labels).union(*(labels(text) for text in texts.values()))
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in texts.items():
        path = dest / f"{name}.md"
        alt = (image_alt or {}).get(name)
        path.write_text(port_text(text, known, set(names), alt), encoding="utf-8")
        written.append(path)
    return written


#: The JAX tutorials this site is tested against (docs/ of jax-ml/jax).
JAX_TUTORIALS = (
    "jit-compilation",
    "control-flow",
    "random-numbers",
    "automatic-differentiation",
    "key-concepts",
    "pytrees",
    "stateful-computations",
    "parallel",
)
#: Alt text for the JAX tutorials that draw an image, describing what their code plots.
JAX_TUTORIAL_IMAGES = {
    "stateful-computations": (
        "Scatter plot of 128 noisy samples of y = 2x - 1, with the fitted regression line drawn in red through them."
    ),
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxcourse.port", description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the other site's docs folder, e.g. a jax-ml/jax checkout's docs/")
    parser.add_argument("dest", type=Path, help="where the pages go, e.g. docs/ported")
    parser.add_argument("names", nargs="*", help=f"page names without .md (default: {', '.join(JAX_TUTORIALS)})")
    parser.add_argument(
        "--alt",
        action="append",
        default=[],
        metavar="NAME=TEXT",
        help="alt text for the images page NAME displays (the JAX tutorials' are built in)",
    )
    arguments = parser.parse_args(argv)
    image_alt = dict(JAX_TUTORIAL_IMAGES)
    for item in arguments.alt:
        name, _, text = item.partition("=")
        image_alt[name] = text
    for path in port(arguments.source, arguments.dest, arguments.names or list(JAX_TUTORIALS), image_alt=image_alt):
        print(f"ported {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

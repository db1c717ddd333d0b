"""A lesson's MyST markdown as plain notebook markdown (Jupyter, JupyterLab, Colab), for the downloads.

``{exercise}`` becomes a heading; ``{hint}`` and collapsed admonitions ``<details>`` blocks; ``{figure}`` an
attached image over its caption; other admonitions block quotes; ``{recorded-run}`` the run's transcript; the
solution markers (the caller moves the solutions) nothing. ``{doc}`` and ``{ref}`` become ``doc:``/``ref:``
links, resolved once the build has read every page (:func:`resolve_links`); any other role becomes its text.
"""

from __future__ import annotations

import base64
import dataclasses
import posixpath
import re
from pathlib import Path

from .lessonsource import DIRECTIVE, block_parser, option_lines

_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]+)`")
_EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
#: Collapsed in the page, so collapsed in the notebook.
_COLLAPSED_TITLES = {"hint": "Hint"}


@dataclasses.dataclass
class Converted:
    """A markdown cell's text in notebook markdown, and the images it embeds (file name -> bytes)."""

    text: str
    attachments: dict[str, bytes] = dataclasses.field(default_factory=dict)


def convert(markdown: str, *, figure_file, transcript: str = "") -> Converted:
    """``markdown`` (one cell's MyST) as notebook markdown.

    ``figure_file(path)`` returns the file a ``{figure}`` argument names, or None.
    """
    result = Converted("")
    result.text = _convert_blocks(markdown, result, figure_file, transcript).strip()
    return result


def _convert_blocks(markdown: str, result: Converted, figure_file, transcript: str) -> str:
    lines = markdown.splitlines()
    out: list[str] = []
    position = 0
    for token in block_parser().parse(markdown + "\n"):
        if token.level != 0 or token.map is None or token.type not in ("fence", "colon_fence"):
            continue
        start, stop = token.map
        directive = DIRECTIVE.match(token.info.strip())
        out.append(roles("\n".join(lines[position:start])))
        position = stop
        if not directive:  # a plain code block: its lines are code, kept as written ('%timeit' too)
            out.append("\n".join(lines[start:stop]))
            continue
        out.append(_directive(directive["name"], directive["argument"], token.content, result, figure_file, transcript))
    out.append(roles("\n".join(lines[position:])))
    return "\n".join(part for part in out if part is not None)


def _directive(name: str, argument: str, content: str, result: Converted, figure_file, transcript: str) -> str:
    lines = content.splitlines()
    options, count = option_lines(lines)
    body = "\n".join(lines[count:]).strip("\n")
    inner = _convert_blocks(body, result, figure_file, transcript).strip() if body else ""
    if name in ("solution-start", "solution-end", "code-cell"):
        return ""
    if name == "exercise":
        return f"### Exercise: {argument}\n\n{inner}\n"
    if name == "figure":
        path = figure_file(argument)
        caption = f"*{inner}*\n" if inner else ""
        if path is None:
            return caption
        result.attachments[path.name] = path.read_bytes()
        alt = options.get("alt", "").strip().replace("[", "\\[").replace("]", "\\]")  # a link text: keep it one
        return f"![{alt}](attachment:{path.name})\n" + (f"\n{caption}" if caption else "")
    if name == "recorded-run":
        return f"<details><summary>Transcript of the build's run</summary>\n\n```text\n{transcript}```\n\n</details>\n"
    title = argument or _COLLAPSED_TITLES.get(name, name.replace("-", " ").capitalize())
    if name == "hint" or "dropdown" in options.get("class", ""):
        return f"<details><summary>{title}</summary>\n\n{inner}\n\n</details>\n"
    if name == "math":
        return f"$$\n{body}\n$$\n"
    if name in ("code-block", "code"):
        return f"```{argument}\n{body}\n```\n"
    quoted = "\n".join(f"> {line}" if line else ">" for line in inner.splitlines())
    return f"> **{title}**\n>\n{quoted}\n"


def roles(text: str) -> str:
    """Roles as notebook markdown: {doc} and {ref} as links to resolve later, any other role as code or text."""

    def replace(match: re.Match) -> str:
        role, body = match["role"], match["body"]
        explicit = _EXPLICIT.match(body)
        label, target = (explicit["text"], explicit["target"]) if explicit else ("", body)
        if role in ("doc", "ref"):
            return f"[{label}]({role}:{target.strip()})"
        if role in ("func", "class", "meth", "mod", "attr", "obj", "data", "py:func", "py:class"):
            return f"`{(label or target).lstrip('~')}`"
        if role == "math":
            return f"${body}$"
        return label or target

    kept = [line for line in text.splitlines() if not line.lstrip().startswith("%")]  # MyST comments
    return _ROLE.sub(replace, "\n".join(kept))


_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<role>doc|ref):(?P<target>[^)\s]+)\)")


def resolve_links(text: str, *, base_url: str, from_docname: str, documents: dict, labels: dict) -> str:
    """``doc:`` and ``ref:`` links as links to the hosted site.

    ``documents``: docname -> title; ``labels``: label -> (docname, anchor, title). A target
    that does not resolve keeps its text, unlinked.
    """

    def address(docname: str, anchor: str = "") -> str:
        page = f"{docname}.html" + (f"#{anchor}" if anchor else "")
        return f"{base_url.rstrip('/')}/{page}" if base_url else page

    def replace(match: re.Match) -> str:
        text, role, target = match["text"], match["role"], match["target"]
        if role == "doc":
            base = "" if target.startswith("/") else posixpath.dirname(from_docname)
            docname = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
            if docname in documents:
                return f"[{text or documents[docname]}]({address(docname)})"
            return text or target
        if target in labels:
            docname, anchor, title = labels[target]
            return f"[{text or title}]({address(docname, anchor)})"
        return text or target

    return _LINK.sub(replace, text)


def attachment(data: bytes, name: str) -> dict:
    """An nbformat attachment bundle for an image file."""
    if name.endswith(".svg"):
        return {"image/svg+xml": data.decode("utf-8")}
    return {"image/png": base64.b64encode(data).decode("ascii")}


def figure_resolver(page_path: Path):
    """A ``figure_file`` for :func:`convert`: a {figure} argument, relative to the page, as a file."""

    def figure_file(argument: str) -> Path | None:
        path = (page_path.parent / argument.strip()).resolve()
        return path if path.is_file() else None

    return figure_file

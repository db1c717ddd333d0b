"""A lesson's MyST markdown as plain notebook markdown, for the downloads.

Jupyter, JupyterLab and Colab render CommonMark with math and a little HTML;
MyST's directives and roles would show as raw text there. Each directive the
course uses becomes its notebook form:

- ``{exercise} Level`` becomes a heading and its text; ``{hint}`` and
  collapsed admonitions (``Compare your reasoning``, ``Answer and
  explanation``) become ``<details>`` blocks, still closed until opened;
- ``{figure}`` becomes an image, embedded in the cell as an attachment, with
  its caption under it;
- other admonitions become block quotes with their title;
- ``{recorded-run}`` becomes the run's transcript;
- ``{doc}`` and ``{ref}`` become links to the hosted pages: written here as
  ``doc:`` and ``ref:`` links, and resolved when the build has read every
  page (:func:`resolve_links`); any other role becomes its text.

``{solution-start}`` and ``{solution-end}`` are markers the caller uses to
move the solutions after the exercises; here they become nothing.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import re
from pathlib import Path

from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

from .lessonsource import MYST_EXTENSIONS

_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<argument>.*)$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")
_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]+)`")
_EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
#: Collapsed in the page, so collapsed in the notebook.
_COLLAPSED_TITLES = {"hint": "Hint"}


@dataclasses.dataclass
class Converted:
    """A markdown cell's text in notebook markdown, and the images it embeds (file name -> bytes)."""

    text: str
    attachments: dict[str, bytes] = dataclasses.field(default_factory=dict)


@functools.cache
def _parser():
    parser = create_md_parser(MdParserConfig(enable_extensions=set(MYST_EXTENSIONS)), RendererHTML)
    parser.disable("inline", ignoreInvalid=True)
    return parser


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
    for token in _parser().parse(markdown + "\n"):
        if token.level != 0 or token.map is None or token.type not in ("fence", "colon_fence"):
            continue
        start, stop = token.map
        directive = _DIRECTIVE.match(token.info.strip())
        out.append(roles("\n".join(lines[position:start])))
        position = stop
        if not directive:  # a plain code block: its lines are code, kept as written ('%timeit' too)
            out.append("\n".join(lines[start:stop]))
            continue
        out.append(_directive(directive["name"], directive["argument"], token.content, result, figure_file, transcript))
    out.append(roles("\n".join(lines[position:])))
    return "\n".join(part for part in out if part is not None)


def _options(content: str) -> tuple[dict[str, str], str]:
    lines = content.splitlines()
    options = {}
    index = 0
    while index < len(lines) and (match := _OPTION.match(lines[index].strip())):
        options[match["key"]] = match["value"]
        index += 1
    return options, "\n".join(lines[index:]).strip("\n")


def _directive(name: str, argument: str, content: str, result: Converted, figure_file, transcript: str) -> str:
    options, body = _options(content)
    inner = _convert_blocks(body, result, figure_file, transcript).strip() if body else ""
    if name in ("solution-start", "solution-end", "code-cell"):
        return ""
    if name == "exercise":
        return f"### Exercise: {argument}\n\n{inner}\n"
    if name == "figure":
        path = figure_file(argument)
        alt = options.get("alt", "").strip()
        if path is None:
            return f"*{inner}*\n" if inner else ""
        result.attachments[path.name] = path.read_bytes()
        alt = alt.replace("[", "\\[").replace("]", "\\]")  # the alt text is a link text: keep it one
        return f"![{alt}](attachment:{path.name})\n\n*{inner}*\n" if inner else f"![{alt}](attachment:{path.name})\n"
    if name == "recorded-run":
        return f"<details><summary>Transcript of the build's run</summary>\n\n```text\n{transcript}```\n\n</details>\n"
    title = argument or _COLLAPSED_TITLES.get(name, name.replace("-", " ").capitalize())
    if name == "hint" or "dropdown" in options.get("class", ""):
        return f"<details><summary>{title}</summary>\n\n{inner}\n\n</details>\n"
    if name in ("math",):
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
        if role in ("math",):
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
    import posixpath

    def address(docname: str, anchor: str = "") -> str:
        page = f"{docname}.html" + (f"#{anchor}" if anchor else "")
        return f"{base_url.rstrip('/')}/{page}" if base_url else page

    def replace(match: re.Match) -> str:
        text, role, target = match["text"], match["role"], match["target"]
        if role == "doc":
            docname = posixpath.normpath(
                target.lstrip("/")
                if target.startswith("/")
                else posixpath.join(posixpath.dirname(from_docname), target)
            )
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
    kind = "image/svg+xml" if name.endswith(".svg") else "image/png"
    if kind == "image/svg+xml":
        return {kind: data.decode("utf-8")}
    return {kind: base64.b64encode(data).decode("ascii")}


def figure_resolver(page_path: Path):
    """A ``figure_file`` for :func:`convert`: a {figure} argument, relative to the page, as a file."""

    def figure_file(argument: str) -> Path | None:
        path = (page_path.parent / argument.strip()).resolve()
        return path if path.is_file() else None

    return figure_file

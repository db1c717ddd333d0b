"""Bring notebook pages written for another Sphinx site (the JAX docs) into this one.

``python -m jaxcourse.tools.port SOURCE_DOCS DEST [NAME ...]`` (``nox -s port -- ...``) copies each page
``SOURCE_DOCS/NAME`` (``notebooks/autodiff_cookbook``) to ``DEST/NAME``, from its ``.ipynb`` where the source
site's ``conf.py`` excludes the ``.md``, else from its ``.md``. Only what cannot work here changes, and every change
is listed: references to what exists only there become plain text; local images are copied beside the page, remote
ones become links to them and badges go; raw HTML becomes MyST or is dropped; the page is marked ``orphan`` with its
images' alt text (``--alt NAME=TEXT``); a notebook's outputs are cleared. Port into a scratch clone
(docs/contributing.md).
"""

from __future__ import annotations

import argparse
import ast
import base64
import binascii
import collections
import contextlib
import dataclasses
import fnmatch
import functools
import hashlib
import html
import itertools
import json
import os
import posixpath
import re
import shutil
import sys
import urllib.parse
from pathlib import Path

import nbformat
from myst_nb.core.read import MystMetadataParsingError, read_myst_markdown_notebook

from ..output import rawhtml, safesvg
from ..output.apilinks import is_jax_name
from ..source import lessonsource, pagesource
from ..source.frontmatter import front_matter_end
from ..source.reader import files_named_beside
from . import plural

#: A role and its body: ``{ref}`text <label>```.
_ROLE = re.compile(r"\{(?P<role>[a-z][a-z:-]*)\}`(?P<body>[^`]+)`")
_EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
_PYTHON_ROLES = {"func", "class", "mod", "meth", "attr", "obj", "data", "exc", "const", "type", "py:func", "py:class"}
#: What the porting regexes must not look inside: a role (ported whole), inline code, inline math; and a link whose
#: words hold code ('[`jax.jit`](jit-compilation)'), ported whole, its code kept.
_PROTECTED = re.compile(r"(!?\[[^\[\]]*`[^\[\]]*\]\([^)\s]+\)|\{[a-z][a-z:-]*\}`[^`]+`|``.+?``|`[^`]+`|\$[^$\n]+\$)")
#: JAX's own short names for its modules, which its docs resolve by searching: {func}`lax.cond`.
_JAX_ALIASES = {"lax.": "jax.lax.", "jnp.": "jax.numpy.", "jax_nn.": "jax.nn."}
#: A linked image (a badge): ``[![alt](image)](link)``.
_BADGE = re.compile(r"\[!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)[^)]*\)\]\((?P<href>[^)\s]+)\)")
_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)\)")
#: A reference-style link, '[text][name]' (its words may wrap), and the definition of its name, '[name]: target'.
_REFERENCE_LINK = re.compile(r"(?<![!\]])\[(?P<text>[^\[\]]+)\]\[(?P<name>[^\[\]]*)\]")
#: A reference-style image, '![alt][name]', and a link around an image: '[![PyPI](badge.svg)][pypi-link]'.
_REFERENCE_IMAGE = re.compile(r"!\[(?P<text>[^\[\]]*)\]\[(?P<name>[^\[\]]*)\]")
_IMAGE_REFERENCE_LINK = re.compile(r"\[(?P<text>!\[[^\[\]]*\]\([^)\s]+\))\]\[(?P<name>[^\[\]]*)\]")
_LINK_DEFINITION = re.compile(r"^ {0,3}\[(?P<name>[^\]^][^\]]*)\]:[ \t]*<?(?P<target>[^\s>]+)>?.*$", re.M)
_IMAGE_DIRECTIVE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>image|figure)\}[ \t]+(?P<src>\S+)[ \t]*$", re.M)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
#: A directive that reads another file into the page: ```{include} _admonition/gpu.md
_INCLUDE = re.compile(r"^\{include\}[ \t]+(?P<src>\S+)")
_WEB_ADDRESS = re.compile(r"^https?://[^\s]+$", re.I)
#: A fence line and its info string: a code block (```python), a code cell, or a directive (```{note}).
_FENCE = re.compile(r"^ {0,3}(?P<marker>`{3,}|~{3,})\s*(?P<info>.*?)\s*$")
#: sphinx-design's layout directives, which this site does not load: a card or tab keeps its title, in bold; a
#: grid, tab set or carousel is only the box around them; a dropdown is sphinx-togglebutton's collapsed admonition.
_TITLED_LAYOUT = {"card", "grid-item-card", "tab-item"}
_LAYOUT = _TITLED_LAYOUT | {"grid", "grid-item", "tab-set", "tab-set-code", "card-carousel", "dropdown"}
#: Any fence, a colon fence too (MyST's colon_fence extension): what the layout pass must see open and close.
_ANY_FENCE = re.compile(r"^ {0,3}(?P<marker>`{3,}|~{3,}|:{3,})\s*(?P<info>.*?)\s*$")
_OPTION_LINE = re.compile(r"^\s*:[\w-]+:")
_HTML_IMG = re.compile(r"<img\b(?P<attributes>[^>]*)>", re.I)
#: An attribute's value, quoted or not: HTML reads '<img src=https://x/a.png>' as well as 'src="..."'.
_VALUE = r"(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+)"
_HTML_ATTRIBUTE = re.compile(rf"(?P<name>[a-z-]+)\s*=\s*(?P<value>{_VALUE})", re.I)
_HTML_LINK = re.compile(rf"<a\b[^>]*\bhref\s*=\s*(?P<href>{_VALUE})[^>]*>(?P<text>.*?)</a\s*>", re.I | re.S)
_HTML_ANCHOR = re.compile(r"<a\b[^>]*\b(?:name|id)\s*=\s*([\"'])[^\"']*\1[^>]*>\s*</a\s*>", re.I)
_HTML_EMPHASIS = {"b": "**", "strong": "**", "i": "*", "em": "*"}
#: Tags that stand between words ('8 (F32)<br>16 (BF16)' in a table cell): dropped, they leave a space.
_HTML_BREAKS = {"br", "p", "div", "li", "tr", "td", "th", "hr"}
_HTML_TAG = re.compile(r"</?(?P<tag>[a-z][a-z0-9]*)\b[^>]*?/?>", re.I)
_HTML_COMMENT_SPLIT = re.compile(r"(<!--.*?-->)", re.S)
#: A tag still open at the end of a line ('click "CAPTURE".<br' then '/>'): CommonMark lets a tag span lines.
_TAG_OPEN_AT_LINE_END = re.compile(r"</?[a-z][a-z0-9]*\b[^<>`]*$", re.I)
#: What may wrap onto the next lines of its paragraph, as (how the line ends, how the rest begins): a link's words
#: ('[XProf' then 'profiling](xprof-profiling)'), an image's alt text over four lines (NumPy's MNIST tutorial), and a
#: role's body ('{ref}`a Monte' then 'Carlo example <numba_ex4>`.').
_WRAPPING = (
    (re.compile(r"(?<!\])\[[^\[\]`]*$"), re.compile(r"^[^\[\]`]*\]\(")),
    (re.compile(r"\{[a-z][a-z:-]*\}`[^`]*$"), re.compile(r"^[^`]*`")),
)
#: A preformatted block, '<pre>' to '</pre>': its lines are code, not MyST ('# Itr 1' is no heading).
_PRE_OPEN = re.compile(r"^\s*<pre\b[^>]*>", re.I)
_PRE_CLOSE = re.compile(r"</pre\s*>", re.I)
#: An SVG embedded with '<object data="x.svg">fallback words</object>', over several lines.
_HTML_OBJECT = re.compile(rf"<object\b[^>]*\bdata\s*=\s*(?P<src>{_VALUE})[^>]*>(?P<text>.*?)</object\s*>", re.I | re.S)
#: The inline images a page may hold as data: addresses, and the file suffix each is saved with.
_DATA_IMAGE = re.compile(r"^data:image/(?P<kind>png|jpeg|gif|webp|svg\+xml);base64,(?P<data>.+)$", re.S)
_IMAGE_SUFFIX = {"png": ".png", "jpeg": ".jpg", "gif": ".gif", "webp": ".webp", "svg+xml": ".svg"}
#: reStructuredText's label target and section underline (or overline), for the source site's .rst pages.
_RST_TARGET = re.compile(r"^\.\. _(?P<label>[^:`]+):\s*$")
_RST_RULE = re.compile(r"^([=\-~^\"'`#*+:._])\1+\s*$")


@dataclasses.dataclass(frozen=True)
class Change:
    where: str  # "line 12", or "cell 3, line 2" in a notebook
    kind: str  # "reference", "image", "remote image", "raw HTML", "role"
    what: str


@dataclasses.dataclass
class Site:
    """What the ported pages can refer to here."""

    labels: set[str]
    docs: set[str]  # posix names without suffix, relative to the docs root: notebooks/autodiff_cookbook
    #: The source site's title for each of its labels and pages ("doc:NAME"): what a reference reads as there.
    titles: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Page:
    name: str  # notebooks/autodiff_cookbook
    source: Path
    dest: Path
    changes: list[Change] = dataclasses.field(default_factory=list)
    copied: list[Path] = dataclasses.field(default_factory=list)

    def summary(self) -> str:
        counts = collections.Counter(change.kind for change in self.changes)
        told = ", ".join(plural(count, kind) for kind, count in counts.items())
        return f"ported {self.dest} from {self.source.name}: " + (f"changed {told}" if told else "unchanged")


def source_titles(source_docs: Path) -> dict[str, str]:
    """What each label and page ("doc:NAME") of the source site is called there: the heading it names."""
    titles = {}
    for path in sorted(source_docs.rglob("*")):
        relative = path.relative_to(source_docs)
        if path.suffix not in (".md", ".ipynb", ".rst") or relative.parts[0].startswith(("_build", ".")):
            continue
        texts = [path.read_text(encoding="utf-8")] if path.suffix == ".rst" else _texts(path)
        if path.suffix == ".ipynb":  # no front matter in its cells: a leading '---' is a rule, not the start of one
            texts.insert(0, "")
        headings = _rst_headings(texts[0]) if path.suffix == ".rst" else _markdown_headings("\n\n".join(texts))
        if headings:  # a page is called by its first heading, a label by the heading right after it
            titles[f"doc:{relative.with_suffix('').as_posix()}"] = headings[0][1]
        titles.update((label, heading) for label, heading in headings if label)
    return titles


def _markdown_headings(text: str) -> list[tuple[str | None, str]]:
    """Each heading of a MyST page, with the label target right before it (if any), as plain text."""
    lines = text.splitlines()
    tokens = lessonsource.block_parser().parse("\n".join(lines[front_matter_end(lines) :]) + "\n")
    found, label = [], None
    for position, token in enumerate(tokens):
        if token.level == 0 and token.type == "heading_open":
            found.append((label, tokens[position + 1].content.replace("`", "").strip()))
        label = token.content if token.level == 0 and token.type == "myst_target" else None
    return found


def _rst_headings(text: str) -> list[tuple[str | None, str]]:
    """Each section title of a reStructuredText page, with the label target right before it (if any)."""
    lines = [*text.splitlines(), ""]
    found, label = [], None
    for index, line in enumerate(lines[:-1]):
        rule = _RST_RULE.match(lines[index + 1])
        if line.strip() and not _RST_RULE.match(line) and rule and len(lines[index + 1].rstrip()) >= len(line.strip()):
            found.append((label, line.strip().replace("`", "")))
            label = None
        elif target := _RST_TARGET.match(line):
            label = target["label"]
        elif line.strip() and not _RST_RULE.match(line):
            label = None  # a label before a paragraph names no section
    return found


def built_from_notebook(source_docs: Path, name: str) -> bool:
    """Whether the source site builds ``name`` from its .ipynb: both exist and its conf.py excludes the .md."""
    if not (source_docs / f"{name}.ipynb").is_file():
        return False
    if not (source_docs / f"{name}.md").is_file():
        return True
    return any(fnmatch.fnmatch(f"{name}.md", pattern) for pattern in excluded_patterns(source_docs / "conf.py"))


def excluded_patterns(conf: Path) -> list[str]:
    """The ``exclude_patterns`` strings a Sphinx conf.py assigns, read without running it."""
    if not conf.is_file():
        return []
    for node in ast.walk(ast.parse(conf.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "exclude_patterns" for t in node.targets):
            if isinstance(node.value, ast.List):
                return [item.value for item in node.value.elts if isinstance(item, ast.Constant)]
    return []


def plain(role: str, body: str) -> str:
    """The words a reader sees for a reference that cannot resolve here."""
    explicit = _EXPLICIT.match(body)
    if explicit and explicit["text"]:
        return explicit["text"]
    target = body.strip()
    if role in ("doc", "ref"):
        # A page's name, without its folders or the inventory an intersphinx reference names ({doc}`jax:autodiff`).
        name = target.rsplit("/", 1)[-1].rsplit(":", 1)[-1] if role == "doc" else target
        return name.replace("_", " ").replace("-", " ")
    return target.lstrip("~")


class Porter:
    """Ports one page's markdown (a .md file, or one markdown cell of a notebook)."""

    def __init__(self, page: Page, site: Site, source_docs: Path):
        self.page = page
        self.site = site
        self.source_docs = source_docs
        self.folder = posixpath.dirname(page.name)

    def note(self, where: str, kind: str, what: str) -> None:
        """Lists a change, on one line: the text it quotes may wrap."""
        self.page.changes.append(Change(where, kind, re.sub(r"\s*\n\s*", " ", what)))

    # Where a target points, as a page of the site: "notebooks/x" for "../notebooks/x.ipynb" from "y".
    def doc_name(self, target: str) -> str | None:
        target = target.split("#", 1)[0]
        if not target:
            return None
        path = target.lstrip("/") if target.startswith("/") else posixpath.join(self.folder, target)
        path = posixpath.normpath(path)
        for suffix in (".md", ".ipynb", ".rst", ".html"):
            path = path.removesuffix(suffix)
        return path

    def source_file(self, src: str) -> Path | None:
        """The file a relative (or docs-root) address on the page names in the source, if there is one."""
        candidates = (self.source_docs / self.folder / src, self.source_docs / src.lstrip("/"))
        return next((path for path in candidates if path.is_file()), None)

    def relative(self, doc: str) -> str:
        return posixpath.relpath(doc, self.folder or ".")

    def role(self, match: re.Match, where: str) -> str:
        role, body = match["role"], match["body"]
        explicit = _EXPLICIT.match(body)
        target = (explicit["target"] if explicit else body).strip()
        text = explicit["text"] if explicit else ""
        if role == "ref":
            if target in self.site.labels:
                return match[0]
        elif role == "doc":
            doc = self.doc_name(target)
            if doc in self.site.docs:
                if target.startswith("/"):  # absolute on the other site; relative here, under DEST
                    fixed = self.relative(doc)
                    return f"{{doc}}`{text} <{fixed}>`" if text else f"{{doc}}`{fixed}`"
                return match[0]
        elif role in _PYTHON_ROLES:
            name = target.lstrip("~.!")
            if is_jax_name(name):
                return match[0]
            alias = next((prefix for prefix in _JAX_ALIASES if name.startswith(prefix)), None)
            if alias:
                full = _JAX_ALIASES[alias] + name[len(alias) :]
                self.note(where, "role", f"{match[0]} now names {full}, which the JAX docs found by searching")
                return f"{{{role}}}`{text or name} <{full}>`"
            self.note(where, "role", f"{match[0]} became `{plain(role, body)}` (no API documentation here)")
            return f"`{plain(role, body)}`"
        elif role == "jax-issue":  # the JAX docs define it in their own extension (docs/sphinxext), not loaded here
            link = f"[#{target.lstrip('#')}](https://github.com/jax-ml/jax/issues/{target.lstrip('#')})"
            self.note(where, "role", f"{match[0]} became the link {link}, as the JAX docs write it")
            return link
        elif role == "cite" or role.startswith("cite:"):  # sphinxcontrib-bibtex's, which this site does not load
            shown = f"[{', '.join(key.strip() for key in body.split(','))}]"
            self.note(where, "reference", f"{match[0]} became plain text {shown!r} (no bibliography here)")
            return shown
        elif role != "term":  # the site has no glossary: a term is its words
            return match[0]  # {math}, {code}, {sup}: nothing to resolve
        titled = self.site.titles.get(target if role == "ref" else f"doc:{self.doc_name(target)}")
        shown = text or (role != "term" and titled) or plain(role, body)
        self.note(where, "reference", f"{match[0]} became plain text {' '.join(shown.split())!r} (not on this site)")
        return shown

    def link(self, match: re.Match, where: str) -> str:
        target = match["target"]
        if target.startswith("inv:"):  # MyST's link into another site's inventory, which this site does not load
            shown = match["text"] or target.rsplit("#", 1)[-1]
            self.note(where, "reference", f"{match[0]} became plain text {shown!r} (another site's inventory)")
            return shown
        label = target[1:] if target.startswith("#") and target[1:] not in self.site.labels else None
        if label in self.site.titles:  # MyST's '[words](#label)' for a label of a page left on the source site
            shown = match["text"] or self.site.titles[label]
            self.note(where, "reference", f"{match[0]} became plain text {shown!r} (not on this site)")
            return shown
        if _SCHEME.match(target) or target.startswith(("#", "<")) or target in self.site.labels:
            return match[0]
        doc = self.doc_name(target)
        if doc in self.site.docs:
            return f"[{match['text']}]({self.relative(doc)})"
        # '[](page)' shows the page's title there, which the source names; else the page's name.
        titled = None if "#" in target else self.site.titles.get(f"doc:{doc}")
        shown = match["text"] or titled or plain("doc", target.split("#", 1)[0] or target)
        self.note(where, "reference", f"{match[0]} became plain text {' '.join(shown.split())!r} (not on this site)")
        return shown

    def image(self, alt: str, src: str, where: str, *, gone: str = "removed", then: str = "") -> str | None:
        """The image's new address here (saved beside the page), or None if it cannot come: the note says it is
        ``gone`` (a directive's image is "left") and what ``then``."""
        if inline := _DATA_IMAGE.match(src):
            shown = f"data:image/{inline['kind']} ({len(src):,} characters)"
            try:
                content = base64.b64decode(inline["data"], validate=True)
            except binascii.Error:
                self.note(where, "image", f"{gone} {shown}: its base64 does not decode{then}")
                return None
            # Named by its content, so that a second port gives the same file.
            name = f"inline-{hashlib.sha256(content).hexdigest()[:12]}{_IMAGE_SUFFIX[inline['kind']]}"
            return self._save(name, content, f"saved {shown} as images/{name}", where)
        if _SCHEME.match(src) or src.startswith("//"):
            # A data: address that is not a base64 image can be long too: the report names its start and size.
            shown = src if len(src) <= 80 else f"{src[:40]}… ({len(src):,} characters)"
            self.note(where, "remote image", f"{gone} {shown} (a page loads nothing from outside){then}")
            return None
        found = self.source_file(src)
        if found is None:
            self.note(where, "image", f"{gone} {src}: no such file in the source{then}")
            return None
        return self._save(found.name, found.read_bytes(), f"copied {src} to images/{found.name}", where)

    def _save(self, name: str, content: bytes, said: str, where: str) -> str:
        """Write an image into ``images/`` beside the page (an SVG cleaned), say so, and return its address."""
        copy = self.page.dest.parent / "images" / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(content)
        self.page.copied.append(copy)
        self.note(where, "image", said)
        self._clean_svg(copy, where)
        return f"images/{name}"

    def _clean_svg(self, copy: Path, where: str) -> None:
        """The site publishes no SVG that links, runs or loads (pprof's nodes are links): a copy is cleaned."""
        if copy.suffix.lower() != ".svg":
            return
        text = copy.read_text(encoding="utf-8")
        with contextlib.suppress(safesvg.UnsafeSvg):  # one that cannot be cleaned is the build's to refuse
            if removed := collections.Counter(safesvg.problems(text)):
                copy.write_text(safesvg.clean(text), encoding="utf-8")
                what = ", ".join(f"{count} × {problem}" for problem, count in removed.most_common())
                self.note(where, "image", f"removed from images/{copy.name}: {what}")

    def html(self, line: str, where: str) -> str:
        """MyST for the raw HTML on one line: images, links and emphasis converted, other tags dropped."""

        def image(match: re.Match) -> str:
            attributes = {
                m["name"].lower(): _unquoted(m["value"]) for m in _HTML_ATTRIBUTE.finditer(match["attributes"])
            }
            return f"![{attributes.get('alt', '')}]({attributes.get('src', '')})"

        def convert(text: str) -> str:
            text = _HTML_IMG.sub(image, text)
            text = _HTML_LINK.sub(lambda m: f"[{_HTML_TAG.sub('', m['text']).strip()}]({_unquoted(m['href'])})", text)
            text = _HTML_ANCHOR.sub("", text)

            def tag(m: re.Match) -> str:
                if m["tag"].lower() in _HTML_BREAKS and not m[0].count("\n"):
                    before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
                    return " " if before.strip() and after.strip() and after != "<" else ""
                # A tag wrapped over lines leaves its line breaks: the words on either side stay apart.
                return "\n" * m[0].count("\n") + _HTML_EMPHASIS.get(m["tag"].lower(), "")

            return _HTML_TAG.sub(tag, text)

        # Comments stay as they are: a browser never shows them, and the build drops them.
        parts = _HTML_COMMENT_SPLIT.split(line)
        text = "".join(part if number % 2 else convert(part) for number, part in enumerate(parts))
        if text != line:  # shown from a little before the first change, which may be far along the line
            # Indented as HTML, which ignores it, the MyST left would read as an indented code block.
            text = re.sub(r"^[ \t]{4,}", "", text) if _HTML_TAG.match(line.lstrip()) else text
            start = max(0, len(os.path.commonprefix([line, text])) - 20)
            before, after = (("..." if start else "") + part[start:].strip()[:70] for part in (line, text))
            self.note(where, "raw HTML", f"{before!r} became {after!r}")
        return text

    def port(self, text: str, where_of) -> str:
        """``text`` with each line outside code fences ported; ``where_of(i)`` names its i-th line."""
        text, origin = self._unwrap_layout(text, where_of)
        where_of = functools.partial(_named_as_before, where_of, origin)
        text = _inline_reference_images(text)
        # A badge may wrap over two lines ('[![Open in\nColab](...)](...)'): those go first, over the whole text.
        text = _sub_in_prose(_BADGE, lambda m: self._badge(m, where_of(text.count("\n", 0, m.start()))), text)
        text = self._reference_links(text, where_of)
        raw_lines = rawhtml.lines_with_html(text)
        text = _HTML_OBJECT.sub(lambda m: self._object(m, text, raw_lines, where_of), text)
        lines = text.splitlines(keepends=True)
        # The open fences: a code fence's body is left alone; a directive's body (```{note}) is MyST and is
        # ported, and its closing line must not be taken for the opening of a code block.
        out, code, directives, open_tag, pre, toctree = [], None, [], "", False, None
        for index, line in enumerate(lines):
            where = where_of(index)
            fence = _FENCE.match(line)
            if open_tag:  # a tag that spans lines is ported with the line it began on
                line, open_tag, where = open_tag + line, "", where_of(index - 1)
            if pre or (index + 1 in raw_lines and not code and _PRE_OPEN.match(line)):
                pre = self._pre_line(line, pre, out, where)
                continue
            if code or fence:
                out.append(line)
                if code:
                    if fence and _closes(fence, code):
                        code = None
                elif directives and _closes(fence, directives[-1]):
                    toctree = None if directives.pop() == toctree else toctree
                elif _is_literal(fence["info"]):
                    code = fence["marker"]
                else:
                    directives.append(fence["marker"])
                    toctree = fence["marker"] if fence["info"].startswith("{toctree}") else toctree
                    if included := _INCLUDE.match(fence["info"]):
                        self._include(included["src"], where)
                    out[-1] = _IMAGE_DIRECTIVE.sub(lambda m, w=where: self._directive_image(m, w), line)
                continue
            if toctree and directives[-1] == toctree:
                out.append(self._toctree_entry(line, where))
                continue
            following = "".join(itertools.takewhile(str.strip, lines[index + 1 :]))  # the rest of the paragraph
            if ({index + 1, index + 2} <= raw_lines and _TAG_OPEN_AT_LINE_END.search(line)) or any(
                opens.search(line) and closes.match(following) for opens, closes in _WRAPPING
            ):
                open_tag = line
                continue
            if index + 1 in raw_lines:
                line = self.html(line, where)
            out.append(self._outside_code(line, where))
        return "".join(out)

    def _unwrap_layout(self, text: str, where_of) -> tuple[str, list[int]]:
        """``text`` without sphinx-design's layout directives or ``{raw} html`` fences, and each line's old index.

        Their fences and options go and what they hold stays (raw HTML, for the rules of an HTML block); a card's
        or tab's title becomes a bold line, and a dropdown becomes an admonition that sphinx-togglebutton
        collapses. Code fences are read past, as CommonMark reads them.
        """
        out: list[str] = []
        origin: list[int] = []
        opened: list[tuple[str, str]] = []  # (marker, "code" | "directive" | "layout")
        in_options = False
        for index, line in enumerate(text.splitlines(keepends=True)):
            fence = _ANY_FENCE.match(line)
            kind = opened[-1][1] if opened else None
            if fence and opened and _closes(fence, opened[-1][0]):
                if opened.pop()[1] == "layout":
                    continue
            elif fence and kind != "code":
                name = re.match(r"\{([\w:-]+)\}\s*(.*)", fence["info"])
                if name and name[1] == "raw" and name[2].strip().lower() == "html":
                    # HTML in a {raw} directive is raw HTML all the same: the rules for an HTML block port it.
                    self.note(where_of(index), "raw HTML", "the {raw} html directive went; its HTML is ported as HTML")
                    opened.append((fence["marker"], "layout"))
                    in_options = True
                    continue
                if name and name[1] in _LAYOUT:
                    said = f"{{{name[1]}}} {name[2]!r} " if name[2] else f"{{{name[1]}}} "
                    if name[1] == "dropdown":
                        became = "became a collapsed {admonition}"
                    elif name[1] in _TITLED_LAYOUT and name[2]:
                        became = "became its title in bold, then what it holds"
                    else:
                        became = "went; what it holds stays"
                    self.note(where_of(index), "layout", f"{said}(sphinx-design's, not loaded here) {became}")
                    in_options = True
                    if name[1] == "dropdown":
                        opened.append((fence["marker"], "directive"))
                        out += [f"{fence['marker']}{{admonition}} {name[2] or 'Details'}\n", ":class: dropdown\n"]
                        origin += [index, index]
                    else:
                        opened.append((fence["marker"], "layout"))
                        if name[1] in _TITLED_LAYOUT and name[2]:
                            out += [f"**{name[2]}**\n", "\n"]
                            origin += [index, index]
                    continue
                literal = fence["marker"][0] != ":" and _is_literal(fence["info"])
                opened.append((fence["marker"], "code" if literal else "directive"))
            elif in_options and _OPTION_LINE.match(line):
                continue  # a layout option (':gutter: 1'): nothing here reads it
            in_options = False
            out.append(line)
            origin.append(index)
        return "".join(out), origin or [0]

    def _include(self, src: str, where: str) -> None:
        """A file that the page includes, ported to the same place beside the ported page, where the build reads it."""
        source = self.source_docs / self.folder / src
        copy = self.page.dest.parent / src
        if copy in self.page.copied or src.startswith("/") or _SCHEME.match(src) or not source.is_file():
            return  # one the page names twice, or the build's to report at the directive
        if ".." in Path(src).parts:  # its copy would land outside the folder of the ported pages
            self.note(where, "file", f"left {{include}} {src}, outside the page's folder: bring it by hand")
            return
        copy.parent.mkdir(parents=True, exist_ok=True)
        self.page.copied.append(copy)
        self.note(where, "file", f"ported {src}, which the page includes, to the same place beside it")
        text = self.port(source.read_text(encoding="utf-8"), lambda index: f"{src}, line {index + 1}")
        copy.write_text(text, encoding="utf-8")

    def _toctree_entry(self, line: str, where: str) -> str:
        """A line of a '{toctree}': an entry for a page not ported goes (as a blank line, so the numbering holds)."""
        entry = line.strip()
        explicit = _EXPLICIT.match(entry)
        target = explicit["target"] if explicit else entry
        if not entry or entry.startswith(":") or entry == "self" or _SCHEME.match(target):
            return line
        doc = self.doc_name(target)
        if any(fnmatch.fnmatchcase(ported, doc) for ported in self.site.docs):  # a name, or a :glob: pattern
            # '/name' is from the source's docs root; here the pages are under DEST, beside this one.
            return line.replace(target, self.relative(doc)) if target.startswith("/") else line
        self.note(where, "reference", f"the toctree entry {entry!r} went (not on this site)")
        return "\n"

    def _pre_line(self, line: str, inside: bool, out: list[str], where: str) -> bool:
        """One line of a '<pre>' block, added to ``out`` as a line of a code block; whether the block goes on."""
        if not inside:
            self.note(where, "raw HTML", f"{line.strip()[:70]!r} (to '</pre>') became a code block")
            out.append("```\n")
            line = _PRE_OPEN.sub("", line, count=1)
            if not line.strip():
                return True
        body, *after = _PRE_CLOSE.split(line, maxsplit=1)
        if body.strip() or not after:  # its text as a browser shows it: tags gone, entities read
            out.append(html.unescape(_HTML_TAG.sub("", body)).rstrip("\n") + "\n")
        if not after:
            return True
        out.append("```\n")
        if after[0].strip():
            out.append(self._outside_code(after[0].lstrip(), where))
        return False

    def _object(self, match: re.Match, text: str, raw_lines: set[int], where_of) -> str:
        """'<object data="x.svg">words</object>' as the image it shows, its fallback words as alt text."""
        index = text.count("\n", 0, match.start())
        if index + 1 not in raw_lines:  # in a code block: an example of HTML
            return match[0]
        words, src = " ".join(_HTML_TAG.sub("", match["text"]).split()), _unquoted(match["src"])
        source = self.source_file(src)
        drawn_by_script = source and source.suffix == ".svg" and "<script" in source.read_text(encoding="utf-8")
        # The site runs no script: the words the author wrote for a reader without scripts stay in its place.
        shown = words if drawn_by_script else f"![{words}]({src})"
        became = ", drawn by a script, became its words" if drawn_by_script else " became an image"
        self.note(where_of(index), "raw HTML", f"<object data={src!r}>{became}")
        return shown + "\n" * match[0].count("\n")  # the lines after it keep their numbers

    def _outside_code(self, line: str, where: str) -> str:
        """The line's roles, links and images ported; its inline code and math left exactly as written."""
        pieces = []
        for number, piece in enumerate(_PROTECTED.split(line)):
            if number % 2 and _ROLE.fullmatch(piece):
                piece = _ROLE.sub(lambda m, w=where: self.role(m, w), piece)
            elif number % 2 == 0 or piece.startswith(("[", "![")):  # prose, or a link whose words hold code
                piece = _BADGE.sub(lambda m, w=where: self._badge(m, w), piece)
                piece = _IMAGE.sub(lambda m, w=where: self._markdown_image(m, w), piece)
                piece = _IMAGE_DIRECTIVE.sub(lambda m, w=where: self._directive_image(m, w), piece)
                piece = _LINK.sub(lambda m, w=where: self.link(m, w), piece)
            pieces.append(piece)
        return "".join(pieces)

    def _reference_links(self, text: str, where_of) -> str:
        """'[text][name]' whose '[name]: page.md' is not on this site becomes its text; the definition, a blank line."""
        gone, code = set(), _code_lines(text)
        for match in _LINK_DEFINITION.finditer(text):
            target = match["target"]
            if text.count("\n", 0, match.start()) in code:
                continue
            if not (_SCHEME.match(target) or target.startswith("#") or self.doc_name(target) in self.site.docs):
                gone.add(_link_key(match["name"]))

        def use(match: re.Match) -> str:
            if _link_key(match["name"] or match["text"]) not in gone:
                return match[0]
            written, shown = (" ".join(words.split()) for words in (match[0], match["text"]))
            where = where_of(text.count("\n", 0, match.start()))
            self.note(where, "reference", f"{written} became plain text {shown!r} (not on this site)")
            return match["text"]

        text = _sub_in_prose(_REFERENCE_LINK, use, text) if gone else text
        return _sub_in_prose(_LINK_DEFINITION, lambda m: "" if _link_key(m["name"]) in gone else m[0], text)

    def _badge(self, match: re.Match, where: str) -> str:
        name = " ".join((match["alt"] or match["src"]).split())  # its words may wrap: '[![Open in\nColab]...'
        self.note(where, "remote image", f"removed the badge {name!r} linking {match['href']}")
        return ""

    def _markdown_image(self, match: re.Match, where: str) -> str:
        if match["src"].startswith("attachment:"):  # a notebook cell's own image (a pasted one), which the build shows
            return match[0]
        if _WEB_ADDRESS.match(src := match["src"]):  # a link the reader may follow: the page loads nothing
            words = f"image: {match['alt']}" if match["alt"] else f"an image on {urllib.parse.urlsplit(src).hostname}"
            self.note(where, "remote image", f"linked {src} instead of showing it (a page loads nothing from outside)")
            return f"[{words}]({src})"
        new = self.image(match["alt"], src, where)
        if new is None:
            return ""
        alt = match["alt"] or Path(new).stem.replace("_", " ").replace("-", " ")
        if not match["alt"]:
            self.note(where, "image", f"gave {new} the alt text {alt!r}; describe it better by hand")
        return f"![{alt}]({new}{match['title'] or ''})"

    def _directive_image(self, match: re.Match, where: str) -> str:
        # Unlike a markdown image, a directive cannot just go: it stays, for its author to replace.
        new = self.image("", match["src"], where, gone="left", then="; replace it by hand: the build refuses it")
        if new is None:
            return match[0]
        return f"{match['fence']}{{{match['name']}}} {new}"


def _front_matter(text: str, image_alt: str | None) -> str:
    if not text.startswith("---\n"):  # a prose page (a placeholder, a guide) needs one for 'orphan' too
        text = "---\n---\n" + text
    head = text.split("\n---", 1)[0]
    added = "" if "\norphan:" in head else "orphan: true\n"
    if image_alt:
        # myst-nb's per-page image options: the alt text of every image the page's cells display.
        added += f"mystnb:\n  render_image_options:\n    alt: {json.dumps(image_alt)}\n"
    return "---\n" + added + text[len("---\n") :]


def _unquoted(value: str) -> str:
    """An HTML attribute's value without the quotes it may be written in."""
    return value[1:-1] if value[:1] in ("'", '"') else value


def _inline_reference_images(text: str) -> str:
    """Each reference-style image, and each such link around an image, written inline with its definition's target
    (MyST-Parser's '[![PyPI][pypi-badge]][pypi-link]'): the image passes copy, link or remove what they can see."""
    targets = {_link_key(match["name"]): match["target"] for match in _LINK_DEFINITION.finditer(text)}

    def inline(match: re.Match) -> str:
        target = targets.get(_link_key(match["name"] or match["text"]))
        return match[0] if target is None else f"{match[0][: match.start('name') - match.start() - 1]}({target})"

    return _sub_in_prose(_IMAGE_REFERENCE_LINK, inline, _sub_in_prose(_REFERENCE_IMAGE, inline, text))


def _link_key(name: str) -> str:
    """A link reference's name as CommonMark matches it: case and runs of spaces do not count."""
    return " ".join(name.lower().split())


def _named_as_before(where_of, origin: list[int], index: int) -> str:
    """The name of a line of the text with its layout unwrapped: that of the line it came from."""
    return where_of(origin[min(index, len(origin) - 1)])


def _code_lines(text: str) -> set[int]:
    """The indexes of the lines of ``text`` in code fences, the fences too, as the line-by-line pass reads them."""
    inside, code, directives = set(), None, []
    for index, line in enumerate(text.splitlines()):
        fence = _FENCE.match(line)
        if code:
            inside.add(index)
            code = None if fence and _closes(fence, code) else code
        elif fence and directives and _closes(fence, directives[-1]):
            directives.pop()
        elif fence and _is_literal(fence["info"]):
            inside.add(index)
            code = fence["marker"]
        elif fence:
            directives.append(fence["marker"])
    return inside


def _sub_in_prose(pattern: re.Pattern, replace, text: str) -> str:
    """``pattern.sub(replace, text)`` for the matches that begin outside code fences: an example of markup stays."""
    code = _code_lines(text)
    return pattern.sub(lambda match: match[0] if text.count("\n", 0, match.start()) in code else replace(match), text)


def _closes(fence: re.Match, marker: str) -> bool:
    """Whether a fence line closes the fence opened by ``marker`` (CommonMark: as long or longer, no info)."""
    return not fence["info"] and fence["marker"][0] == marker[0] and len(fence["marker"]) >= len(marker)


def _is_literal(info: str) -> bool:
    """Whether a fence with this info string holds code: none, a language, or a literal directive."""
    directive = re.match(r"\{([\w:-]+)\}", info)
    return directive is None or directive[1] in lessonsource.LITERAL_DIRECTIVES


def port_text(text: str, known_labels: set[str], known_docs: set[str], image_alt: str | None = None) -> str:
    """A MyST page's text ported (see the module's docstring); its changes are not kept. For tests and tools."""
    page = Page("page", Path("page.md"), Path("/nonexistent/page.md"))
    return _front_matter(Porter(page, Site(known_labels, known_docs), Path(".")).port(text, _line), image_alt)


def _line(index: int) -> str:
    return f"line {index + 1}"


def port_page(page: Page, site: Site, source_docs: Path, image_alt: str | None) -> None:
    porter = Porter(page, site, source_docs)
    page.dest.parent.mkdir(parents=True, exist_ok=True)
    if page.source.suffix == ".ipynb":
        notebook = nbformat.read(page.source, as_version=4)
        for number, cell in enumerate(notebook.cells, start=1):
            if cell.cell_type == "markdown":
                cell.source = porter.port(cell.source, lambda index, n=number: f"cell {n}, line {index + 1}")
            elif cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        notebook.metadata["orphan"] = True
        execution = notebook.metadata.get("execution", {})
        if isinstance(execution.get("timeout"), int) and execution["timeout"] <= 0:  # myst-nb's "no limit"
            what = f"execution timeout {execution.pop('timeout')} (no limit) went: the build keeps its cell limit"
            porter.note("metadata", "setting", what)
        if image_alt:
            notebook.metadata.setdefault("mystnb", {})["render_image_options"] = {"alt": image_alt}
        nbformat.write(notebook, page.dest)
    else:
        written = page.source.read_text(encoding="utf-8")
        page.dest.write_text(_front_matter(porter.port(written, _line), image_alt), encoding="utf-8")
        try:
            notebook = read_myst_markdown_notebook(written)
        except MystMetadataParsingError:  # its cells are the build's to report, where they stand
            notebook = nbformat.v4.new_notebook()
    # A file the code reads beside the page (Image("images/fish.png")) comes with it, to the same relative path.
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    for relative, path in files_named_beside(page.source.parent, code).items():
        copy = page.dest.parent / relative
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        page.copied.append(copy)
        porter.note("code", "file", f"copied {relative}, which the page's code reads")


def _texts(path: Path) -> list[str]:
    if path.suffix == ".ipynb":
        return [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"]
    return [path.read_text(encoding="utf-8")]


def port(
    source_docs: Path,
    dest: Path,
    names: list[str],
    site_labels: set[str] = frozenset(),
    image_alt: dict[str, str] | None = None,
) -> list[Page]:
    """Port ``names`` from ``source_docs`` into ``dest``; return each page with what changed."""
    pages = []
    for name in names:
        name = name.removesuffix(".md").removesuffix(".ipynb")
        suffix = ".ipynb" if built_from_notebook(source_docs, name) else ".md"
        source = source_docs / f"{name}{suffix}"
        if not source.is_file():
            raise FileNotFoundError(f"{source_docs / name}: no .md or .ipynb page of that name")
        pages.append(Page(name, source, dest / f"{name}{suffix}"))
    # Pages ported into dest before, in another run, are on this site too: a link to one stays.
    earlier = {
        path.relative_to(dest).with_suffix("").as_posix(): path
        for path in sorted(dest.rglob("*"))
        if path.suffix in (".md", ".ipynb")
    }
    sources = [page.source for page in pages] + list(earlier.values())
    known = set(site_labels).union(*(pagesource.labels(text) for source in sources for text in _texts(source)))
    site = Site(known, {page.name for page in pages} | set(earlier), source_titles(source_docs))
    for page in pages:
        port_page(page, site, source_docs, (image_alt or {}).get(page.name))
    return pages


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
    "notebooks/thinking_in_jax": (
        "Line plot of 2 sin(x) cos(x), which equals sin(2x), over 1,000 points of x from 0 to 10, "
        "oscillating between -1 and 1."
    ),
    "notebooks/vmapped_log_probs": (
        "Scatter plot of estimated against true regression coefficients, the posterior means with red two-sigma "
        "error bars above and below them, and a black diagonal line where estimate equals truth."
    ),
    "notebooks/Custom_derivative_rules_for_Python_code": (
        "Line charts over 1,000 points of t from 0 to 10: sin(t) with the derivative grad computes, then sin(t) "
        "again with the gradient that clip_gradient limits to between -0.75 and 0.75."
    ),
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxcourse.tools.port", description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the other site's docs folder, e.g. a jax-ml/jax checkout's docs/")
    parser.add_argument("dest", type=Path, help="where the pages go, e.g. docs/ported")
    parser.add_argument("names", nargs="*", help=f"page names, in subfolders too (default: {', '.join(JAX_TUTORIALS)})")
    parser.add_argument(
        "--alt",
        action="append",
        default=[],
        metavar="NAME=TEXT",
        help="alt text for the images page NAME displays (the JAX tutorials' are built in)",
    )
    arguments = parser.parse_args(argv)
    image_alt = JAX_TUTORIAL_IMAGES | dict(item.partition("=")[::2] for item in arguments.alt)
    try:
        pages = port(arguments.source, arguments.dest, arguments.names or list(JAX_TUTORIALS), image_alt=image_alt)
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 2
    for page in pages:
        print(page.summary())
        for change in sorted(page.changes, key=lambda change: [int(n) for n in re.findall(r"\d+", change.where)]):
            print(f"  {change.where}: {change.what}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

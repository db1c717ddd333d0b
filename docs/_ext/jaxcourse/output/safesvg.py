"""SVG that cannot run script or load anything: for SVG outputs, and a last check of every published SVG.

An SVG file opened by its address (``_images/<sha>.svg``) is a document: a browser runs its ``<script>``, event
handlers and ``javascript:`` links in the site's origin, and fetches what it references (an ``<img>`` would
not, but a reader can always open the image on its own). So an SVG a cell displays is rebuilt from an
allow-list (:func:`clean`): the elements and attributes plotting libraries write, references only to
fragments of the same file (``#clip1``) or to inline raster images, and styles with no URL but a fragment.
Entities (a DOCTYPE with an internal subset) and markup that does not parse are refused outright.
:func:`problems` lists what :func:`clean` would remove; the build runs it on every SVG it publishes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
XML = "http://www.w3.org/XML/1998/namespace"
#: Metadata vocabularies matplotlib writes inside <metadata>: data, never rendered.
METADATA = {
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf",
    "http://purl.org/dc/elements/1.1/": "dc",
    "http://creativecommons.org/ns#": "cc",
}
ET.register_namespace("", SVG)
ET.register_namespace("xlink", XLINK)
for _uri, _prefix in METADATA.items():
    ET.register_namespace(_prefix, _uri)

#: Drawing elements; no script, foreignObject, animation (which can rewrite an href) or link (an <a> becomes a <g>).
ELEMENTS = {
    "svg", "g", "defs", "title", "desc", "metadata", "style", "symbol", "use", "path", "rect", "circle", "ellipse",
    "line", "polyline", "polygon", "text", "tspan", "textPath", "clipPath", "mask", "pattern", "marker", "image",
    "linearGradient", "radialGradient", "stop", "filter", "feGaussianBlur", "feOffset", "feBlend", "feFlood",
    "feComposite", "feMerge", "feMergeNode", "feColorMatrix",
}  # fmt: skip
#: Geometry and presentation attributes; every ``on*`` handler is absent by construction.
ATTRIBUTES = {
    "id", "class", "style", "transform", "d", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry",
    "width", "height", "viewBox", "version", "preserveAspectRatio", "points", "dx", "dy", "rotate", "textLength",
    "lengthAdjust", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity",
    "stroke-linecap", "stroke-linejoin", "stroke-miterlimit", "stroke-dasharray", "stroke-dashoffset", "opacity",
    "clip-path", "clip-rule", "mask", "font-family", "font-size", "font-weight", "font-style", "text-anchor",
    "dominant-baseline", "alignment-baseline", "baseline-shift", "letter-spacing", "word-spacing", "display",
    "visibility", "color", "offset", "stop-color", "stop-opacity", "gradientUnits", "gradientTransform",
    "patternUnits", "patternContentUnits", "patternTransform", "clipPathUnits", "maskUnits", "maskContentUnits",
    "markerWidth", "markerHeight", "markerUnits", "refX", "refY", "orient", "href", "type", "stdDeviation", "in",
    "in2", "result", "mode", "operator", "values", "filterUnits", "flood-color", "flood-opacity", "filter",
    "marker-start", "marker-mid", "marker-end", "vector-effect", "shape-rendering", "text-rendering", "space",
}  # fmt: skip
_METADATA_ATTRIBUTES = {"resource", "about"}
_LINK_ATTRIBUTES = {"href", "target", "title", "show", "actuate", "role", "arcrole"}
_FRAGMENT = re.compile(r"^#[\w.:-]+$")
_RASTER = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$")
_URL = re.compile(r"url\(\s*(['\"]?)(.*?)\1\s*\)", re.IGNORECASE | re.DOTALL)
_DANGEROUS_CSS = re.compile(r"@|\\|expression|javascript:|behavior|-moz-binding|</", re.IGNORECASE)
#: A sheet's '@import url(...);' (a web font, as a rule): it alone goes, and the rules that draw stay.
_CSS_IMPORT = re.compile(r"@import\s+(?:url\(\s*(['\"]?).*?\1\s*\)|(['\"]).*?\2)[^;]*;?", re.IGNORECASE | re.DOTALL)
_DOCTYPE_SUBSET = re.compile(r"<!DOCTYPE[^>\[]*\[|<!ENTITY", re.IGNORECASE)


class UnsafeSvg(ValueError):
    """The SVG cannot be made safe: it does not parse, or it declares entities."""


def _split(name: str) -> tuple[str, str]:
    if name.startswith("{"):
        namespace, _, local = name[1:].partition("}")
        return namespace, local
    return "", name


def css_problem(text: str) -> str | None:
    """Why a style (an attribute or a <style> sheet) could load or run something, or None."""
    if _DANGEROUS_CSS.search(text):
        return "a style with an at-rule, an escape or a script"
    for _, address in _URL.findall(text):
        if not _FRAGMENT.match(address.strip()):
            return f"a style that loads {address.strip()[:60]!r}"
    if "url(" in text.lower() and not _URL.search(text):
        return "a style with an unreadable url()"
    return None


def _attribute_problem(element: str, name: str, value: str) -> str | None:
    namespace, local = _split(name)
    if local.lower().startswith("on"):
        return f"an event handler ({local}) on <{element}>"
    if namespace not in ("", XLINK, XML) or local not in ATTRIBUTES:
        return f"an attribute {local!r} on <{element}> outside the allow-list"
    if namespace == XML and local != "space":
        return f"an attribute xml:{local}"
    if local == "href":
        address = re.sub(r"[\x00-\x20]+", "", value)
        if not (_FRAGMENT.match(address) or (element == "image" and _RASTER.match(value))):
            return f"a reference to {address[:60]!r} from <{element}>"
    if local == "style" or "url(" in value.lower():
        return css_problem(value)
    return None


def _clean_attributes(element: ET.Element, local: str, found: list[str], *, metadata: bool = False) -> None:
    """Remove the attributes of ``element`` (named ``local``) that are not allowed, recording what went."""
    for name, value in list(element.attrib.items()):
        if metadata:
            problem = None if _split(name)[1] in _METADATA_ATTRIBUTES else f"an attribute {name!r}"
        else:
            problem = _attribute_problem(local, name, value)
        if problem:
            found.append(problem)
            del element.attrib[name]


def _walk(element: ET.Element, found: list[str], *, in_metadata: bool = False) -> None:
    """Remove from ``element``'s subtree what is not allowed, recording what went."""
    for child in list(element):
        if not isinstance(child.tag, str):  # a comment or processing instruction
            element.remove(child)
            continue
        namespace, local = _split(child.tag)
        if namespace == SVG and local == "a":  # a link (pprof and graphviz wrap each node in one): its drawing
            found.append("a link <a>")  # stays, as a group, and the link and its tooltip go
            child.tag, local = f"{{{SVG}}}g", "g"
            for name in [name for name in child.attrib if _split(name)[1] in _LINK_ATTRIBUTES]:
                del child.attrib[name]
        allowed = (namespace == SVG and local in ELEMENTS) or (in_metadata and namespace in METADATA)
        if not allowed:
            found.append(f"an element <{local}>" + ("" if namespace in (SVG, "") else f" in {namespace}"))
            element.remove(child)
            continue
        if local == "style" and namespace == SVG:
            imports = [rule[0] for rule in _CSS_IMPORT.finditer(child.text or "")]
            found.extend(f"a style import {' '.join(rule.split())[:60]!r}" for rule in imports)
            child.text = _CSS_IMPORT.sub("", child.text) if imports else child.text
            if problem := css_problem(child.text or ""):
                found.append(problem)
                element.remove(child)
                continue
        _clean_attributes(child, local, found, metadata=in_metadata and namespace in METADATA)
        _walk(child, found, in_metadata=in_metadata or local == "metadata")


def _parse(text: str) -> ET.Element:
    if _DOCTYPE_SUBSET.search(text):
        raise UnsafeSvg("an SVG that declares entities (a DOCTYPE with an internal subset)")
    try:
        root = ET.fromstring(text.encode("utf-8") if isinstance(text, str) else text)
    except ET.ParseError as error:
        raise UnsafeSvg(f"an SVG that does not parse as XML ({error})") from None
    if root.tag != f"{{{SVG}}}svg":
        raise UnsafeSvg(f"an image whose root element is {_split(root.tag)[1]!r}, not an SVG <svg>")
    return root


def _cleaned(text: str) -> tuple[ET.Element, list[str]]:
    """The parsed SVG without what is not allowed, and what went; UnsafeSvg if it cannot be cleaned."""
    root = _parse(text)
    found: list[str] = []
    _clean_attributes(root, "svg", found)
    _walk(root, found)
    return root, found


def problems(text: str) -> list[str]:
    """What :func:`clean` would remove from this SVG (empty for a safe one); UnsafeSvg if it cannot clean it."""
    return _cleaned(text)[1]


def clean(text: str) -> str:
    """The SVG with only allowed elements, attributes, fragment references and styles; UnsafeSvg if it cannot be."""
    return ET.tostring(_cleaned(text)[0], encoding="unicode")

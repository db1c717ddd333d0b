"""``{func}`jax.jit```, ``{class}`jax.Array``` and the other Python roles link to the JAX API documentation.

They resolve offline, by a rule rather than an inventory: the JAX documentation gives every public name a
page of its own, ``_autosummary/<name>.html`` (a module, ``<name>.html``), under the address of the version
this build runs (``course_jax_api_url``). A name outside ``jax`` stays unlinked code, as Sphinx leaves it.
"""

from __future__ import annotations

from importlib.metadata import version

from docutils import nodes
from sphinx.application import Sphinx

#: The Python domain's roles that name an object, and so a page of the JAX API documentation.
ROLES = {"func", "class", "mod", "meth", "attr", "obj", "data", "exc", "const", "type"}


def api_url(template: str, name: str, role: str, jax_version: str) -> str:
    """The address of ``name``'s page in the JAX API documentation of ``jax_version``."""
    base = template.format(version=jax_version)
    return f"{base}{name}.html" if role == "mod" else f"{base}_autosummary/{name}.html"


def is_jax_name(name: str) -> bool:
    return name == "jax" or name.startswith("jax.")


def link_jax_names(app: Sphinx, env, node: nodes.Element, contnode: nodes.Element) -> nodes.reference | None:
    """At ``missing-reference``: a reference for a jax name, or None to leave the reference unresolved."""
    name = node.get("reftarget", "")
    if node.get("refdomain") != "py" or node.get("reftype") not in ROLES or not is_jax_name(name):
        return None
    jax_version = version("jax")
    refuri = api_url(app.config.course_jax_api_url, name, node["reftype"], jax_version)
    title = f"{name} in the JAX {jax_version} API documentation"
    return nodes.reference("", "", contnode, internal=False, refuri=refuri, reftitle=title)

"""The environment fingerprint: everything outside a page's code that can change its outputs.

It sits in each page's hidden setup cell, so the execution cache, keyed on cell sources, misses when it changes.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import platform
from pathlib import Path

from ..runtime import kernel

#: Environment variables that change what a page computes, so they key the execution cache.
NUMERICS_VARIABLE_PREFIXES = ("JAX_", "XLA_", "TF_CPP_", "OMP_", "MKL_", "OPENBLAS_")


@functools.cache
def _installed_packages() -> str:
    distributions = importlib.metadata.distributions()
    return "\n".join(sorted(f"{dist.metadata['Name']}=={dist.version}".lower() for dist in distributions))


def numerics_environment(environ=os.environ) -> dict[str, str]:
    """The environment variables a kernel inherits that can change results (JAX_*, XLA_FLAGS, ...)."""
    return {name: value for name, value in sorted(environ.items()) if name.startswith(NUMERICS_VARIABLE_PREFIXES)}


def environment_fingerprint(environment_files: list[Path], environ=os.environ) -> str:
    """A hash of Python, every installed package, the kernel spec, the kernel-side runtime,
    the environment variables that change numerics, and the given files (the pinned requirements)."""
    digest = hashlib.sha256()
    digest.update(platform.python_version().encode())
    digest.update(_installed_packages().encode())
    digest.update(json.dumps(numerics_environment(environ), sort_keys=True).encode())
    kernel_side = sorted(Path(kernel.__file__).parent.glob("*.py"))  # the lesson API, its charts, the kernel
    for path in [*kernel_side, kernel.SPEC_DIR / "kernel.json", *environment_files]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()[:16]

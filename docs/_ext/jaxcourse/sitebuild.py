"""Build the site beside the published one and swap it in only when the build passes.

``python -m jaxcourse.sitebuild OUTDIR [sphinx options...]`` builds into
``OUTDIR.new`` with warnings as errors, then replaces ``OUTDIR``. A failed
build leaves ``OUTDIR`` as it was, prints every problem once more at the end,
and exits non-zero.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


def build_and_publish(srcdir: Path, site: Path, options: list[str]) -> int:
    """Return sphinx-build's exit status; publish to ``site`` only on success."""
    staging = site.with_name(site.name + ".new")
    warnings = site.with_name(site.name + ".warnings.log")
    shutil.rmtree(staging, ignore_errors=True)
    warnings.unlink(missing_ok=True)
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-W",
        "--keep-going",
        "-q",
        "-w",
        str(warnings),
        *options,
        str(srcdir),
        str(staging),
    ]
    status = subprocess.run(command, cwd=srcdir).returncode
    if status != 0:
        problems = warnings.read_text(encoding="utf-8").strip() if warnings.exists() else ""
        kept = f"the last good site in {site} was kept" if site.exists() else "no site was published"
        print(f"\nBUILD FAILED; {kept}. The failed build is in {staging}.", file=sys.stderr)
        if problems:
            print("Problems:\n" + problems, file=sys.stderr)
        return status or 1
    old = site.with_name(site.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if site.exists():
        site.rename(old)
    staging.rename(site)
    shutil.rmtree(old, ignore_errors=True)
    return 0


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    return build_and_publish(Path.cwd(), Path(argv[0]).resolve(), argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

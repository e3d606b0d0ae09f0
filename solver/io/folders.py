"""The output folder of a run must be writable before anything is computed."""

from __future__ import annotations

import os
from pathlib import Path

from solver.errors import InputError


def check_writable(folder: Path) -> None:
    """InputError unless this process can create ``folder`` (its nearest existing ancestor
    is a writable directory) or write into it. In a container, the usual cause is a mounted
    folder owned by another uid."""
    existing = Path(os.path.abspath(folder))
    while not existing.exists():
        existing = existing.parent
    if existing.is_dir() and os.access(existing, os.W_OK | os.X_OK):
        return
    what = "is not a folder" if not existing.is_dir() else (
        f"is not writable by uid {os.getuid()} (in a container: mount a folder this user "
        "owns, e.g. docker run --user \"$(id -u):$(id -g)\" -v \"$PWD:/work\")")
    raise InputError(str(folder), f"cannot write the output here: {existing} {what}")

"""Resources are input too: the memory, disk and files a field makes a run need, against what
the machine has, checked before the run allocates or writes what the field sizes.

Each estimate is a lower bound of what the run takes (the arrays the field sizes, not the
rest; a mesh file's from its header or size before meshio reads it whole,
solver.mesh.read.memory_to_read), so a refused field would certainly not have fitted, and a
case that fits is never refused (the rockfall trajectories, whose length is known only once
each block ran, are warned about instead: solver.rockfall.run). A refusal is one InputError
line naming the field, the estimate and what the machine has, e.g. ``mesh.boxes[0].n:
1e+15 elements need over 256 TB of memory; this node has 22.3 GB available``.

What the machine has: the memory available on this node (``MemAvailable`` of
/proc/meminfo, else the physical memory), and the free space and free file entries (inodes)
of the file system that holds a path (its nearest existing folder). These differ from node to
node, so a check made on several ranks runs on rank 0 (solver.parallel.root_only) and its
verdict holds for all.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from solver.errors import InputError

MAX_FILES = 1_000_000
"""Most files one run may write: a folder of more is beyond what a file browser, ParaView's
series reader or a cluster's file quota (typically 1e6 entries) serves."""


def available_memory() -> float:
    """Memory available on this node [bytes]: ``MemAvailable`` of /proc/meminfo, else the
    physical memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def free_disk(path: str | os.PathLike) -> tuple[float, float]:
    """(free bytes, free file entries) of the file system that holds ``path`` (its nearest
    existing folder); (inf, inf) where none can be found or the file system gives no size
    (a pseudo file system such as /sys, where writing fails on its own terms), inf entries
    where it counts none."""
    folder = Path(os.path.abspath(path))
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        stats = os.statvfs(folder)
    except OSError:
        return math.inf, math.inf
    if not stats.f_blocks:
        return math.inf, math.inf
    inodes = float(stats.f_favail) if stats.f_files else math.inf
    return float(stats.f_bavail * stats.f_frsize), inodes


def size_text(n_bytes: float) -> str:
    """``12.3 GB``: a byte count in decimal units."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n_bytes < 1000.0 or unit == "PB":
            return f"{n_bytes:.3g} {unit}"
        n_bytes /= 1000.0
    return f"{n_bytes:.3g} PB"


def need_memory(where: str, n_bytes: float, what: str) -> None:
    """Refuse ``where`` when ``what`` needs more than the memory available on this node
    (``n_bytes``, a lower bound)."""
    have = available_memory()
    if n_bytes > have:
        raise InputError(where, f"{what} need over {size_text(n_bytes)} of memory; this node "
                                f"has {size_text(have)} available")


def need_disk(where: str, n_bytes: float, files: float, folder: str | os.PathLike,
              what: str) -> None:
    """Refuse ``where`` when ``what`` would write more than MAX_FILES files, or more bytes or
    files than the file system of ``folder`` has free (``n_bytes`` and ``files``: lower
    bounds)."""
    space, entries = free_disk(folder)
    if files > MAX_FILES:
        raise InputError(where, f"{what} make {files:.3g} files, more than the {MAX_FILES:g} "
                                "one run may write")
    if files > entries:
        raise InputError(where, f"{what} make {files:.3g} files; the file system of "
                                f"{folder} has room for {entries:.3g} more")
    if n_bytes > space:
        raise InputError(where, f"{what} need over {size_text(n_bytes)} of disk; the file "
                                f"system of {folder} has {size_text(space)} free")


def need_count(where: str, count: float, limit: float, what: str) -> None:
    """Refuse ``where`` when ``count`` (of ``what``) exceeds ``limit``."""
    if count > limit:
        raise InputError(where, f"{count:.3g} {what}, more than {limit:g}")


@dataclass
class Output:
    """What a field makes a run write, at least: ``files`` and ``bytes`` (``what``: the
    files, in words)."""

    field: str
    files: float
    bytes: float
    what: str


def check_outputs(config, file: str, folder: str | os.PathLike) -> None:
    """The outputs a case's configuration says it writes at least (its root's
    ``outputs_at_least() -> list[Output]``, where it has one) fit the file system of
    ``folder`` (:func:`need_disk`); an InputError names the field of ``file``."""
    outputs = getattr(config, "outputs_at_least", None)
    for output in outputs() if outputs is not None else []:
        need_disk(f"{file}: {output.field}", output.bytes, output.files, folder, output.what)

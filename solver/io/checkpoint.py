"""Checkpoints: a run's state on disk, written atomically, read back on any rank count.

Layout::

    DIR/checkpoint/manifest.json             what, for which case, at which step (JSON)
    DIR/checkpoint/rank<r>/<table>.keys.npy  rank r's rows of a table, keyed by global id
    DIR/checkpoint/rank<r>/<table>.<f>.npy   their field f, row by row

A table holds rows keyed by a global id that exactly one rank owns (elements by global
element id, interface faces by face id, contact records by record key), so a restart on
another rank count finds every row it needs: each rank memory-maps the key arrays of every
piece and reads the rows of the keys it holds. Arrays are stored as written (np.save), so a
restart continues bit for bit.

Writing goes to ``DIR/checkpoint.partial`` and rank 0 then swaps it in by renames; a crash
while writing leaves the previous checkpoint whole (``checkpoint.old`` between the two
renames, which :func:`find` also accepts).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import numpy as np

from solver.errors import InputError

FORMAT = 1


def write(comm, out_dir: Path, manifest: dict, tables: dict[str, dict[str, np.ndarray]]) -> float:
    """Write this rank's ``tables`` ({table: {"keys": ids, field: rows, ...}}) and rank 0's
    ``manifest`` (JSON-serialisable) as the run's checkpoint. Collective; returns the wall
    time it took [s]."""
    start = time.perf_counter()
    out_dir = Path(out_dir)
    partial = out_dir / "checkpoint.partial"
    if comm.rank == 0:
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
    comm.Barrier()
    piece = partial / f"rank{comm.rank}"
    piece.mkdir()
    for table, fields in tables.items():
        for name, array in fields.items():
            np.save(piece / f"{table}.{name}.npy", np.ascontiguousarray(array))
    comm.Barrier()
    if comm.rank == 0:
        (partial / "manifest.json").write_text(
            json.dumps(dict(manifest, format=FORMAT, ranks=comm.size), indent=1))
        final, old = out_dir / "checkpoint", out_dir / "checkpoint.old"
        shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            final.rename(old)
        partial.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    comm.Barrier()
    return time.perf_counter() - start


def find(out_dir: Path, where: str) -> Path:
    """The checkpoint folder of a run folder (InputError if there is none)."""
    for name in ("checkpoint", "checkpoint.old"):
        path = Path(out_dir) / name
        if (path / "manifest.json").is_file():
            return path
    raise InputError(where, f"no checkpoint in {out_dir} (run with --checkpoint-every N)")


def read_manifest(path: Path) -> dict:
    return json.loads((Path(path) / "manifest.json").read_text())


def case_digest(resolved: dict) -> str:
    """A digest of the resolved case (every field with its value)."""
    text = json.dumps(resolved, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def open_for(out_dir: Path, digest: str, where: str) -> tuple[Path, dict]:
    """The checkpoint folder of a run folder and its manifest, which must belong to the case
    of ``digest`` (InputError if there is none, or if the case changed)."""
    path = find(out_dir, where)
    manifest = read_manifest(path)
    if manifest["case"] != digest:
        raise InputError(where, f"the checkpoint in {out_dir} belongs to another case "
                                "(the case file or a --set value changed since)")
    return path, manifest


def read_table(path: Path, ranks: int, table: str, keys: np.ndarray,
               fields: list[str]) -> dict[str, np.ndarray]:
    """Rows of ``table`` for ``keys`` (in that order) from all pieces; every key must be
    found exactly once."""
    keys = np.asarray(keys, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    out: dict[str, np.ndarray] = {}
    found = np.zeros(len(keys), dtype=bool)
    for r in range(ranks):
        piece = Path(path) / f"rank{r}"
        stored = np.load(piece / f"{table}.keys.npy", mmap_mode="r")
        if not len(stored) or not len(keys):
            continue
        at = np.minimum(np.searchsorted(sorted_keys, stored), len(keys) - 1)
        hit = np.nonzero(sorted_keys[at] == stored)[0]
        if not len(hit):
            continue
        target = order[at[hit]]
        found[target] = True
        for name in fields:
            column = np.load(piece / f"{table}.{name}.npy", mmap_mode="r")
            if name not in out:
                out[name] = np.zeros((len(keys),) + column.shape[1:], dtype=column.dtype)
            out[name][target] = column[hit]
    if not found.all():
        raise InputError(str(path), f"checkpoint table {table!r} lacks "
                                    f"{int((~found).sum())} of the rows this run needs")
    for name in fields:
        if name not in out:
            column = np.load(Path(path) / "rank0" / f"{table}.{name}.npy", mmap_mode="r")
            out[name] = np.zeros((0,) + column.shape[1:], dtype=column.dtype)
    return out

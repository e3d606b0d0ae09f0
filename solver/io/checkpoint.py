"""Checkpoints: a run's state on disk, checksummed, replaced whole, read back on any rank count.

Layout::

    DIR/checkpoint/manifest.json             what, for which case, at which step (JSON)
    DIR/checkpoint/rank<r>/<table>.keys.npy  rank r's rows of a table, keyed by global id
    DIR/checkpoint/rank<r>/<table>.<f>.npy   their field f, row by row

A table holds rows keyed by a global id that exactly one rank owns (elements by global
element id, interface faces by face id, contact records by record key), so a restart on
another rank count finds every row it needs: each rank memory-maps the key arrays of every
piece and reads the rows of the keys it holds. Arrays are stored as written (``.npy``), so a
restart continues bit for bit.

Checkpoints are data: the manifest lists every array file of every rank with its size and
SHA-256 (``files``: ``{"rank<r>/<table>.<f>.npy": [bytes, hex]}``, each rank hashing the
bytes it writes), and carries the SHA-256 of its own content (``checksum``: of the manifest
without that field, as canonical JSON). :func:`verify` checks all of it before a restart
reads or writes anything, the files shared out over the ranks; any damage (a changed byte, a
truncated, empty or missing file or rank folder) is an InputError naming the file.

Writing goes to ``DIR/checkpoint.partial``; once every rank has written its piece, rank 0
writes the manifest (by a rename, so a manifest is always whole) and swaps the new
checkpoint in by renames, removing the previous one last: at every moment a complete
checkpoint is on disk as ``checkpoint`` or, between the renames, ``checkpoint.old``, which
:func:`find` takes when ``checkpoint`` is absent. Every file is flushed to the disk
(``fsync``) before the manifest names it, each rank's folder after its files, and the
manifest and the partial folder before the rename that puts it in place, which is then
made durable in ``DIR`` too: after a power loss the folder named ``checkpoint`` holds the
files its manifest lists, never empty ones. A write the file system refuses on any rank
(no space, quota, I/O error) raises :class:`solver.errors.OutputFailed` on every rank and
removes the partial folder; the previous checkpoint stays.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sys
import time
import tomllib
from pathlib import Path

import numpy as np

from solver.case import RESOLVED_CASE, Case, load_case, resolved_data
from solver.errors import InputError, OutputFailed, naming, write_together
from solver.parallel import on_root

#: 1: no checksums (read unverified, with a warning); 2: every file and the manifest
#: checksummed.
FORMAT = 2
HASH = "sha256"
CHECKPOINT, PARTIAL, OLD = "checkpoint", "checkpoint.partial", "checkpoint.old"
MANIFEST = "manifest.json"

_REFUSED = "the restart is refused and nothing was changed"


def write(comm, out_dir: Path, manifest: dict, tables: dict[str, dict[str, np.ndarray]]) -> float:
    """Write this rank's ``tables`` ({table: {"keys": ids, field: rows, ...}}) and rank 0's
    ``manifest`` (JSON-serialisable) as the run's checkpoint. Collective; returns the wall
    time it took [s]. A refused write raises OutputFailed on every rank (module docstring)."""
    start = time.perf_counter()
    out_dir = Path(out_dir)
    partial = out_dir / PARTIAL
    root = comm.rank == 0
    try:
        write_together(comm, (lambda: _fresh_folder(partial)) if root else None)
        listed = write_together(comm, lambda: _write_piece(partial / f"rank{comm.rank}",
                                                           tables))
        listings = comm.gather(listed, root=0)
        sealed = _sealed(dict(manifest, format=FORMAT, ranks=comm.size,
                              files={name: entry for part in listings
                                     for name, entry in part.items()})) if root else None
        write_together(comm, (lambda: _publish(out_dir, sealed)) if root else None)
    except OutputFailed:
        if root:
            shutil.rmtree(partial, ignore_errors=True)
        raise
    return time.perf_counter() - start


def _fresh_folder(folder: Path) -> None:
    """An empty ``folder`` (what an earlier, unfinished write left there goes)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)


def _write_piece(piece: Path, tables: dict[str, dict[str, np.ndarray]]) -> dict:
    """Write a rank's arrays into ``piece``; returns their manifest entries
    {"rank<r>/<file>": [bytes, sha256]}."""
    piece.mkdir()
    listed = {}
    for table, fields in tables.items():
        for name, array in fields.items():
            file = piece / f"{table}.{name}.npy"
            listed[f"{piece.name}/{file.name}"] = _save(file, array)
    sync_folder(piece)
    return listed


def sync_folder(folder: Path) -> None:
    """Flush ``folder``'s entries (the names of the files in it) to the disk."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with naming(folder):
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _save(file: Path, array: np.ndarray) -> list:
    """Write ``array`` as a .npy file (what np.save writes), flushed to the disk, and return
    [bytes, sha256] of the file, hashed from memory as it is written."""
    array = np.ascontiguousarray(array)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(array))
    digest = hashlib.new(HASH, header.getvalue())
    digest.update(array.reshape(-1).view(np.uint8))
    with naming(file), open(file, "wb") as out:
        out.write(header.getvalue())
        array.tofile(out)
        out.flush()
        os.fsync(out.fileno())
    return [len(header.getvalue()) + array.nbytes, digest.hexdigest()]


def _sealed(manifest: dict) -> dict:
    """``manifest`` as JSON reads it back, with its ``checksum``."""
    plain = json.loads(json.dumps(manifest))
    return dict(plain, checksum=_manifest_checksum(plain))


def _manifest_checksum(manifest: dict) -> str:
    """SHA-256 of the manifest without its ``checksum``, as canonical JSON."""
    body = {key: value for key, value in manifest.items() if key != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.new(HASH, text.encode()).hexdigest()


def _publish(out_dir: Path, manifest: dict) -> None:
    """Complete the partial checkpoint with its manifest and put it in place of the
    previous one (rank 0; module docstring)."""
    partial, final, old = out_dir / PARTIAL, out_dir / CHECKPOINT, out_dir / OLD
    staged = partial / f"{MANIFEST}.tmp"
    with naming(staged), open(staged, "w") as out:
        out.write(json.dumps(manifest, indent=1))
        out.flush()
        os.fsync(out.fileno())
    staged.rename(partial / MANIFEST)
    sync_folder(partial)
    if final.is_dir():
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
    partial.rename(final)
    sync_folder(out_dir)
    shutil.rmtree(old, ignore_errors=True)


def find(out_dir: Path, where: str) -> Path:
    """The checkpoint folder of a run folder: ``checkpoint``, or ``checkpoint.old`` where a
    write stopped between its renames (InputError if there is neither)."""
    for name in (CHECKPOINT, OLD):
        path = Path(out_dir) / name
        if path.is_dir():
            return path
    raise InputError(where, f"no checkpoint in {out_dir} (run with --checkpoint-every N)")


def exists(out_dir: Path) -> bool:
    """Whether a run folder holds a checkpoint written whole (its manifest in place)."""
    return any((Path(out_dir) / name / MANIFEST).is_file() for name in (CHECKPOINT, OLD))


def read_manifest(path: Path) -> dict:
    """The manifest of the checkpoint folder ``path``, checked against its own checksum
    (InputError naming the manifest if it is missing or damaged)."""
    file = Path(path) / MANIFEST
    try:
        manifest = json.loads(file.read_bytes())
    except FileNotFoundError:
        raise InputError(str(file), f"the checkpoint manifest is missing; {_REFUSED}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(str(file), f"the checkpoint manifest is damaged "
                                    f"({_reason(exc)}); {_REFUSED}") from None
    if not isinstance(manifest, dict) or not {"case", "ranks"} <= manifest.keys():
        raise InputError(str(file), f"the checkpoint manifest is damaged (not a manifest); "
                                    f"{_REFUSED}")
    if "checksum" in manifest and manifest["checksum"] != _manifest_checksum(manifest):
        raise InputError(str(file), f"the checkpoint manifest is damaged (its checksum does "
                                    f"not match its content); {_REFUSED}")
    return manifest


def _reason(exc: Exception) -> str:
    """A short text of a read or parse error."""
    if isinstance(exc, json.JSONDecodeError):
        return "empty" if not exc.doc.strip() else f"not JSON: {exc.msg} at byte {exc.pos}"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc).splitlines()[0][:200]


def case_digest(resolved: dict) -> str:
    """A digest of the resolved case (every field with its value)."""
    text = json.dumps(resolved, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_digest(out_dir: Path, case: Case) -> str:
    """The case digest the checkpoints of the run in ``out_dir`` carry: that of the case as
    the run's first start resolved it (``out_dir/case.resolved.toml``, which a restart does
    not rewrite), where this solver reads that file as the same case as ``case``; else that
    of ``case``. A solver that adds case fields so restarts the checkpoints of an earlier
    one whose case it resolves alike (the new fields at their defaults), while any other
    change of the case still refuses the restart (:func:`open_for`)."""
    current = case_digest(resolved_data(case))
    first = Path(out_dir) / RESOLVED_CASE
    try:
        written = tomllib.loads(first.read_text())
        alike = case_digest(resolved_data(load_case(first))) == current
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, InputError):
        return current
    return case_digest(written) if alike else current


def open_for(out_dir: Path, digest: str, where: str) -> tuple[Path, dict]:
    """The checkpoint folder of a run folder and its manifest, which must belong to the case
    of ``digest`` (InputError if there is none, if the manifest is damaged or if the case
    changed)."""
    path = find(out_dir, where)
    manifest = read_manifest(path)
    if manifest["case"] != digest:
        raise InputError(where, f"the checkpoint in {out_dir} belongs to another case "
                                "(the case file or a --set value changed since)")
    return path, manifest


def verify(comm, out_dir: Path, digest: str, where: str) -> None:
    """Check the checkpoint of a run folder before a restart (collective): it belongs to the
    case of ``digest``, and its manifest and every file it lists are as written (each rank
    checks a share of the files). Damage raises InputError naming the file on every rank."""
    path, manifest = on_root(comm, lambda: open_for(out_dir, digest, where))
    if "checksum" not in manifest:
        if comm.rank == 0:
            print(f"warning: {path}: written by an earlier solver without checksums; "
                  "it is read unverified", file=sys.stderr)
        return
    listed = sorted(manifest["files"].items(), key=lambda item: (-item[1][0], item[0]))
    damage = next(filter(None, (_damage(path, name, *entry)
                                for name, entry in listed[comm.rank::comm.size])), None)
    found = sorted(d for d in comm.allgather(damage) if d is not None)
    if found:
        raise InputError(*found[0])


def _damage(path: Path, name: str, size: int, checksum: str) -> tuple[str, str] | None:
    """(file, what is wrong) where the checkpoint file ``name`` differs from its manifest
    entry, else None."""
    file = path / name
    if not file.parent.is_dir():
        return str(file.parent), (f"the checkpoint's folder of rank {file.parent.name[4:]} "
                                  f"is missing; {_REFUSED}")
    try:
        actual = file.stat().st_size
        if actual != size:
            return str(file), (f"damaged checkpoint file ({actual} bytes, the manifest "
                               f"lists {size}); {_REFUSED}")
        with open(file, "rb") as data:
            if hashlib.file_digest(data, HASH).hexdigest() != checksum:
                return str(file), (f"damaged checkpoint file (its {HASH} differs from the "
                                   f"manifest's); {_REFUSED}")
    except FileNotFoundError:
        return str(file), f"the checkpoint file is missing; {_REFUSED}"
    except OSError as exc:
        return str(file), f"the checkpoint file cannot be read ({_reason(exc)}); {_REFUSED}"
    return None


def load_array(file: Path) -> np.ndarray:
    """A checkpoint array, memory-mapped (InputError naming the file if it cannot be read
    as one)."""
    try:
        return np.load(file, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise InputError(str(file), f"the checkpoint file is missing; {_REFUSED}") from None
    except (OSError, ValueError, EOFError) as exc:
        raise InputError(str(file), f"damaged checkpoint file ({_reason(exc)}); "
                                    f"{_REFUSED}") from None


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
        stored = load_array(piece / f"{table}.keys.npy")
        if not len(stored) or not len(keys):
            continue
        at = np.minimum(np.searchsorted(sorted_keys, stored), len(keys) - 1)
        hit = np.nonzero(sorted_keys[at] == stored)[0]
        if not len(hit):
            continue
        target = order[at[hit]]
        found[target] = True
        for name in fields:
            column = load_array(piece / f"{table}.{name}.npy")
            if name not in out:
                out[name] = np.zeros((len(keys),) + column.shape[1:], dtype=column.dtype)
            out[name][target] = column[hit]
    if not found.all():
        raise InputError(str(path), f"checkpoint table {table!r} lacks "
                                    f"{int((~found).sum())} of the rows this run needs")
    for name in fields:
        if name not in out:
            column = load_array(Path(path) / "rank0" / f"{table}.{name}.npy")
            out[name] = np.zeros((0,) + column.shape[1:], dtype=column.dtype)
    return out

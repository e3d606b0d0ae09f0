"""Checkpoint and restart of a CDEM run (solver.io.checkpoint holds the file format).

A checkpoint is taken at a step boundary where the stage goes on. It holds everything the
next step reads, keyed by global ids so that any partition can take it up:

* per element (global id): x0, x, v, the element forces f_int, the contact forces f_contact,
  the interface-spring force slots f_slot of its nodes and the Gauss-point stresses; plus
  what observers keep per element;
* observers take part through ``state() -> dict`` (global, JSON) and
  ``restore(state, rows)``, and with ``ELEMENT_FIELDS`` and ``element_state(view)`` for
  rows per element;
* per interface face (global face id): the springs' opening, shear force and state;
* per contact record (record key): target, tangential force, dashpot memory, normal force,
  status and offset, and the semi-springs' shares, places, overlaps and normals (the face a
  loaded contact is on decides where it may go on to); per loaded record (dashpot force not
  zero; solver.cdem.contact.pipeline.LOADED) its normal and last step's weights and target
  nodes (global ids), with which the dashpot work of last step's forces is booked; the
  potential targets of the semi-springs (global face ids) and, per active element, its
  node positions at the last renewal (and, when springs broke in the last step, which of
  its faces are fresh);
* in the manifest: the case it belongs to (a digest of the resolved case), the version of
  these tables (``TABLES``: a checkpoint of a version not ``READABLE`` is refused), step,
  time, the stage and its clock, gravity, energies, the time spent in breakable stages (the
  interface pairs' strength ramp), the contact counters, the observers' state, the frames
  of the output series and the stages already done; the energy tallies of the interface
  springs (``TimeLoop.tally``) and of the contact (``Contact.energy``) by name, as exact
  global sums (solver.cdem.tally).

Everything else (glue state, ghosts, neighbour sets, halos) is rebuilt from these, so a
restart continues the motion bit for bit on the same or another number of ranks.

The tallies are exact sums, so rank 0 takes the global sums back and the other ranks start
from zero; with the last step's geometry of the loaded contacts, whose dashpot work the
first step after the restart books (solver.cdem.contact.law.book_carried_dashpot), the
reported energies go on to the last bit on any partition too.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from solver.cdem import tally
from solver.cdem.contact.pipeline import LOADED
from solver.cdem.interface import INTERFACE_ENERGY
from solver.cdem.timeloop import Energies, StageClock, TimeLoop
from solver.errors import InputError
from solver.io import checkpoint as files

#: Version of the tables above: 2 added the semi-springs' offsets, 3 the weakening clock, 4
#: the semi-springs' normals, 5 the records' last-step geometry (weights, target nodes,
#: normals). A version-4 checkpoint is read too: the first step after it books the loaded
#: dashpots at their last overlap rate.
TABLES = 5
READABLE = (4, 5)


def save(comm, out_dir, digest: str, loop: TimeLoop, stage_index: int, observers: list,
         extra: dict) -> float:
    """Write the checkpoint of ``loop``'s model and counters (collective); ``extra``:
    JSON-serialisable run state (stage results, output series, periodic writer). Returns
    the seconds it took."""
    m = loop.m
    n, e, s = m.nodes, m.elements, m.springs
    elements = {"keys": e.gid, "x0": n.x0.reshape(-1, 8, 3), "x": n.x.reshape(-1, 8, 3),
                "v": n.v.reshape(-1, 8, 3), "f_int": n.f_int.reshape(-1, 8, 3),
                "f_contact": n.f_contact.reshape(-1, 8, 3),
                "f_slot": s.f_slot[:n.n_own].reshape(-1, 8, 3, 3), "stress": e.stress}
    for k, obs in enumerate(observers):
        for name, rows in obs.element_state(loop.view).items() if _per_element(obs) else ():
            elements[f"observer{k}_{name}"] = rows
    tables = {"elements": elements,
              "springs": {"keys": s.face_gid, "u_n": s.u_n, "f_s": s.f_s, "state": s.state}}
    contact = None
    if m.contact is not None:
        contact_tables, contact = m.contact.state()
        tables.update(contact_tables)
    manifest = {"case": digest, "tables": TABLES, "step": loop.step, "time": loop.time,
                "dt": loop.dt, "stage": stage_index, "clock": dataclasses.asdict(loop.clock),
                "g0": loop.g0.tolist(), "energies": dataclasses.asdict(loop.energies),
                "tally": tally.to_checkpoint(comm, loop.tally, INTERFACE_ENERGY.names),
                "broken_total": loop.broken_total, "unbalance": loop.unbalance,
                "weakening_clock": loop.weakening_clock,
                "guard": [loop.first_kinetic, loop.last_kinetic, loop.growth_streak],
                "contact": contact,
                "observers": [obs.state() for obs in observers],
                "run": extra}
    return files.write(comm, out_dir, manifest, tables)


#: Work per step, in units of one potential target checked by the contact geometry: an
#: element step (the element, its nodes and interface springs), a contact record (a
#: semi-spring or a semi-edge) and a potential target of a semi-spring. Measured on the
#: production Jiweishan runout on 2 ranks, restarted at step 37,807 and partitioned by
#: elements and records (0.99 s per step): the geometry took 0.22 s and 0.47 s per step on
#: the two ranks, which held 1.83 and 3.68 million potential targets (0.12 us each) beside
#: 0.81 and 0.98 million records; the element phase took 0.14 s for 187,216 elements
#: (0.76 us each). The law and the node shares take a few hundredths of a us per record.
ELEMENT_WORK, RECORD_WORK, CANDIDATE_WORK = 6, 1, 1


def element_work(out_dir, digest: str, n_cells: int, where: str) -> np.ndarray | None:
    """Work per step of each element (n_cells,) at the checkpoint of ``out_dir``:
    ELEMENT_WORK for its own update, plus RECORD_WORK per contact record on its faces and
    CANDIDATE_WORK per potential target of its semi-springs; None without contact. A
    restart whose partition is uneven (:func:`restart_partition`) partitions by it
    (solver.mesh.partition), so that the contacts of a fragmenting mass, wherever fracture
    has gone, are shared out equally. Reads the records of every rank's piece: call it on
    the rank that holds the mesh."""
    return _element_work(*_open(out_dir, digest, where), n_cells)


def _element_work(path, manifest: dict, n_cells: int) -> np.ndarray | None:
    """:func:`element_work` of the checkpoint folder ``path`` with its ``manifest``."""
    if manifest["contact"] is None:
        return None
    work = np.full(n_cells, ELEMENT_WORK, dtype=np.int64)
    for r in range(manifest["ranks"]):
        piece = path / f"rank{r}"
        semi_spring_elem = files.load_array(piece / "semi_springs.keys.npy") // 24
        semi_edge_elem = files.load_array(piece / "semi_edges.keys.npy") // 24
        targets = np.count_nonzero(files.load_array(piece / "semi_springs.candidates.npy") >= 0,
                                   axis=1)
        work += RECORD_WORK * (np.bincount(semi_spring_elem, minlength=n_cells)
                               + np.bincount(semi_edge_elem, minlength=n_cells))
        work += CANDIDATE_WORK * np.bincount(semi_spring_elem, weights=targets,
                                             minlength=n_cells).astype(np.int64)
    return work


#: A restart on the checkpoint's number of ranks keeps its partition while the busiest
#: rank's work (element_work) is at most this over the mean (no element moves to another
#: rank); beyond it, a new partition shares out the work.
KEEP_PARTITION_BELOW = 1.1


def restart_partition(out_dir, digest: str, n_cells: int, n_ranks: int, where: str,
                      keep: bool = True) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(parts, work) for a restart on ``n_ranks`` from the checkpoint of ``out_dir``: with
    ``keep``, the checkpoint's own partition (the rank of each element, (n_cells,)) where it
    was written on ``n_ranks`` ranks and its work per rank (:func:`element_work`) is within
    KEEP_PARTITION_BELOW of even; else the work to partition by (None without contact).
    Call it on the rank that holds the mesh."""
    path, manifest = _open(out_dir, digest, where)
    work = _element_work(path, manifest, n_cells)
    if not keep or manifest["ranks"] != n_ranks:
        return None, work
    parts = np.empty(n_cells, dtype=np.int64)
    for r in range(n_ranks):
        parts[files.load_array(path / f"rank{r}" / "elements.keys.npy")] = r
    if work is not None:
        per_rank = np.bincount(parts, weights=work, minlength=n_ranks)
        if per_rank.max() > KEEP_PARTITION_BELOW * per_rank.mean():
            return None, work
    return parts, None


def _open(out_dir, digest: str, where: str):
    """The checkpoint folder of ``out_dir`` and its manifest, which must belong to the case
    of ``digest`` and hold tables of this version (InputError otherwise)."""
    path, manifest = files.open_for(out_dir, digest, where)
    version = manifest.get("tables", 1)
    if version not in READABLE:
        raise InputError(where, f"the checkpoint in {out_dir} was written by another version "
                                f"of the solver (its tables are version {version}, this one "
                                f"reads {TABLES}); run the case again without --restart")
    return path, manifest


def load(comm, out_dir, digest: str, loop: TimeLoop, observers: list, where: str) -> dict:
    """Restore ``loop`` (its model freshly built from the same case, on any number of
    ranks) and the observers from the run folder's checkpoint; returns the manifest, whose
    ``stage``, ``clock`` and ``run`` tell where to go on (collective)."""
    path, manifest = _open(out_dir, digest, where)
    ranks = manifest["ranks"]
    m = loop.m
    n, e, s = m.nodes, m.elements, m.springs
    element_fields = ["x0", "x", "v", "f_int", "f_contact", "f_slot", "stress"]
    observer_fields = [[f"observer{k}_{name}" for name in obs.ELEMENT_FIELDS]
                       if _per_element(obs) else [] for k, obs in enumerate(observers)]
    rows = files.read_table(path, ranks, "elements", e.gid,
                            element_fields + sum(observer_fields, []))
    for name, target in (("x0", n.x0), ("x", n.x), ("v", n.v), ("f_int", n.f_int),
                         ("f_contact", n.f_contact)):
        target[:] = rows[name].reshape(-1, 3)
    s.f_slot[:n.n_own] = rows["f_slot"].reshape(-1, 3, 3)
    e.stress[:] = rows["stress"]
    springs = files.read_table(path, ranks, "springs", s.face_gid, ["u_n", "f_s", "state"])
    s.u_n[:], s.f_s[:], s.state[:] = springs["u_n"], springs["f_s"], springs["state"]
    if m.contact is not None:
        c = m.contact
        loop.set_glue(m.interfaces.glued_neighbours(s.state, len(e)))
        fields = ["target", "f_t", "dashpot", "f_n", "status"]
        spring_fields = ["candidates", "share", "placed", "offset", "overlap", "normal"]
        tables = {"semi_springs": files.read_table(path, ranks, "semi_springs",
                                                   c.semi_springs.key, fields + spring_fields),
                  "semi_edges": files.read_table(path, ranks, "semi_edges", c.semi_edges.key,
                                                 fields + ["offset"]),
                  "renewal": files.read_table(path, ranks, "renewal", c.own.gid[c.own_active],
                                              ["x", "fresh"] if manifest["contact"].get("pending")
                                              else ["x"])}
        if manifest["tables"] >= 5:
            for name, rec in (("semi_springs", c.semi_springs), ("semi_edges", c.semi_edges)):
                loaded = rec.key[tables[name]["dashpot"][:, 0] != 0.0]
                tables[LOADED[name]] = files.read_table(
                    path, ranks, LOADED[name], loaded, ["own_w", "target_w", "target_node",
                                                        "normal"])
        c.restore(n.x, n.du, tables, manifest["contact"])
    loop.step, loop.time, loop.dt = manifest["step"], manifest["time"], manifest["dt"]
    loop.g0 = np.asarray(manifest["g0"])
    loop.energies = Energies(**manifest["energies"])
    tally.restore(comm, loop.tally, manifest["tally"], INTERFACE_ENERGY.names)
    loop.broken_total = manifest["broken_total"]
    loop.unbalance = manifest["unbalance"]
    loop.weakening_clock = manifest["weakening_clock"]
    loop.first_kinetic, loop.last_kinetic, loop.growth_streak = manifest["guard"]
    loop.contact_rows = np.nonzero(np.any(n.f_contact != 0.0, axis=1))[0]
    for obs, state, names in zip(observers, manifest["observers"], observer_fields):
        obs.restore(state, {name.split("_", 1)[1]: rows[name] for name in names})
    manifest["clock"] = StageClock(**manifest["clock"])
    return manifest


def _per_element(observer) -> bool:
    """Whether an observer keeps state per element (``ELEMENT_FIELDS``, ``element_state``)."""
    return bool(getattr(observer, "ELEMENT_FIELDS", ()))

"""Checkpoints and clean interruption of an ensemble run (solver.io.checkpoint holds the format).

An ensemble (a point-mass sweep, a rockfall ensemble; a single point-mass run is an ensemble of
one) is many independent runs handed out over the ranks one at a time (solver.ensemble). A
user whose batch job meets its wall-time limit needs back every run that finished and the
runs under way as far as they had come, so a checkpoint holds

* every finished run, as the module encodes its row (:class:`Record`: JSON metadata and
  arrays);
* every run under way, as it stood at the step boundary where the ranks stopped, when the
  module gives its state (``state`` of :meth:`EnsembleCheckpoint.boundary`). A module whose
  runs are short may give none: such a run, like one not yet started, starts over on a
  restart, and since each run depends on its point only it ends as it would have.

A restart, on any number of ranks, hands out the unfinished runs (those under way first),
each going on from its stored state, and gathers the stored rows with the new ones in point
order: the results are those of the uninterrupted run to the last bit.

The ranks run different runs, so no step is common to all of them. They agree without holding
one another up through polls: non-blocking reductions (MPI_Iallreduce) of [signal caught,
checkpoint due, busy], which a busy rank starts and tests at the step boundaries of its run
(at most every POLL_S seconds; at once when it caught a signal or its checkpoint is due) and an
idle rank every few milliseconds. Every rank acts on a completed poll at its next boundary, so
they act together: all write a checkpoint (due when a rank has done ``checkpoint_steps``
steps, or ``checkpoint_seconds`` have passed, since the last one), or stop (a signal on any
rank: a last checkpoint where checkpoints are on, then :class:`solver.interrupt.Interrupted`),
or, once no rank is busy, end the ensemble.

Layout: the manifest lists the ``done`` and ``flight`` (under way) runs as ``[index, steps,
time, meta, {array: rows}]``; the rows of array ``a`` of run ``i`` are the table ``done.a``
(or ``flight.a``), keyed ``i * STRIDE + row``.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass
from time import perf_counter, sleep
from typing import Any

import numpy as np
from mpi4py import MPI

from solver import interrupt
from solver.case import Case
from solver.errors import OutputFailed
from solver.io import checkpoint as files
from solver.parallel import root_only

POLL_S = 0.05       # a busy rank starts a poll at most this often [s] (signals and due: at once)
IDLE_S = 0.005      # an idle rank tests the poll this often [s]
STRIDE = 1 << 32    # table key of row k of run i: i * STRIDE + k


@dataclass
class Record:
    """A run in a checkpoint: its steps and simulated time so far [s], JSON-serialisable
    ``meta`` and ``arrays`` (each at least 1-D, the same dtype and trailing shape in every
    run of a module)."""

    steps: int
    time: float
    meta: Any
    arrays: dict[str, np.ndarray]


class Stopped(Exception):
    """Raised out of a run at the step boundary where the ensemble stops."""


class _Poll:
    """One non-blocking agreement of all ranks at a time (module docstring)."""

    def __init__(self, comm):
        self.comm = comm.Dup()
        self.single = comm.size == 1
        self.mine, self.total = np.zeros(3), np.zeros(3)
        self.request = None
        self.started = -np.inf

    def check(self, busy: bool, due: bool) -> tuple[bool, bool, bool] | None:
        """(stop, checkpoint due, any rank busy) once a poll completes, else None."""
        if self.request is None:
            caught = interrupt.received() > 0
            if busy and not (caught or due) and (
                    self.single or perf_counter() - self.started < POLL_S):
                return None
            if self.single:
                return caught, due, busy
            self.mine[:] = caught, due, busy
            self.request = self.comm.Iallreduce(self.mine, self.total, op=MPI.SUM)
            self.started = perf_counter()
        if not self.request.Test():
            return None
        self.request = None
        stop, due, busy = (bool(v) for v in self.total > 0)
        return stop, due, busy

    def free(self) -> None:
        self.comm.Free()


class EnsembleCheckpoint:
    """Checkpoints, restart and clean stops of one ensemble run (module docstring).

    ``encode(row) -> Record`` and ``decode(Record) -> row`` carry a module's finished runs to
    the checkpoint and back. A run calls :meth:`boundary` at its step boundaries and, when
    :meth:`resumed` gives a record, goes on from that state. Hand the object to
    :func:`solver.ensemble.run_ensemble`. Collective construction (it reads the checkpoint of
    a restart)."""

    def __init__(self, case: Case, ctx, encode: Callable[[Any], Record],
                 decode: Callable[[Record], Any]):
        self.comm, self.out_dir = ctx.comm, ctx.out_dir
        self.digest = files.run_digest(ctx.out_dir, case)
        self.encode, self.decode = encode, decode
        self.every_steps, self.every_seconds = ctx.checkpoint_steps, ctx.checkpoint_seconds
        self.writes = bool(self.every_steps or self.every_seconds)
        self.done: dict[int, Record] = {}        # finished runs this rank holds
        self.waiting: dict[int, Record] = {}     # restored runs under way, not taken up yet
        self.finished_before: set[int] = set()
        self.current: int | None = None
        self.flight = None                       # (steps, time, state) of the run under way
        self.stopped_at = (0, 0.0)
        self.outcome: str | None = None          # "done" or "stopped"
        self.failure: OutputFailed | None = None  # a checkpoint write the disk refused
        self.n_points = 0
        self.count, self.last = 0, perf_counter()
        if ctx.restart:
            self._load(str(case.path))
        self.poll = _Poll(self.comm)

    # -- what run_ensemble asks -------------------------------------------------------------

    def todo(self, n_points: int) -> list[int]:
        """The runs still to run: those under way first, then the others in point order."""
        self.n_points = n_points
        first = sorted(self.waiting)
        return first + [i for i in range(n_points)
                        if i not in self.finished_before and i not in self.waiting]

    def restored(self) -> list[tuple[int, Any]]:
        """The finished rows of the checkpoint, as (index, row), on rank 0 (none elsewhere)."""
        return [(i, self.decode(rec)) for i, rec in sorted(self.done.items())]

    def call(self, fn: Callable[[int, Any], Any], index: int, point: Any) -> Any:
        """``fn(index, point)`` as the run under way (:class:`Stopped` when the ranks stop)."""
        self.current = index
        try:
            row = fn(index, point)
            record = self.encode(row)
            self.count += record.steps - (self.flight[0] if self.flight is not None else 0)
        finally:
            self.current, self.flight = None, None
        self.done[index] = record
        return row

    def idle(self) -> None:
        """Take part in the polls while this rank has no run (a non-blocking test)."""
        if self.outcome is None:
            agreed = self.poll.check(False, self._due())
            if agreed is not None:
                self._act(agreed)

    def wait(self) -> None:
        """Poll until every rank is idle or the ranks stopped (collective)."""
        while self.outcome is None:
            self.idle()
            if self.outcome is None:
                sleep(IDLE_S)
        self.poll.free()

    def stopped(self) -> bool:
        return self.outcome == "stopped"

    def raise_if_stopped(self) -> None:
        """After a stop: raise the OutputFailed of a checkpoint the file system refused
        (every rank has it), else Interrupted with the steps done (finished runs and those
        under way), the latest simulated time of a run under way and the runs finished
        (collective)."""
        if not self.stopped():
            return
        if self.failure is not None:
            raise self.failure
        self._prune()
        steps, t = self.stopped_at
        steps += sum(r.steps for r in self.done.values())
        if self.comm.rank == 0:
            steps += sum(r.steps for r in self.waiting.values())
        steps = self.comm.allreduce(steps)
        t = self.comm.allreduce(t, op=MPI.MAX)
        finished = self.comm.allreduce(len(self.done))
        signum = self.comm.allreduce(interrupt.received(), op=MPI.MAX) or signal.SIGTERM
        raise interrupt.Interrupted(signum, steps, t, {"runs_done": finished,
                                                       "runs": self.n_points})

    # -- what a run asks --------------------------------------------------------------------

    def resumed(self, index: int) -> Record | None:
        """The stored state of run ``index`` under way at the checkpoint (None: from its
        start)."""
        return self.waiting.get(index)

    def boundary(self, steps: int, t: float,
                 state: Callable[[], tuple[Any, dict[str, np.ndarray]]] | None = None) -> None:
        """A step boundary of the run under way, after ``steps`` steps at simulated time
        ``t`` [s]: write a checkpoint with all ranks, or raise :class:`Stopped`, when a poll
        says so. ``state() -> (meta, arrays)``: the run as it stands (None: it starts over on a
        restart)."""
        self.count += steps - self.flight[0] if self.flight is not None else 0
        self.flight = (steps, t, state)
        agreed = self.poll.check(True, self._due())
        if agreed is None:
            return
        self._act(agreed)
        if self.stopped():
            self.stopped_at = (steps, t)
            raise Stopped()

    # -- inside -----------------------------------------------------------------------------

    def _due(self) -> bool:
        return bool((self.every_steps and self.count >= self.every_steps) or (
            self.every_seconds and perf_counter() - self.last >= self.every_seconds))

    def _act(self, agreed: tuple[bool, bool, bool]) -> None:
        """Act on a completed poll: end the ensemble, write a checkpoint, stop; a checkpoint
        the file system refused (OutputFailed on every rank, solver.io.checkpoint.write)
        stops the ranks together, to raise it from :meth:`raise_if_stopped` once no run
        or receive is left under way."""
        stop, due, busy = agreed
        if not busy:
            self.outcome = "done"
            return
        if due or (stop and self.writes):
            try:
                self._write()
            except OutputFailed as failure:
                self.failure, stop = failure, True
        if stop:
            self.outcome = "stopped"

    def _prune(self) -> None:
        """Forget the restored runs under way that a rank took up (collective)."""
        mine = [*self.done, *([self.current] if self.current is not None else [])]
        held = set().union(*self.comm.allgather(mine))
        self.waiting = {i: r for i, r in self.waiting.items() if i not in held}

    def _write(self) -> None:
        """The checkpoint: this rank's finished runs and its run under way; rank 0 also the
        restored runs under way that no rank took up yet (collective)."""
        self._prune()
        flight = dict(self.waiting) if self.comm.rank == 0 else {}
        if self.flight is not None and self.flight[2] is not None:
            steps, t, state = self.flight
            meta, arrays = state()
            flight[self.current] = Record(steps, t, meta, arrays)
        listing, tables = {}, {}
        for kind, records in (("done", self.done), ("flight", flight)):
            listing[kind] = []
            for index, rec in sorted(records.items()):
                listing[kind].append([index, rec.steps, rec.time, rec.meta,
                                      {name: len(a) for name, a in rec.arrays.items()}])
                for name, a in rec.arrays.items():
                    keys, rows = tables.setdefault(f"{kind}.{name}", ([], []))
                    keys.append(index * STRIDE + np.arange(len(a), dtype=np.int64))
                    rows.append(np.asarray(a))
        kinds = {}
        for part in self.comm.allgather({name: (rows[0].dtype.str, rows[0].shape[1:])
                                         for name, (_, rows) in tables.items()}):
            kinds.update(part)
        out = {name: {"keys": np.concatenate(tables[name][0]),
                      "rows": np.concatenate(tables[name][1])} if name in tables else
               {"keys": np.zeros(0, np.int64), "rows": np.zeros((0, *shape), dtype)}
               for name, (dtype, shape) in kinds.items()}
        listings = self.comm.gather(listing, root=0)
        manifest = None
        if self.comm.rank == 0:
            manifest = {"case": self.digest, "kind": "ensemble", "points": self.n_points,
                        **{kind: sorted((e for part in listings for e in part[kind]),
                                        key=lambda e: e[0]) for kind in ("done", "flight")}}
        files.write(self.comm, self.out_dir, manifest, out)
        self.count, self.last = 0, perf_counter()

    def _load(self, where: str) -> None:
        """The finished runs (rank 0) and the runs under way (every rank) of the checkpoint."""
        path, manifest = files.open_for(self.out_dir, self.digest, where)
        self.finished_before = {entry[0] for entry in manifest["done"]}
        self.waiting = _read(path, manifest["ranks"], "flight", manifest["flight"])
        self.done = root_only(self.comm, lambda: _read(path, manifest["ranks"], "done",
                                                       manifest["done"])) or {}


def _read(path, ranks: int, kind: str, entries: list) -> dict[int, Record]:
    """The records ``entries`` of the manifest, with their arrays from every piece."""
    arrays: dict[int, dict[str, np.ndarray]] = {entry[0]: {} for entry in entries}
    for name in sorted({name for entry in entries for name in entry[4]}):
        runs = [(entry[0], entry[4][name]) for entry in entries if name in entry[4]]
        keys = np.concatenate([i * STRIDE + np.arange(n, dtype=np.int64) for i, n in runs])
        rows = files.read_table(path, ranks, f"{kind}.{name}", keys, ["rows"])["rows"]
        for (i, _), part in zip(runs, np.split(rows, np.cumsum([n for _, n in runs])[:-1])):
            arrays[i][name] = part
    return {index: Record(steps, t, meta, arrays[index])
            for index, steps, t, meta, _ in entries}

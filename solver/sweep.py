"""One sweep syntax for every module: ``[sweep]``, dotted case fields with their values.

    [sweep]
    friction.mu = [0.1, 0.2]              # the runs are the product of the lists
    "grid.nx" = [3, 4, 5]                 # quoted or not
    "materials[0].friction_deg" = [20.0, 30.0]   # an item of a list of tables, as with --set

or one row of values per run, for fields that change together::

    [sweep]
    keys = ["grid.nx", "grid.ny"]
    runs = [[3, 3], [4, 4], [6, 7]]

In the product the last key varies fastest. :func:`points` turns a case into its runs, each the
case with those fields set and validated like the case itself; the module hands them to
:func:`solver.ensemble.run_ensemble` (modules without rows of their own run each point as a
whole case: :func:`solver.ensemble.run_sweep`). A bad sweep stops before any run with one
line at the sweep key: a key that names no case field, an empty list, a NaN, a value the
field refuses (``sweep.grid.nx[1]: must be >= 1, got 0``, or ``sweep.runs[2][0]``).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, get_args, get_origin

from solver.case import from_dict, is_index, param, plain_data, set_field, swept_fields
from solver.errors import InputError

MAX_RUNS = 100_000
"""Most runs of a sweep."""


@dataclass
class Sweep:
    """Runs of the case with fields changed: dotted case fields with their lists of values (the
    runs are their product), or ``keys`` with one row of ``runs`` per run."""

    ALIASES: ClassVar[dict[str, str]] = {}
    """A module's own sweep lists (fields of its subclass) -> the case fields they set."""

    keys: list[str] = param(unit="-", doc="dotted case fields that each row of runs sets",
                            default_factory=list)
    runs: list[list[Any]] = param(unit="-", doc="one row of values per run (with keys)",
                                  default_factory=list)
    fields: dict[str, list[Any]] = swept_fields("any other key: a dotted case field and its "
                                                "list of values (the runs are the product of "
                                                "the lists)")

    def lists(self) -> dict[str, tuple[str, list]]:
        """The lists of the product in order, ``{sweep key: (case field, values)}``: the
        dotted fields, then the module's own lists that hold values."""
        out = {key: (key, values) for key, values in self.fields.items()}
        out.update({name: (field, getattr(self, name)) for name, field in self.ALIASES.items()
                    if getattr(self, name)})
        return out

    def swept(self) -> list[str]:
        """The case fields the sweep sets, in order."""
        return list(self.keys) if self.keys else [field for field, _ in self.lists().values()]

    def validate(self, where: str) -> None:
        lists = self.lists()
        if self.keys and lists:
            raise InputError(where, "give keys and runs or dotted fields with their values, "
                             "not both")
        if bool(self.keys) != bool(self.runs):
            raise InputError(where, "a sweep needs both keys and runs")
        for i, row in enumerate(self.runs):
            if len(row) != len(self.keys):
                raise InputError(f"{where}.runs[{i}]",
                                 f"expected {len(self.keys)} values ({', '.join(self.keys)})")
        for name, field in self.ALIASES.items():
            if getattr(self, name) and field in self.fields:
                raise InputError(f"{where}.{field}", f"also swept as sweep.{name}: give one")
        for at, key in _heads(self):
            if key.split(".")[0].split("[")[0] == "sweep":
                raise InputError(f"{where}{at[len('sweep'):]}", "a sweep cannot set sweep fields")
        if self.count() > MAX_RUNS:
            raise InputError(where, f"the sweep holds {self.count()} runs, more than "
                                    f"{MAX_RUNS}")

    def count(self) -> int:
        """How many runs the sweep holds (1 when it sweeps nothing), counted without
        expanding it."""
        if self.keys:
            return len(self.runs)
        return math.prod(len(values) for _, values in self.lists().values())


@dataclass
class CaseSweep(Sweep):
    """A sweep of whole runs of the case (a module without rows of its own: each run writes
    its own folder, the sweep one table, :func:`solver.ensemble.run_sweep`)."""

    plots: list[str] = param(unit="-", doc="results plotted against the first swept field, "
                             "one PNG each (<name>_<result>.png; a nested result as "
                             "table.key)", default_factory=list)


@dataclass
class Point:
    """One run of a sweep: its index, the values of the swept case fields, its configuration."""

    index: int
    values: dict[str, Any]
    config: Any

    @property
    def label(self) -> str:
        return label(self.values)


def is_sweep(cfg: Any) -> bool:
    """Whether the configuration ``cfg`` sweeps anything."""
    found = getattr(cfg, "sweep", None)
    return isinstance(found, Sweep) and bool(found.swept())


def points(cfg: Any, file: str, base: Path) -> list[Point]:
    """The runs of the case ``cfg`` (from ``file``, relative paths against ``base``): one per
    combination of the lists or per row, each validated as a case; the case itself as the
    only point when it sweeps nothing."""
    if not is_sweep(cfg):
        return [Point(0, {}, cfg)]
    s = cfg.sweep
    heads = _heads(s)
    for at, key in heads:
        problem = _no_field(type(cfg), cfg, key)
        if problem:
            raise InputError(f"{file}: {at}", problem)
    fields = [key for _, key in heads]
    if s.keys:
        combos = [(row, [f"sweep.runs[{i}][{j}]" for j in range(len(row))])
                  for i, row in enumerate(s.runs)]
    else:
        lists = s.lists()
        combos = [([values[j] for (_, values), j in zip(lists.values(), picks)],
                   [f"sweep.{name}[{j}]" for name, j in zip(lists, picks)])
                  for picks in itertools.product(*(range(len(v)) for _, v in lists.values()))]
    template = plain_data(dataclasses.replace(cfg, sweep=type(s)()))
    template.pop("sweep")
    runs = []
    for index, (values, where) in enumerate(combos):
        for value, at in zip(values, where):
            _check_finite(value, f"{file}: {at}")
        point = dict(zip(fields, values))
        runs.append(Point(index, point, _configure(type(cfg), template, point,
                                                   dict(zip(fields, where)), file, base, index)))
    return runs


def label(values: dict[str, Any]) -> str:
    """``"nx=3 mu=0.1"``: the last part of each key with its value."""
    return " ".join(f"{k.split('.')[-1]}={v}" for k, v in values.items())


def units(cls: type, keys: list[str]) -> dict[str, str]:
    """The unit of each dotted field of the schema ``cls`` (``"-"`` when it declares none)."""
    return {key: _walk(cls, None, key)[1].get("unit", "-") for key in keys}


def _heads(s: Sweep) -> list[tuple[str, str]]:
    """``(where, case field)`` of each swept field: ``sweep.keys[i]`` or ``sweep.<key>``."""
    if s.keys:
        return [(f"sweep.keys[{i}]", key) for i, key in enumerate(s.keys)]
    return [(f"sweep.{name}", field) for name, (field, _) in s.lists().items()]


def _walk(cls: type, cfg: Any, key: str) -> tuple[str, dict]:
    """Follow the dotted ``key`` (``a.b``, ``items[1].c``, ``table.<name>.c``) through the
    schema ``cls`` and, when given, the configuration ``cfg``: ``("", metadata of the field)``,
    or ``(what is wrong, {})``."""
    tp, obj, meta, path = cls, cfg, {}, ""
    for part in key.split("."):
        name, _, index = part.partition("[")
        if dataclasses.is_dataclass(tp):
            known = {f.name: f for f in dataclasses.fields(tp) if f.init}
            if name not in known:
                return (f"names no case field ({path or 'the case'} has: "
                        f"{', '.join(known)})", {})
            meta, tp = known[name].metadata, typing.get_type_hints(tp)[name]
            obj = getattr(obj, name, None)
        elif get_origin(tp) is dict:
            if obj is not None and name not in obj:
                return f"names no entry of {path} (it has: {', '.join(obj) or 'none'})", {}
            tp, obj = get_args(tp)[1], None if obj is None else obj[name]
        else:
            return f"names no case field ({path} is not a table)", {}
        path = f"{path}.{name}" if path else name
        if index:
            i = index.rstrip("]")
            if get_origin(tp) is not list or not is_index(i):
                return f"{path} is not a list of tables", {}
            if obj is not None and int(i) >= len(obj):
                return f"no item {part} ({path} has {len(obj)})", {}
            tp, obj = get_args(tp)[0], None if obj is None else obj[int(i)]
            path = f"{path}[{i}]"
    return "", meta


def _no_field(cls: type, cfg: Any, key: str) -> str:
    """What is wrong with the swept ``key`` ("" when it names a field of the case)."""
    parts = key.split(".")
    if not all(parts):
        return f"{key!r} is not a dotted key"
    return _walk(cls, cfg, key)[0]


def _check_finite(value: Any, where: str) -> None:
    """No NaN in a swept value (a field that takes infinity says so itself)."""
    values = value if isinstance(value, list) else [value]
    for v in values:
        if isinstance(v, list):
            _check_finite(v, where)
        elif isinstance(v, float) and math.isnan(v):
            raise InputError(where, f"must be a finite number, got {v}")


def _configure(cls: type, template: dict, point: dict[str, Any], where: dict[str, str],
               file: str, base: Path, index: int) -> Any:
    """The case ``template`` (plain data) with the point's fields set, validated as a case; an
    error names the sweep value that caused it, or the field with the run."""
    data = copy.deepcopy(template)
    for key, value in point.items():
        set_field(data, key, value, f"{file}: {where[key]}")
    try:
        return from_dict(cls, data, file, "", base)
    except InputError as exc:
        field = exc.where.split(": ", 1)[-1]
        run = f"run {index}: {label(point)}"
        for key, at in where.items():
            if field == key or field.startswith((f"{key}.", f"{key}[")):
                raise InputError(f"{file}: {at}", f"{exc.message} ({run})") from None
        raise InputError(f"{file}: sweep", f"{field}: {exc.message} ({run})") from None

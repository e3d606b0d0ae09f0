"""One sweep syntax for the ensemble modules: dotted case fields with their lists of values.

    [sweep]
    "grid.nx" = [3, 4, 5]        # or unquoted: friction.mu = [0.1, 0.2]
    friction.mu = [0.1, 0.2]

The runs are the Cartesian product of the lists, in the order the case gives the keys (the
last key varies fastest). Each run is the case with those fields set, validated like the case
itself; a value it refuses is reported at ``sweep.<key>`` with the run's values.
"""

from __future__ import annotations

import dataclasses
import itertools
import typing
from pathlib import Path
from typing import Any

from solver.case import from_dict, plain_data
from solver.errors import InputError


def product(lists: dict[str, list]) -> list[dict[str, Any]]:
    """The points of a sweep: one ``{key: value}`` per combination of the lists."""
    keys = list(lists)
    return [dict(zip(keys, combo)) for combo in itertools.product(*lists.values())]


def label(point: dict[str, Any]) -> str:
    """``"nx=3 mu=0.1"``: the last part of each key with its value."""
    return " ".join(f"{k.split('.')[-1]}={v}" for k, v in point.items())


def units(cls: type, keys: list[str]) -> dict[str, str]:
    """The unit of each dotted field of the schema ``cls`` (``"-"`` when it declares none)."""
    out = {}
    for key in keys:
        tp, meta = cls, {}
        for part in key.split("."):
            found = {f.name: f for f in dataclasses.fields(tp)} if dataclasses.is_dataclass(tp) \
                else {}
            if part not in found:
                meta = {}
                break
            meta, tp = found[part].metadata, typing.get_type_hints(tp)[part]
        out[key] = meta.get("unit", "-")
    return out


def configure(cfg: Any, point: dict[str, Any], file: str, base: Path,
              where: str = "sweep") -> Any:
    """The configuration ``cfg`` (its own sweep emptied) with the point's dotted fields set,
    validated as a case; an error names ``<file>: <where>`` and the field."""
    data = plain_data(dataclasses.replace(cfg, sweep=type(cfg.sweep)()))
    data.pop("sweep")
    for key, value in point.items():
        table, parts = data, key.split(".")
        if parts[0] == "sweep":
            raise InputError(f"{file}: {where}", f"{key!r}: a sweep cannot set sweep fields")
        for part in parts[:-1]:
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise InputError(f"{file}: {where}", f"{key!r}: {part!r} is not a table")
        table[parts[-1]] = value
    try:
        return from_dict(type(cfg), data, file, "", base)
    except InputError as exc:
        field = exc.where.split(": ", 1)[-1]
        raise InputError(f"{file}: {where}", f"{field}: {exc.message} (run {label(point)})") \
            from None

"""Parameter sweeps: one validated Config per row of ``sweep.runs``."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from solver.case import Case, from_dict
from solver.errors import InputError
from solver.pointmass.config import Config


@dataclass
class RunSpec:
    index: int
    label: str
    params: dict[str, Any]
    config: Config


def _plain(obj: Any) -> Any:
    """A dataclass tree as TOML-like tables (tuples -> lists, path fields made absolute)."""
    if dataclasses.is_dataclass(obj):
        out = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            out[f.name] = os.path.abspath(value) if f.metadata.get("path") and value \
                else _plain(value)
        return out
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return obj


def expand(case: Case) -> list[RunSpec]:
    """The runs of a case: itself, or one per sweep row with the row's values set."""
    cfg = case.config
    if not cfg.sweep.keys:
        return [RunSpec(0, case.name, {}, cfg)]
    base = _plain(dataclasses.replace(cfg, sweep=type(cfg.sweep)()))
    base.pop("sweep")
    specs = []
    for i, row in enumerate(cfg.sweep.runs):
        data = _plain(base)
        for key, value in zip(cfg.sweep.keys, row):
            table, parts = data, key.split(".")
            for part in parts[:-1]:
                table = table.setdefault(part, {})
                if not isinstance(table, dict):
                    raise InputError(f"{case.path}: sweep.keys",
                                     f"{key!r}: {part!r} is not a table")
            table[parts[-1]] = value
        try:
            run_cfg = from_dict(Config, data, str(case.path), "", case.path.parent)
        except InputError as exc:
            field = exc.where.split(": ", 1)[-1]
            raise InputError(f"{case.path}: sweep.runs[{i}]", f"{field}: {exc.message}") from None
        label = " ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(cfg.sweep.keys, row))
        specs.append(RunSpec(i, label, dict(zip(cfg.sweep.keys, row)), run_cfg))
    return specs

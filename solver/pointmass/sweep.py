"""Parameter sweeps: one validated Config per row of ``sweep.runs``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from solver.case import Case, from_dict, plain_data
from solver.errors import InputError
from solver.pointmass.config import Config


@dataclass
class RunSpec:
    index: int
    label: str
    params: dict[str, Any]
    config: Config


def expand(case: Case) -> list[RunSpec]:
    """The runs of a case: itself, or one per sweep row with the row's values set."""
    cfg = case.config
    if not cfg.sweep.keys:
        return [RunSpec(0, case.name, {}, cfg)]
    base = plain_data(dataclasses.replace(cfg, sweep=type(cfg.sweep)()))
    base.pop("sweep")
    specs = []
    for i, row in enumerate(cfg.sweep.runs):
        data = plain_data(base)
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

"""Physical ranges, not only finiteness: every number a case gives has a documented lower and
upper bound, an error line stays one short line, and an integration that cannot end ends
in a bounded number of evaluations."""

from __future__ import annotations

import dataclasses
import math
import typing

import numpy as np
import pytest

from solver.errors import LINE_LIMIT, InputError, OutputFailed
from solver.guard import TICK_EVERY, IntegrationFailed, guarded
from solver.modules import MODULES, spec_for

BOUNDED_ELSEWHERE = {
    ("solver.pointmass.config", "TimeConfig", "t_end"):
        "TimeConfig.validate: at most TIME_LIMIT, after the t_end / dt steps check",
    **{("solver.cdem.config", "ContactConfig", name):
       "cdem Config.validate (CONTACT_RANGES, check_stiffness): ContactConfig belongs to the "
       "contact-law register" for name in ("normal_stiffness", "shear_stiffness",
                                           "stiffness_factor", "tolerance", "margin",
                                           "weakening_velocity")},
}
"""Float fields whose range a ``validate`` checks instead of the field's bounds, and why."""


def _holds_floats(tp) -> bool:
    if tp is float:
        return True
    return any(_holds_floats(a) for a in typing.get_args(tp) if a is not Ellipsis)


def _float_fields(cls, seen=None):
    """(module, class, field, metadata) of every float-valued field under ``cls``."""
    seen = set() if seen is None else seen
    if cls in seen:
        return
    seen.add(cls)
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tables = [a for a in (hints[f.name], *typing.get_args(hints[f.name]))
                  if dataclasses.is_dataclass(a)]
        if tables:
            yield from _float_fields(tables[0], seen)
        elif _holds_floats(hints[f.name]):
            yield cls.__module__, cls.__name__, f.name, f.metadata


FIELDS = sorted({(m, c, n): meta for module in MODULES
                 for m, c, n, meta in _float_fields(spec_for(module, module).config)}.items())


@pytest.mark.parametrize("key, meta", FIELDS, ids=[".".join(k[1:]) for k, _ in FIELDS])
def test_every_float_field_has_a_lower_and_an_upper_bound(key, meta):
    if key in BOUNDED_ELSEWHERE:
        return
    low = meta.get("ge") if meta.get("ge") is not None else meta.get("gt")
    high = meta.get("le") if meta.get("le") is not None else meta.get("lt")
    assert low is not None and high is not None, f"{key}: bounds {low}, {high}"
    assert math.isfinite(low) and math.isfinite(high) and low < high, key


def test_the_fields_bounded_elsewhere_exist():
    assert set(BOUNDED_ELSEWHERE) <= {key for key, _ in FIELDS}


@pytest.mark.parametrize("where, message", [
    ("/tmp/" + "c" * 5000 + ".toml: mesh.path", "x" * 100_000),
    ("case.toml: grid", "first line\nsecond line\n" * 1000),
    ("--set", "y" * 10),
])
def test_an_input_error_is_one_line_of_at_most_line_limit(where, message):
    line = InputError(where, message).line
    assert len(line) <= LINE_LIMIT and "\n" not in line and line.startswith("error: ")
    assert where.rsplit(": ", 1)[-1] in line


def test_a_write_failure_is_one_line_of_at_most_line_limit():
    failure = OutputFailed("/out/" + "d" * 10_000 + "/frame.vtu", 28, "No space left on device")
    failure.kept = "the last checkpoint is kept in " + "k" * 10_000
    line = failure.line
    assert len(line) <= LINE_LIMIT and "frame.vtu" in line and "ENOSPC" in line


def test_an_integration_without_end_or_finite_state_fails_in_bounded_evaluations():
    ticks = []
    endless = guarded(lambda t, y: -y, limit=2500, tick=lambda: ticks.append(1))
    with pytest.raises(IntegrationFailed, match="2500 evaluations"):
        for _ in range(10_000):
            endless(0.0, np.ones(2))
    assert len(ticks) == 2500 // TICK_EVERY
    with pytest.raises(IntegrationFailed, match="state is not finite"):
        guarded(lambda t, y: y, limit=10)(0.0, np.array([1.0, np.nan]))
    with pytest.raises(IntegrationFailed, match="rates are not finite"), \
            np.errstate(divide="ignore"):
        guarded(lambda t, y: y / 0.0, limit=10)(0.0, np.array([1.0, 2.0]))

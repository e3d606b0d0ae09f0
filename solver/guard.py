"""Bounded integration: a right-hand side that counts its calls, refuses a non-finite state
and lets the run stop at a signal while an integrator (scipy's solve_ivp) or an iteration
runs.

An integrator that cannot make progress (a step size that collapses at a discontinuity, a
state that overflowed) raises :class:`IntegrationFailed` instead of running on without end
or failing deep inside scipy; the caller turns it into the documented outcome of its phase
(a rockfall block that ``stalled``, an impact that ``failed``, a run that diverged). A
``tick`` callable, called every TICK_EVERY evaluations, is where a run's step boundary
polls for a signal (solver.ensemble_checkpoint.EnsembleCheckpoint.boundary), so that no
integration ignores SIGTERM.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

TICK_EVERY = 1000
"""Right-hand-side evaluations between two calls of the tick."""


class IntegrationFailed(RuntimeError):
    """An integration that exceeded its evaluations, met a non-finite state or was refused
    by the integrator; the message says which."""


def guarded(fun: Callable, limit: int, tick: Callable[[], None] | None = None) -> Callable:
    """``fun(t, y)`` that raises IntegrationFailed after ``limit`` evaluations or at a
    non-finite ``y`` or value, and calls ``tick()`` every TICK_EVERY evaluations."""
    count = 0

    def wrapped(t, y):
        nonlocal count
        count += 1
        if count > limit:
            raise IntegrationFailed(f"no end after {limit} evaluations (t = {t:.6g} s)")
        if tick is not None and count % TICK_EVERY == 0:
            tick()
        if not np.all(np.isfinite(y)):
            raise IntegrationFailed(f"the state is not finite at t = {t:.6g} s")
        value = fun(t, y)
        if not np.all(np.isfinite(value)):
            raise IntegrationFailed(f"the rates are not finite at t = {t:.6g} s")
        return value

    return wrapped


def solve(solve_ivp: Callable, fun: Callable, *args, limit: int,
          tick: Callable[[], None] | None = None, **kwargs):
    """``solve_ivp(guarded(fun), *args, **kwargs)``; a failure of the integrator (status < 0,
    or scipy's ValueError at a non-finite state) raises IntegrationFailed."""
    try:
        sol = solve_ivp(guarded(fun, limit, tick), *args, **kwargs)
    except (ValueError, ZeroDivisionError, OverflowError, np.linalg.LinAlgError) as exc:
        raise IntegrationFailed(f"the integrator failed: {exc}") from None
    if sol.status < 0:
        raise IntegrationFailed(f"the integrator failed: {sol.message}")
    return sol

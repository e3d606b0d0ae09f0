"""Case schema of ``module = "contact_laws"``: the tangential restitution map of Becker et al.
(2008)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from solver.case import param, section
from solver.errors import InputError
from solver.sweep import CaseSweep


MAX_POINTS = 1_000_000
"""Most (k_t/k_n, g_t/g_n) points of a map."""


def tangential_turn(kt_kn: float, alpha_over_meff: float, steps: int) -> float:
    """omega_t dt of the tangential spring when a collision of duration t_c = pi / omega_n
    (at most, gamma_n = 0) takes ``steps`` steps: omega_t / omega_n = sqrt(k_t/k_n m_eff/alpha)
    (Becker et al. 2008 Eq. 49). Position Verlet is stable for omega_t dt < 2."""
    return math.pi * math.sqrt(kt_kn / alpha_over_meff) / steps


@dataclass
class Contact:
    """The contact law and the colliding pair (Becker et al. 2008 Eqs. 1-15)."""

    mu: float = param(0.3, unit="-", doc="Coulomb friction coefficient (up to 10, tan 84 deg: "
                      "beyond any material pair)", ge=0.0, le=10.0)
    e_n: float = param(1.0, unit="-", doc="target normal restitution (1: gamma_n = 0, the "
                                          "elastic case of Becker et al. 2008, Sec. "
                                          "III.3.3)", gt=0.0, le=1.0)
    alpha_over_meff: float = param(2.0 / 7.0, unit="-", doc="tangential over normal effective "
                                   "mass, alpha/m_eff (2/7 for homogeneous spheres; at most 1, "
                                   "Becker et al. 2008 Eq. 15)", gt=0.0, le=1.0)
    k_n: float = param(1.0e6, unit="N/m", doc="normal spring stiffness (1e-6 to 1e20)",
                       ge=1e-6, le=1e20)
    m_eff: float = param(1.0, unit="kg", doc="normal effective mass m1 m2/(m1 + m2) (1e-12 to "
                         "1e12)", ge=1e-12, le=1e12)
    g_n: float = param(1.0, unit="m/s", doc="normal impact velocity at the contact point (up "
                       "to 1e4)", gt=0.0, le=1e4)


@dataclass
class Grid:
    """The (k_t/k_n, g_t/g_n) points of the map."""

    gt_gn_min: float = param(0.005, unit="-", doc="smallest g_t/g_n (1e-9 to 1e6: below, the "
                             "tangential speed is round-off against the normal one)", ge=1e-9,
                             le=1e6)
    gt_gn_max: float = param(2.5, unit="-", doc="largest g_t/g_n", gt=0.0, le=1e6)
    n_gt: int = param(200, unit="-", doc="g_t/g_n values (linear spacing)", ge=2, le=10_000)
    kt_kn_min: float = param(0.02, unit="-", doc="smallest k_t/k_n (1e-9 to 1e6)", ge=1e-9,
                             le=1e6)
    kt_kn_max: float = param(20.0, unit="-", doc="largest k_t/k_n", gt=0.0, le=1e6)
    n_kt: int = param(80, unit="-", doc="k_t/k_n values", ge=2, le=10_000)
    kt_spacing: Literal["linear", "log"] = param("log", unit="-", doc="spacing of k_t/k_n")

    def validate(self, where: str) -> None:
        if self.gt_gn_max <= self.gt_gn_min:
            raise InputError(f"{where}.gt_gn_max", "must be larger than gt_gn_min")
        if self.kt_kn_max <= self.kt_kn_min:
            raise InputError(f"{where}.kt_kn_max", "must be larger than kt_kn_min")
        if self.n_gt * self.n_kt > MAX_POINTS:
            raise InputError(f"{where}.n_gt", f"n_gt x n_kt = {self.n_gt * self.n_kt} points, "
                             f"more than {MAX_POINTS}")


@dataclass
class SmallGt:
    """The point where e_t is compared with the small-g_t limit cos(omega_t t_c) (Eq. 49)."""

    gt_gn: float = param(3.0e-4, unit="-", doc="g_t/g_n of the check (<< mu k_n/k_t; 1e-9 to "
                         "1e6)", ge=1e-9, le=1e6)
    kt_kn: float = param(1.0, unit="-", doc="k_t/k_n of the check", gt=0.0, le=1e6)
    steps: int = param(400000, unit="-", doc="integration steps of this one collision (the final "
                       "Coulomb phase lasts ~ g_t/g_n of the contact and must span many steps)",
                       ge=100, le=100_000_000)


@dataclass
class Output:
    """Files of the map."""

    csv: bool = param(True, unit="-", doc="write e_t_map.csv")
    plot: bool = param(True, unit="-", doc="write e_t_map.png")


@dataclass
class Config:
    """Tangential restitution e_t(k_t/k_n, g_t/g_n) of the linear dashpot + Cundall-Strack law."""

    contact: Contact = section(Contact, "the contact law and the colliding pair")
    grid: Grid = section(Grid, "the (k_t/k_n, g_t/g_n) points of the map")
    small_gt: SmallGt = section(SmallGt, "the small-g_t check point")
    steps: int = param(4000, unit="-", doc="integration steps per collision", ge=100,
                       le=1_000_000)
    output: Output = section(Output, "outputs")
    sweep: CaseSweep = section(CaseSweep, "whole maps with fields changed (solver.sweep)")

    def validate(self, where: str) -> None:
        for field_name, kt_kn, steps in (("grid.kt_kn_max", self.grid.kt_kn_max, self.steps),
                                         ("small_gt.kt_kn", self.small_gt.kt_kn,
                                          self.small_gt.steps)):
            turn = tangential_turn(kt_kn, self.contact.alpha_over_meff, steps)
            if turn >= 2.0:
                raise InputError(f"{where}: {field_name}", f"k_t/k_n = {kt_kn:g} needs "
                                 f"omega_t dt = {turn:.3g} < 2 for the Verlet steps to be "
                                 f"stable: more steps or a smaller k_t/k_n")

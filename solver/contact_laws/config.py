"""Case schema of ``module = "contact_laws"``: the tangential restitution map of seed 004."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from solver.case import param
from solver.errors import InputError


@dataclass
class Contact:
    """The contact law and the colliding pair (seed 004 Eqs. 1-15)."""

    mu: float = param(0.3, unit="-", doc="Coulomb friction coefficient", ge=0.0)
    e_n: float = param(1.0, unit="-", doc="target normal restitution (1: gamma_n = 0, the "
                                          "elastic case of seed 004 Sec. III.3.3)", gt=0.0, le=1.0)
    alpha_over_meff: float = param(2.0 / 7.0, unit="-", doc="tangential over normal effective "
                                   "mass, alpha/m_eff (2/7 for homogeneous spheres)", gt=0.0)
    k_n: float = param(1.0e6, unit="N/m", doc="normal spring stiffness", gt=0.0)
    m_eff: float = param(1.0, unit="kg", doc="normal effective mass m1 m2/(m1 + m2)", gt=0.0)
    g_n: float = param(1.0, unit="m/s", doc="normal impact velocity at the contact point",
                       gt=0.0)


@dataclass
class Grid:
    """The (k_t/k_n, g_t/g_n) points of the map."""

    gt_gn_min: float = param(0.005, unit="-", doc="smallest g_t/g_n", gt=0.0)
    gt_gn_max: float = param(2.5, unit="-", doc="largest g_t/g_n", gt=0.0)
    n_gt: int = param(200, unit="-", doc="g_t/g_n values (linear spacing)", ge=2)
    kt_kn_min: float = param(0.02, unit="-", doc="smallest k_t/k_n", gt=0.0)
    kt_kn_max: float = param(20.0, unit="-", doc="largest k_t/k_n", gt=0.0)
    n_kt: int = param(80, unit="-", doc="k_t/k_n values", ge=2)
    kt_spacing: Literal["linear", "log"] = param("log", unit="-", doc="spacing of k_t/k_n")

    def validate(self, where: str) -> None:
        if self.gt_gn_max <= self.gt_gn_min:
            raise InputError(f"{where}.gt_gn_max", "must be larger than gt_gn_min")
        if self.kt_kn_max <= self.kt_kn_min:
            raise InputError(f"{where}.kt_kn_max", "must be larger than kt_kn_min")


@dataclass
class SmallGt:
    """The point where e_t is compared with the small-g_t limit cos(omega_t t_c) (Eq. 49)."""

    gt_gn: float = param(3.0e-4, unit="-", doc="g_t/g_n of the check (<< mu k_n/k_t)", gt=0.0)
    kt_kn: float = param(1.0, unit="-", doc="k_t/k_n of the check", gt=0.0)
    steps: int = param(400000, unit="-", doc="integration steps of this one collision (the final "
                       "Coulomb phase lasts ~ g_t/g_n of the contact and must span many steps)",
                       ge=100)


@dataclass
class Output:
    csv: bool = param(True, unit="-", doc="write e_t_map.csv")
    plot: bool = param(True, unit="-", doc="write e_t_map.png")


@dataclass
class Config:
    """Tangential restitution e_t(k_t/k_n, g_t/g_n) of the linear dashpot + Cundall-Strack law."""

    contact: Contact = field(default_factory=Contact)
    grid: Grid = field(default_factory=Grid)
    small_gt: SmallGt = field(default_factory=SmallGt)
    steps: int = param(4000, unit="-", doc="integration steps per collision", ge=100)
    output: Output = field(default_factory=Output)

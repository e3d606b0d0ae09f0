"""Case schema of the impact module (``module = "impact"``). SI units; angles in degrees.

The soil defaults are a *proposed* dense-sand set: the Table 1 of Dattola et al. (2023) ("set 02
of Dattola et al. 2021") is not available, only its viscous pair
``c_v = 1.0, gamma_v = 8.70`` (alternatives ``c_v = 0.5, gamma_v = 1.70 / 0.85``) is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from solver import resources, sweep
from solver.case import SPEED_LIMIT, param, section
from solver.errors import InputError

Variable = Literal["aspect_ratio", "theta_0", "theta_in", "omega_0"]
MAX_ASPECT_RATIO = 100.0
"""Most elongated block: A_r = H/R up to 100 (Dattola et al. 2023 study 1 to 4)."""
MIN_MASS = 1e-3
"""Lightest block [kg]: a gram; lighter is a grain, and its impact lasts no time step."""
MAX_SPIN = 36000.0
"""Fastest initial spin [deg/s], 100 revolutions per second."""


@dataclass
class Block:
    """The impacting ellipsoid of revolution (sizes from the mass, Dattola et al. 2023, Eq. 7)."""

    mass: float = param(100.0, unit="kg", doc="block mass m (1e-3 to 1e8: from a gram, a "
                        "grain rather than a block, checked by validate, to a 4e4 m3 "
                        "boulder)", gt=0.0, le=1e8)
    density: float = param(2600.0, unit="kg/m3", doc="block density rho (not given in the "
                           "paper; 2600 assumed; 10 to 1e5)", ge=10.0, le=1e5)
    aspect_ratio: float = param(1.0, unit="-", doc="A_r = H/R (1 = sphere, > 1 prolate, up to "
                                f"{MAX_ASPECT_RATIO:g})", gt=0.0, le=MAX_ASPECT_RATIO)

    def validate(self, where: str) -> None:
        if self.mass < MIN_MASS:
            raise InputError(f"{where}.mass", f"must be >= {MIN_MASS:g} kg (a gram: a grain, "
                                              f"not a block), got {self.mass:g}")
        if self.aspect_ratio < 1.0:
            raise InputError(f"{where}.aspect_ratio", f"the model is a prolate spheroid "
                             f"(A_r >= 1; use theta_0 = 90 for the minor axis), got "
                             f"{self.aspect_ratio}")


@dataclass
class Impact:
    """Kinematics at the onset of contact (Dattola et al. 2023, Figs. 1 and 3)."""

    speed: float = param(14.0, unit="m/s", doc="impact speed |v_in| (1e-3 to 1e3: slower "
                         "than a millimetre a second is resting, not an impact)", ge=1e-3,
                         le=SPEED_LIMIT)
    theta_in: float = param(0.0, unit="deg", doc="impact angle between the velocity and the "
                            "ground normal (0 = normal impact; |theta_in| >= 90 would point away "
                            "from the ground and is rejected)", gt=-90.0, lt=90.0)
    theta_0: float = param(0.0, unit="deg", doc="angle between the major axis and the normal "
                           "(0 = along the major axis, 90 = along the minor axis; -360 to 360)",
                           ge=-360.0, le=360.0)
    omega_0: float = param(0.0, unit="deg/s", doc="angular velocity at impact, clockwise "
                           f"positive (at most {MAX_SPIN:g} in magnitude)", ge=-MAX_SPIN,
                           le=MAX_SPIN)
    slope: float = param(0.0, unit="deg", doc="slope inclination omega", ge=0.0, lt=90.0)
    gravity: float = param(9.81, unit="m/s2", doc="gravitational acceleration (up to 1e4: a "
                           "thousand g)", ge=0.0, le=1e4)


@dataclass
class Soil:
    """Macro-element parameters (symbols of Dattola et al. 2023, Appendix A; laws in
    ``rheology.py``)."""

    unit_weight: float = param(17.0e3, unit="N/m3", doc="soil unit weight gamma (1e3 to 1e5: "
                               "from fresh snow to three times the densest rock)", ge=1e3,
                               le=1e5)
    phi: float = param(40.0, unit="deg", doc="soil friction angle phi'", gt=0.0, lt=60.0)
    nu: float = param(0.25, unit="-", doc="Poisson's ratio (-1 < nu < 0.5)", gt=-1.0, lt=0.5)
    phi_b: float = param(30.0, unit="deg", doc="block-soil friction angle phi'_b (slider)",
                         gt=0.0, lt=90.0)
    k_e: float = param(500.0, unit="-", doc="k_E: elastic modulus / atmospheric pressure (1 to "
                       "1e7: from mud at 0.1 MPa to diamond's 1 TPa)", ge=1.0, le=1e7)
    n_e: float = param(1.0, unit="-", doc="n_E: exponent of the elastic law", ge=0.5, le=2.0)
    s_ef: float = param(1.0, unit="-", doc="S_ef: shape coefficient of the elastic law (0.01 "
                        "to 100, as the coefficients below: two orders either side of the "
                        "calibrated 1; beyond, the impact lasts no step or never ends)",
                        ge=0.01, le=100.0)
    eta_n: float = param(1.0, unit="-", doc="eta_N: normal dashpot / radiation dashpot (up to "
                         "100)", ge=0.0, le=100.0)
    eta_t: float = param(1.0, unit="-", doc="eta_T: tangential dashpot multiplier (up to 100)",
                         ge=0.0, le=100.0)
    eta_r: float = param(1.0, unit="-", doc="eta_R: rotational dashpot multiplier (up to 100)",
                         ge=0.0, le=100.0)
    g0_ratio: float = param(25.6, unit="-", doc="G_0/G: small-strain shear modulus of the far "
                            "field over the secant modulus of the springs; the normal dashpot "
                            "radiates at the small-strain wave speed (1: at the secant one; "
                            "25.6: Seed and Idriss 1970, D_r 0.9 at 1 MPa)", ge=1.0, le=1e4)
    psi: float = param(0.48, unit="-", doc="psi: moment scaling of the generalized force "
                       "(0.01 to 100)", ge=0.01, le=100.0)
    beta: float = param(0.95, unit="-", doc="beta: shape exponent of the yield locus",
                        gt=0.0, lt=1.0)
    delta_1: float = param(1.0, unit="-", doc="Delta_1: tangential non-associativity (up to "
                           "100)", ge=0.0, le=100.0)
    delta_2: float = param(1.0, unit="-", doc="Delta_2: rotational non-associativity (up to "
                           "100)", ge=0.0, le=100.0)
    alpha_vt: float = param(1.0, unit="-", doc="alpha_vt: tangential hardening coefficient "
                            "(up to 100)", ge=0.0, le=100.0)
    alpha_vr: float = param(1.0, unit="-", doc="alpha_vR: rotational hardening coefficient "
                            "(up to 100)", ge=0.0, le=100.0)
    k_p: float = param(20.0, unit="-", doc="hardening rate (load-settlement curvature; 0.01 to "
                       "1e4: two orders beyond the calibrated 20 either side)", ge=0.01,
                       le=1e4)
    rho_c0: float = param(0.05, unit="-", doc="initial hardening variable rho_c (1e-3 to 1: "
                          "below, the soil yields at a touch)", ge=1e-3, lt=1.0)
    gamma_v: float = param(8.70, unit="1/s", doc="gamma_v: visco-plastic fluidity (1e-9 to "
                           "1e6: from no flow within an impact to flow within a microsecond)",
                           ge=1e-9, le=1e6)
    c_v: float = param(1.0, unit="-", doc="c_v: exponent of the overstress function (0.05 to "
                       "20: beyond, the overstress power overflows)", ge=0.05, le=20.0)


@dataclass
class Solver:
    """Time integration of one impact (scipy solve_ivp, stiff method, event detection)."""

    method: Literal["Radau", "BDF", "LSODA"] = param("Radau", unit="-", doc="stiff integrator")
    rtol: float = param(1.0e-8, unit="-", doc="relative tolerance (1e-13 to 0.01: finer is "
                        "below round-off, coarser no tolerance)", ge=1e-13, le=0.01)
    atol: float = param(1.0e-11, unit="-", doc="absolute tolerance (states scaled to O(1); "
                        "1e-16 to 1e-3)", ge=1e-16, le=1e-3)
    t_max: float = param(0.2, unit="s", doc="longest impact; reaching it means the block "
                         "stopped in contact (1e-6, no impact is shorter, to 60)", ge=1e-6,
                         le=60.0)


@dataclass
class Sweep(sweep.Sweep):
    """Parametric study: the Cartesian product of any dotted case field's list
    (``soil.phi = [30.0, 40.0]``, solver.sweep) and of the four input lists (empty = the
    case's value), which are short for the fields they set."""

    ALIASES: ClassVar[dict[str, str]] = {
        "aspect_ratio": "block.aspect_ratio", "theta_0": "impact.theta_0",
        "theta_in": "impact.theta_in", "omega_0": "impact.omega_0"}

    aspect_ratio: list[float] = param(unit="-", doc="A_r values", default_factory=list, gt=0.0,
                                      le=MAX_ASPECT_RATIO)
    theta_0: list[float] = param(unit="deg", doc="orientation values", default_factory=list,
                                 ge=-360.0, le=360.0)
    theta_in: list[float] = param(unit="deg", doc="impact angle values", default_factory=list,
                                  gt=-90.0, lt=90.0)
    omega_0: list[float] = param(unit="deg/s", doc="initial spin values", default_factory=list,
                                 ge=-MAX_SPIN, le=MAX_SPIN)
    x: Variable = param("aspect_ratio", unit="-", doc="abscissa of the sweep plots")
    plots: list[str] = param(unit="-", doc="result columns plotted against x (one PNG each)",
                             default_factory=lambda: ["e_n", "max_penetration", "max_force"])
    histories: bool = param(False, unit="-", doc="also plot the time histories of all impacts")

    def validate(self, where: str) -> None:
        from solver.impact.sweeps import COLUMNS
        super().validate(where)
        for name in self.plots:
            if name not in COLUMNS:
                raise InputError(f"{where}.plots", f"unknown column {name!r} "
                                 f"(known: {', '.join(COLUMNS)})")


@dataclass
class Output:
    """VTK series of the ellipsoid moving over the ground (solver.impact.output)."""

    vtk: bool = param(True, unit="-", doc="write a single impact as <name>.pvd")
    vtk_in_sweeps: bool = param(False, unit="-", doc="in a sweep, write every impact as "
                                "<name>_impacts/impact_NNN.pvd")
    vtk_frames: int = param(60, unit="-", doc="frames per impact series (up to 1e4: a file "
                            "each)", ge=2, le=10_000)


@dataclass
class Config:
    """Root of an impact case: one impact, or a sweep when ``[sweep]`` lists values."""

    block: Block = section(Block, "the block")
    impact: Impact = section(Impact, "onset")
    soil: Soil = section(Soil, "macro-element")
    solver: Solver = section(Solver, "integrator")
    sweep: Sweep = section(Sweep, "parametric study")
    output: Output = section(Output, "VTK output")

    def outputs_at_least(self) -> list[resources.Output]:
        """The VTK files of the impact, or of every impact of a sweep with vtk_in_sweeps
        (a .vtu per frame, 24 B per vertex of the 40-vertex spheroid at least)."""
        impacts = self.sweep.count() if self.output.vtk_in_sweeps else int(self.output.vtk)
        frames = impacts * self.output.vtk_frames
        return [resources.Output("output.vtk_frames", frames, frames * 40 * 24.0,
                                 f"{impacts} impacts of {self.output.vtk_frames} VTK frames")]

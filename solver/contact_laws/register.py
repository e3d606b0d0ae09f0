"""The register of the contact laws a CDEM case chooses by name: ``[contact] normal_law`` and
``[contact] tangential_law``.

A law is one record class below and one row of :data:`NORMAL_LAWS` or :data:`TANGENTIAL_LAWS`,
as a granular sub-model is one class and one style entry in LAMMPS's GRANULAR package. The
record holds what a case writes (``name``), the integer the kernels branch on (``id``), the
``[contact]`` fields the law reads (:class:`Parameter`: unit, default, bounds, description)
and, in its docstring, the law's equation and source. The case schema
(solver.cdem.config.ContactConfig) takes its choices and the laws' fields from here; the
contact kernel (solver.cdem.contact.law.contact_law) applies the law whose id
:func:`kernel_laws` hands it, through the dispatch kernels of solver.contact_laws.laws.

How to add a law
----------------
1. Its scalar kernel goes to solver.contact_laws.laws (``@njit(cache=True, inline="always")``),
   its docstring with the equation and the source.
2. A record class here, subclass of :class:`NormalLaw` or :class:`TangentialLaw`: ``name``,
   ``id`` (the next free integer of its kind; an id never changes and is never reused:
   the kernels' numba cache holds it, and knows nothing of this file), ``parameters`` (a
   :class:`Parameter` for each ``[contact]`` field it reads, new ones defined beside it),
   the docstring, and ``check`` where its fields bound each other.
3. One row in :data:`NORMAL_LAWS` or :data:`TANGENTIAL_LAWS`.
4. Its branch on the id in the dispatch kernel of its kind in solver.contact_laws.laws
   (:func:`~solver.contact_laws.laws.normal_law_force`,
   :func:`~solver.contact_laws.laws.friction_coefficient`); a parameter the kernel needs
   beyond k_n, k_t, the dashpot's damping ratio and mu gets a field of :class:`LawChoice`,
   filled in :func:`kernel_laws`.
5. Each new parameter becomes a field of ContactConfig: ``name: float =
   law_field(NEW_PARAMETER)``.
``solver describe cdem`` then lists the law and its fields, and a case can choose it;
tests/test_contact_law_slot.py shows the tests a law brings: its motion against an
independent solution, the same motion on 1 and 2 ranks, its bad input.

The tangential laws here are all the incremental Cundall-Strack spring with a Coulomb cap
mu F_n (solver.contact_laws.laws.cundall_strack_xyz); they differ in the friction
coefficient mu, which their dispatch kernel returns. A law that changes the spring itself
would branch on the whole tangential force instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from solver.case import param
from solver.errors import InputError


@dataclass(frozen=True)
class Parameter:
    """A ``[contact]`` field a law reads: its name, unit, default, description and bounds
    (``ge``/``gt``/``le``/``lt`` as in solver.case.param; the schema checks them)."""

    name: str
    unit: str
    default: float
    doc: str
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    @property
    def bounds(self) -> dict[str, float]:
        """The bounds that are set, as keyword arguments of solver.case.param."""
        return {key: value for key, value in (("ge", self.ge), ("gt", self.gt),
                                              ("le", self.le), ("lt", self.lt))
                if value is not None}


def law_field(parameter: Parameter) -> Any:
    """The case-schema field (solver.case.param) of a law's parameter."""
    return param(parameter.default, unit=parameter.unit, doc=parameter.doc, **parameter.bounds)


RESTITUTION = Parameter(
    "restitution", "-", 0.5, "normal restitution e_n the dashpot is tuned for (a single "
    "element landing flat on a face)", gt=0.0, le=1.0)
FRICTION = Parameter(
    "friction_deg", "deg", 30.0, "contact friction angle phi, mu = tan(phi) (the static "
    "angle of velocity_weakening)", ge=0.0, lt=90.0)
DYNAMIC_FRICTION = Parameter(
    "dynamic_friction_deg", "deg", 30.0, "velocity_weakening: dynamic friction angle phi_d, "
    "mu_d = tan(phi_d), the friction of fast slip (at most friction_deg; equal to it: no "
    "weakening)", ge=0.0, lt=90.0)
WEAKENING_VELOCITY = Parameter(
    "weakening_velocity", "m/s", 1.0, "velocity_weakening: slip rate v_c at which mu has "
    "fallen half-way from mu_s to mu_d", gt=0.0)


class ContactLaw:
    """A law's record: the class is the register's row and is never instantiated."""

    name: ClassVar[str]
    id: ClassVar[int]
    parameters: ClassVar[tuple[Parameter, ...]] = ()

    @classmethod
    def check(cls, contact, where: str) -> None:
        """Constraints between the law's fields of ``contact`` (a ContactConfig), beyond the
        bounds of each; raises InputError naming the field."""


class NormalLaw(ContactLaw):
    """A law of the normal force F_n(delta, d delta/dt) of a contact, compression positive."""


class TangentialLaw(ContactLaw):
    """A friction coefficient mu of the incremental Cundall-Strack spring's cap mu F_n."""


LINEAR_DASHPOT_ID = 0
COULOMB_ID = 0
VELOCITY_WEAKENING_ID = 1


class LinearDashpot(NormalLaw):
    """Penalty spring and linear dashpot, no tension (solver.contact_laws.laws.normal_force):

        F_n = max(K_n delta + c_n d(delta)/dt, 0),  c_n = 2 zeta(e_n) sqrt(K_n m),

    K_n = k_n A the record's stiffness, m the contact's share of the reduced mass of the two
    bodies it joins (solver.cdem.contact.law), zeta(e_n) = -ln e_n / sqrt(pi^2 + ln^2 e_n)
    the damping ratio of the restitution e_n (Becker, Schwager and Poeschel 2008, Eqs. 3
    and 5); the penalty spring of the semi-spring contact (Feng et al. 2014, Eq. 13)."""

    name = "linear_dashpot"
    id = LINEAR_DASHPOT_ID
    parameters = (RESTITUTION,)


class Coulomb(TangentialLaw):
    """Constant friction: mu = tan(phi) (friction_deg), the Coulomb cap of the incremental
    Cundall-Strack spring, |F_t| <= mu F_n (Cundall and Strack 1979; Becker et al. 2008,
    Eqs. 12-14)."""

    name = "coulomb"
    id = COULOMB_ID
    parameters = (FRICTION,)


class VelocityWeakening(TangentialLaw):
    """Velocity-weakening friction (Lucas, Mangeney and Ampuero 2014):

        mu(v) = mu_d + (mu_s - mu_d) / (1 + |v| / v_c),

    mu_s = tan(friction_deg) at rest, mu_d = tan(dynamic_friction_deg) at slip rates far
    above v_c = weakening_velocity, half-way between them at |v| = v_c; the cap mu(v) F_n of
    the same incremental spring as :class:`Coulomb`. The slip rate v is the contact's
    relative tangential speed over the step (solver.contact_laws.laws.friction_coefficient).
    Lucas et al. fit this law to the runout of landslides on Earth and other planetary
    bodies: the fast drop of friction is a mechanism of long runout."""

    name = "velocity_weakening"
    id = VELOCITY_WEAKENING_ID
    parameters = (FRICTION, DYNAMIC_FRICTION, WEAKENING_VELOCITY)

    @classmethod
    def check(cls, contact, where: str) -> None:
        if contact.dynamic_friction_deg > contact.friction_deg:
            raise InputError(f"{where}.{DYNAMIC_FRICTION.name}",
                             f"must be <= friction_deg ({contact.friction_deg:g}, the static "
                             f"angle), got {contact.dynamic_friction_deg:g}")


NORMAL_LAWS: dict[str, type[NormalLaw]] = {law.name: law for law in (LinearDashpot,)}
TANGENTIAL_LAWS: dict[str, type[TangentialLaw]] = {
    law.name: law for law in (Coulomb, VelocityWeakening)}


class LawChoice(NamedTuple):
    """What the contact kernel needs of the chosen laws beyond k_n, k_t, the dashpot's
    damping ratio and mu: the laws' ids (normal, tangential) and the velocity-weakening
    parameters mu_d (dynamic_friction, -) and v_c (weakening_velocity, m/s)."""

    normal: int
    tangential: int
    dynamic_friction: float
    weakening_velocity: float


DEFAULT_LAWS = LawChoice(LINEAR_DASHPOT_ID, COULOMB_ID, math.tan(math.radians(
    DYNAMIC_FRICTION.default)), WEAKENING_VELOCITY.default)
"""The laws of a ``[contact]`` table that chooses none."""


def kernel_laws(contact) -> LawChoice:
    """The :class:`LawChoice` of ``contact`` (a validated ContactConfig)."""
    return LawChoice(NORMAL_LAWS[contact.normal_law].id,
                     TANGENTIAL_LAWS[contact.tangential_law].id,
                     math.tan(math.radians(contact.dynamic_friction_deg)),
                     contact.weakening_velocity)

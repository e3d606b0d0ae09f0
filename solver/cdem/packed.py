"""Structures of arrays packed once for the kernels: :func:`pack`.

The kernels take their arrays as a few namedtuples (solver.cdem.state.NodeArrays,
SpringArrays; solver.cdem.contact.mesh.ContactMesh, records.RecordArrays,
law.DashpotBodies). numba reads a namedtuple's field as a tuple item, at no cost in a kernel,
but a namedtuple passed from Python is unboxed at every call, each of its arrays at some
0.3-1 us: on a small model the 300-odd arrays of a step's kernel calls took a quarter of
the step. Packed (a numba structref holding the namedtuple) it is unboxed once, when packed;
a call then costs about 1 us whatever the structure holds. A kernel reads the namedtuple
once, at its top (``mesh = mesh.value``), and then its fields as tuple items.

A packed structure holds the arrays, not copies: writes from either side are seen by the
other. Pack again where an array is replaced by another (the owners of these structures do
it where they allocate: ContactRecords.insert, the contact pipeline's renewals).
"""

from __future__ import annotations

from numba import njit, types
from numba.experimental import structref


@structref.register
class PackedType(types.StructRef):
    """numba type of a Packed: a structref with the one field ``value``."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class Packed(structref.StructRefProxy):
    """A structure packed for the kernels (module docstring); they read it as ``.value``."""


structref.define_proxy(Packed, PackedType, ["value"])


@njit(cache=True)
def pack(value):
    """``value`` (a namedtuple of arrays and scalars) packed for the kernels."""
    return Packed(value)

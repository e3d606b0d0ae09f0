"""Semi-spring / semi-edge contact between CDEM blocks (Feng et al. 2014, sections 3-5).

One pipeline, split by job: :mod:`detect` (potential targets, ghost faces from neighbouring
ranks), the geometry (:mod:`frames`: face frames and point tests; :mod:`semi_spring`:
semi-spring -> face; :mod:`semi_edge`: semi-edge -> edge), :mod:`law` (the force, one call
into solver.contact_laws for both kinds), :mod:`exchange` (node shares to their owners,
summed in global order); :mod:`pipeline` runs them on a rank's arrays. The kernels take a
few named structures: the contact elements (:mod:`mesh`), the records of one kind
(:mod:`records`) and the ContactParams. The rules and the
tests that pin them: docs/contact.md.
"""

from solver.cdem.contact.pipeline import Contact, ContactElements, ContactParams

__all__ = ["Contact", "ContactElements", "ContactParams"]

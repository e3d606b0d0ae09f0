"""Units of the results a CDEM run writes into ``summary.json`` (general, per stage, contact,
and each analysis of solver.cdem.analyses)."""

PRESTEP_UNITS = {"solver": "-", "unknowns": "-", "linear_iterations": "-",
                 "unbalance_ratio": "-", "overloaded_springs": "-", "wall_s": "s",
                 "seconds": "s"}

STAGE_UNITS = {"name": "-", "steps": "-", "dt": "s", "end": "-", "unbalance_ratio": "-",
               "renewals": "-", "converged": "-", "prestep": PRESTEP_UNITS}

CONTACT_UNITS = {"semi_springs": "-", "in_compression": "-", "sticking": "-", "sliding": "-",
                 "renewals": "-", "candidate_checks": "-", "types_seen": "-",
                 "semi_edges_in_compression": "-", "max_penetration_ratio": "-"}

RESULT_UNITS = {
    "dt": "s", "time": "s", "max_displacement": "m", "broken_springs": "-",
    "broken_fraction": "-", "unbalance_ratio": "-", "energy": "J", "energy_error": "-",
    "contact": CONTACT_UNITS, "contact_types_seen": "-", "max_penetration_ratio": "-",
    "stages": STAGE_UNITS,
    "angle_error_max": "rad", "swept_angle": "rad", "angle_error_rel": "-",
    "final_angle_numeric": "rad", "final_angle_theory": "rad", "energy_drift": "-",
    "inertia_about_axis": "kg m2", "mass": "kg",
    "critical_numeric": "deg (shear, toppling) or - (tensile: gravity factor)",
    "critical_theory": "deg (shear, toppling) or - (tensile: gravity factor)",
    "rel_error": "-", "base_stress_numeric": "Pa", "base_stress_theory": "Pa",
    "stress_rel_error_max": "-", "acceleration_numeric": "m/s2",
    "acceleration_theory": "m/s2", "tilt_deg": "deg", "displacement_ratio": "-",
    "contact_normal_force_sum": "N", "weight": "N", "failure_angle_deg": "deg",
    "max_block_displacement": "m",
    "sliding_distance_m": "m", "com_drop_m": "m", "runout_m": "m", "lost_elements": "-",
    "sliding_faces_broken_fraction": "-", "deposit_thickness_max_m": "m",
    "peak_speed_mps": "m/s", "peak_kinetic_energy_J": "J", "failed": "-", "stopped": "-",
    "runout_time_s": "s", "map_cell_m": "m", "mobilised_friction_deg": "deg",
    "base_reaction_N": "N", "weight_N": "N", "base_reaction_rel_error": "-",
    "equilibrium_unbalance_ratio": "-", "equilibrium_broken_springs": "-",
}

"""Benchmarks of the CDEM engine behind ``solver bench``: glued-step and contact throughput
on generated meshes (throughput), and the engine at scale on a fragmented heap (scale)."""

"""Write the example hexahedral meshes in meshes/ (small files, read back and checked).

    python scripts/make_meshes.py [--out meshes]

box_4x4x4.msh          1 m cube, 4x4x4 elements, Gmsh 2.2, one group "rock"
column_1x1x10.msh      1 x 1 x 10 m column of 10 elements, Gmsh 4.1, group "column"
slab_dip21.vtu         60 x 20 x 6 m slab dipping 21 deg towards azimuth 345 (cf. the
                       jiweishan 345/21 bed), 12x4x2 elements, groups by layer in the
                       cell array "group" (1 lower, 2 upper half)
layers_3.inp           three conforming layers (clay 2 m, sand 3 m, rock 5 m) on 6 x 6 m,
                       Abaqus with one *ELSET per layer
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from solver.mesh import box, read_hex_mesh, stack, tilted_slab, write_mesh

ROOT = Path(__file__).resolve().parents[1]


def examples() -> list[tuple[str, object, str]]:
    """(file name, HexMesh, Gmsh version) of every example."""
    return [
        ("box_4x4x4.msh", box(4, 4, 4, groups=lambda c: np.ones(len(c)),
                              group_names={1: "rock"}), "2.2"),
        ("column_1x1x10.msh", box(1, 1, 10, size=(1.0, 1.0, 10.0),
                                  groups=lambda c: np.ones(len(c)),
                                  group_names={1: "column"}), "4.1"),
        ("slab_dip21.vtu", tilted_slab(12, 4, 2, size=(60.0, 20.0, 6.0), dip_deg=21.0,
                                       dip_direction_deg=345.0,
                                       groups=lambda c: 1 + (c[:, 2] > 3.0)), "2.2"),
        ("layers_3.inp", stack(3, 3, [("clay", 2.0, 2), ("sand", 3.0, 3), ("rock", 5.0, 5)],
                               size_xy=(6.0, 6.0)), "2.2"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "meshes", help="output directory")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    for name, mesh, version in examples():
        path = out / name
        write_mesh(mesh, path, msh_version=version)
        back = read_hex_mesh(str(path))
        assert np.array_equal(back.cells, mesh.cells) and np.array_equal(back.groups, mesh.groups)
        print(f"{path}: {back.n_cells} elements, {len(back.points)} nodes, "
              f"groups {sorted(set(back.groups.tolist()))}, {path.stat().st_size / 1e3:.1f} kB")


if __name__ == "__main__":
    main()

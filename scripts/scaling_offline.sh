#!/bin/sh
# The scaling table (scripts/scaling.py, strong and weak) in one command, on a machine that
# may have no network: docs/performance.md, "Scaling on a larger machine".
#
#     OUT=out/scaling sh scripts/scaling_offline.sh
#
# With a folder .whl/ in the checkout (wheels of the packages the machine lacks, made where
# pip reaches an index), they are installed under /tmp/site first and its mpiexec is used;
# otherwise the Python and mpiexec at hand (scaling.py's default: the mpiexec next to the
# Python). Settings, from the environment: PYTHON (python3), RANKS ("1 2 4 8 16"), STRONG
# (20000 elements), WEAK (5000 per rank), STEPS (30 timed steps per point), OUT (where the
# JSON files and the model's report go).
set -eu
PYTHON=${PYTHON:-python3}
RANKS=${RANKS:-"1 2 4 8 16"}
STRONG=${STRONG:-20000}
WEAK=${WEAK:-5000}
STEPS=${STEPS:-30}
OUT=${OUT:-out/scaling}
export PYTHONUNBUFFERED=1
set --
if [ -d .whl ]; then
    "$PYTHON" -m pip install -q --ignore-installed --no-index --no-deps --prefix /tmp/site \
        .whl/*.whl
    version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    export PYTHONPATH="/tmp/site/lib/python$version/site-packages:$PWD${PYTHONPATH:+:$PYTHONPATH}"
    export LD_LIBRARY_PATH="/tmp/site/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    set -- --mpiexec /tmp/site/bin/mpiexec
fi
mkdir -p "$OUT"
nproc | sed 's/^/cores: /'
# One small run compiles the kernels into numba's cache, so that no point times it.
"$PYTHON" -m solver.cli bench --scale 200 --steps 2 > "$OUT/warmup.txt"
"$PYTHON" scripts/scaling.py --strong "$STRONG" --ranks $RANKS --steps "$STEPS" "$@" \
    --json "$OUT/strong.json" > "$OUT/strong.md"
"$PYTHON" scripts/scaling.py --weak "$WEAK" --ranks $RANKS --steps "$STEPS" "$@" \
    --json "$OUT/weak.json" > "$OUT/weak.md"
"$PYTHON" scripts/scaling.py --model "$OUT/strong.json" "$OUT/weak.json" > "$OUT/model.md"
cat "$OUT/model.md"

# The solver in a container, with MPICH from the mpich wheel (MPICH ABI).
#
#   docker build --build-arg GIT_COMMIT=$(git describe --always --dirty --abbrev=40 --exclude='*') -t solver .
#   docker run --rm --shm-size=1g --user "$(id -u):$(id -g)" -v "$PWD:/work" solver \
#       mpiexec -n 4 solver run /opt/solver/src/cases/cube_rotation.toml --out out/cube_rotation
#
# --shm-size: MPI ranks in one container talk through /dev/shm, which Docker caps at 64 MB;
# give it about 256 MB per rank, or use --ipc=host. Any uid can run it (--user); the output
# goes to the mounted folder (/work), and a folder this uid cannot write is refused with one
# line. Apptainer/Singularity: see "Clusters and containers" in the README.
#
# Stages: "build" installs the solver and its runtime dependencies (no test extras) into
# /opt/solver/venv; "runtime" copies them onto a clean base and compiles the numba kernels
# into /opt/solver/numba-cache, so that runs compile nothing. The cache holds code for
# NUMBA_CPU_NAME: "generic" runs on any CPU of the architecture; a CPU name (skylake-avx512,
# znver3, ...: llc -mcpu=help) gives faster kernels that run only on that CPU family.
# GIT_COMMIT: the commit the image is built from, which every run's summary.json names (the
# image holds no .git); left out, the summaries say "git_commit": null.
ARG BASE=python:3.11-slim-bookworm

FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY pyproject.toml README.md /opt/solver/src/
COPY solver /opt/solver/src/solver
RUN python3 -m venv /opt/solver/venv \
    && /opt/solver/venv/bin/pip install -e '/opt/solver/src[mpich]'
ARG GIT_COMMIT=""
RUN if [ -n "$GIT_COMMIT" ]; then echo "$GIT_COMMIT" > /opt/solver/src/solver/build_commit.txt; fi

FROM ${BASE} AS runtime
ARG NUMBA_CPU_NAME=generic
ENV PATH=/opt/solver/venv/bin:$PATH \
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
    NUMBA_CACHE_DIR=/opt/solver/numba-cache NUMBA_CPU_NAME=${NUMBA_CPU_NAME} \
    MPLCONFIGDIR=/tmp/matplotlib
COPY --from=build /opt/solver /opt/solver
COPY cases /opt/solver/src/cases
COPY meshes /opt/solver/src/meshes
# Compile every kernel once (CDEM with contact and its energy sums, contact laws; the bench on
# 2 ranks also compiles the ghost-face search between ranks; Jiweishan's trigger breaks
# springs, whose partial renewal of the contact, as a restart, maps kept targets to local
# faces), then let any uid open the cache (numba needs a writable cache folder even to read it).
RUN cd /tmp \
    && mpiexec -n 2 solver bench --elements 512 --steps 3 --heap 100 > /dev/null \
    && solver run /opt/solver/src/cases/column_gravity.toml --out /tmp/warm/column --quiet \
       --set 'stages[0].max_steps=5' \
    && solver run /opt/solver/src/cases/jiweishan.toml --out /tmp/warm/breaking --quiet \
       --set 'stages[0].max_steps=20' --set 'stages[1].duration=0.05' \
       --set 'stages[2].duration=0.01' \
    && solver run /opt/solver/src/cases/tangential_restitution.toml --out /tmp/warm/map --quiet \
    && rm -rf /tmp/warm /tmp/matplotlib \
    && chmod -R a+rwX /opt/solver/numba-cache \
    && useradd --uid 1000 --create-home solver
ENV PYTHONDONTWRITEBYTECODE=1
USER solver
WORKDIR /work
CMD ["solver", "--help"]

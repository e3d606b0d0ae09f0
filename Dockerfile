# solver in a container: MPICH from the mpich wheel, so `mpiexec` works inside as a normal user.
#   docker build -t solver .
#   docker run --rm -v "$PWD/out:/home/solver/app/out" solver mpiexec -n 2 solver run cases/cube_rotation.toml
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    OMP_NUM_THREADS=1 \
    OPENBLAS_NUM_THREADS=1 \
    NUMBA_NUM_THREADS=1 \
    NUMBA_CACHE_DIR=/tmp/numba-cache \
    PATH=/home/solver/venv/bin:$PATH

RUN useradd --create-home --uid 1000 solver
USER solver
WORKDIR /home/solver/app
COPY --chown=solver:solver . .
RUN python -m venv /home/solver/venv && pip install --no-cache-dir -e '.[test]'

CMD ["solver", "--help"]

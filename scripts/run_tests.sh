#!/usr/bin/env bash
# Run the test suite with the real engines it needs. Run scripts/bootstrap.sh --test first.
#
#   bash scripts/run_tests.sh [PYTEST_ARGS...]          every tier (what CI runs): ruff, mypy,
#                                                       then pytest with a Docker daemon (started
#                                                       here if none runs, stopped afterwards) and a
#                                                       Python 3.11 image (python:3.11-slim, or a
#                                                       local stand-in where Docker Hub is unreachable)
#   bash scripts/run_tests.sh --quick [PYTEST_ARGS...]  the inner loop: no Docker, no vf-eval, no Ray,
#                                                       no model server, no slow tests; bubblewrap tests run when bwrap
#                                                       exists and are deselected (with a note) otherwise
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
# One BLAS thread per test process: pytest-xdist already fills the cores, and BLAS
# pools on top of it oversubscribe them (task generation ran 2-3x slower).
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"

quick=""
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
workers=$(python3 -c 'import os; print(max(1, min(4, os.cpu_count() or 1)))')

if [ -n "$quick" ]; then
  markers="not docker and not vf and not slow and not ray and not model and not torch"
  if ! command -v bwrap >/dev/null; then
    echo "run_tests.sh: bubblewrap is not installed: deselecting the sandbox tests (CI runs them)"
    markers="$markers and not sandbox"
  fi
  ruff check .
  mypy
  exec pytest -q -n "$workers" --dist loadgroup -m "$markers" "$@"
fi

started_dockerd=""
cleanup() {
  if [ -n "$started_dockerd" ] && kill -0 "$started_dockerd" 2>/dev/null; then
    kill "$started_dockerd" && wait "$started_dockerd" 2>/dev/null || true
  fi
}
trap cleanup EXIT

if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "run_tests.sh: no Docker daemon reachable and not root: start dockerd first" >&2
    exit 2
  fi
  echo "run_tests.sh: starting dockerd"
  dockerd >/tmp/causal-gym-dockerd.log 2>&1 &
  started_dockerd=$!
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { tail -20 /tmp/causal-gym-dockerd.log >&2; exit 1; }
fi

if [ -z "${CAUSAL_GYM_TEST_IMAGE:-}" ]; then
  if docker image inspect python:3.11-slim >/dev/null 2>&1 || docker pull -q python:3.11-slim >/dev/null 2>&1; then
    export CAUSAL_GYM_TEST_IMAGE=python:3.11-slim
  else
    echo "run_tests.sh: Docker Hub unreachable; building local stand-in images"
    bash scripts/build_standin_images.sh causal-gym/python-standin:3.11
    export CAUSAL_GYM_TEST_IMAGE=causal-gym/python-standin:3.11
  fi
fi
echo "run_tests.sh: container image $CAUSAL_GYM_TEST_IMAGE"

ruff check .
mypy
# CI=1: a test whose engine is missing fails instead of skipping.
# --dist loadgroup keeps each xdist_group (all Ray tests) on one worker, one at a time.
CI="${CI:-1}" pytest -q -n "$workers" --dist loadgroup --durations=15 "$@"

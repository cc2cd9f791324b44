#!/usr/bin/env bash
# Run the test suite with the real engines it needs: ruff, then pytest with a Docker
# daemon (started here if none runs, and stopped again afterwards) and a Python 3.11
# image for container tests (python:3.11-slim, or a local stand-in where Docker Hub
# cannot be reached). Run scripts/bootstrap.sh --test first.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"

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
CI="${CI:-1}" pytest -q "$@"

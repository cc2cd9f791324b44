#!/usr/bin/env bash
# Prepare a fresh Debian/Ubuntu machine (Python >= 3.11) for causal-gym:
# system packages first, then the project virtualenv in .venv.
#   bash scripts/bootstrap.sh          runtime install (bubblewrap from apt; inspect_ai for run logs)
#   bash scripts/bootstrap.sh --test   runtime + test tools and engines (bubblewrap, docker.io,
#                                      debootstrap and chromium from apt) + the local model server
#                                      + the Kubernetes policy checker (checkov, in .venv-policy)
#                                      + the OpenEnv and Harbor virtualenvs (setup_protocols.sh)
#   bash scripts/bootstrap.sh --local-model
#                                      runtime + the local model server (llama.cpp built from
#                                      source, about 10-25 min the first time; SmolLM2-135M weights)
#   bash scripts/bootstrap.sh --demo   runtime + TRL + the local model server, for the SmolLM2
#                                      demo (scripts/sft_warmstart.py, scripts/grpo_demo.py)
set -euo pipefail
cd "$(dirname "$0")/.."

extras="[inspect]"
local_model=""
case "${1:-}" in
  "") ;;
  --test) extras="[test]"; local_model=1 ;;
  --local-model) local_model=1 ;;
  --demo) extras="[demo,inspect]"; local_model=1 ;;
  *) echo "bootstrap.sh: unknown option '$1' (accepted: --test, --local-model, --demo)" >&2; exit 2 ;;
esac

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "bootstrap.sh: python3 >= 3.11 is required (found: $(python3 --version 2>&1 || echo none))" >&2
  exit 2
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
packages=()
python3 -c 'import ensurepip, venv' 2>/dev/null || packages+=(python3-venv)
# bubblewrap is the embedded default sandbox.
command -v bwrap >/dev/null || packages+=(bubblewrap)
if [ "$extras" = "[test]" ]; then
  # The tests also use a real Docker daemon and debootstrap for stand-in images, and
  # Debian's chromium for the log viewer's browser test.
  command -v dockerd >/dev/null || packages+=(docker.io)
  command -v debootstrap >/dev/null || packages+=(debootstrap)
  command -v chromium >/dev/null || packages+=(chromium)
fi
if [ -n "$local_model" ]; then
  # llama.cpp builds from source.
  command -v cmake >/dev/null || packages+=(cmake)
  command -v g++ >/dev/null || packages+=(g++)
fi
if [ "${#packages[@]}" -gt 0 ]; then
  echo "bootstrap.sh: installing ${packages[*]}"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".${extras}"
if [ "$extras" = "[test]" ]; then
  # The Kubernetes policy checker that tests/test_kuberay.py runs on configs/kuberay,
  # pinned (docs/pages/kubernetes.md lists its findings for this version) and in a venv
  # of its own, so its pins never meet the project's.
  checkov_version=3.3.30
  [ -x .venv-policy/bin/python ] || python3 -m venv .venv-policy
  if [ "$(.venv-policy/bin/checkov --version 2>/dev/null)" != "$checkov_version" ]; then
    .venv-policy/bin/python -m pip install -q "checkov==$checkov_version"
  fi
fi
[ -z "$local_model" ] || bash scripts/install_local_model.sh
# The protocol libraries whose pins cannot share .venv (OpenEnv, Harbor), each in a
# virtualenv of its own, for tests/test_openenv.py and tests/test_harbor.py.
[ "$extras" != "[test]" ] || bash scripts/setup_protocols.sh
echo "bootstrap.sh: ready (.venv)"

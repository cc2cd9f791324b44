#!/usr/bin/env bash
# The analyst-toolset run of issue 53, every stage in order, each skipped when its
# output is already there (so the same command resumes after a stop, on this machine
# or a fresh one: checkpoints are in docs/demo/analyst/):
#
#   bash scripts/bootstrap.sh --demo
#   bash scripts/analyst_run.sh            # hours on 2 CPU cores; progress in runs/analyst/*.out
#
# 1. the decision table (analyst_decisions.py, analyst_ladder.py);
# 2. the random-decision warm start and its gate (analyst_sft.py, analyst_gate.py);
# 3. the pre-registration, committed before training (analyst_preregister.py);
# 4. GRPO on a live stream, as registered (analyst_grpo.py), then the placebo;
# 5. the third arm, an SFT of the reference's decisions;
# 6. the held-out evaluation of every arm (analyst_eval.py), and the record:
#    docs/demo/analyst/analyst_run.json and its figure (analyst_record.py).
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/.venv/bin/python
runs=runs/analyst
docs=docs/demo/analyst
mkdir -p "$runs"
stage() { echo "== $(date -u +%H:%M:%S) $*"; }

if [ ! -f "$docs/decisions.json" ]; then
  stage "decision table"
  (cd scripts && "$py" analyst_decisions.py --per-family 70 --out "../$docs/decisions.json")
fi
(cd scripts && "$py" analyst_ladder.py "../$docs/decisions.json" \
  --json "../$docs/decision_values.json" --md "../$docs/decision_values.md" >/dev/null)

if [ ! -f "$docs/sft-random/adapter_model.safetensors" ]; then
  stage "warm start (random decisions)"
  (cd scripts && "$py" analyst_sft.py --out "../$runs" --arm random)
  mkdir -p "$docs/sft-random"
  cp "$runs/sft-random/adapter_config.json" "$runs/sft-random/adapter_model.safetensors" "$docs/sft-random/"
fi
if [ ! -f "$docs/gate.json" ]; then
  stage "warm-start gate"
  (cd scripts && "$py" analyst_gate.py --adapter "../$docs/sft-random" --json "../$docs/gate.json" \
    --work "../$runs/gate")
fi
if ! "$py" -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["pass"] else 1)' \
  "$docs/gate.json"; then
  echo "analyst_run.sh: the warm start failed its gate ($docs/gate.json): no GRPO step runs;" \
    "the next round is registered in $docs/amendments.md first" >&2
  exit 1
fi
if [ ! -f "$docs/preregistration.json" ]; then
  stage "pre-registration (commit it before training)"
  (cd scripts && "$py" analyst_preregister.py --key "../$runs/heldout.key" --out "../$docs/preregistration.json")
  echo "analyst_run.sh: commit $docs/preregistration.json, then run this again" >&2
  exit 0
fi

# the live stream the trainer pulls from (a fresh key, kept by the stream)
if ! .venv/bin/causal-gym-run stream status analyst --state-dir "$runs/stream" >/dev/null 2>&1; then
  stage "stream"
  .venv/bin/causal-gym-run stream start analyst --state-dir "$runs/stream" \
    --families ate,adjustment,null_detect --workers 1
  rm -f "$runs/trainer.token"  # a started stream knows none of an earlier one's tokens
fi
[ -f "$runs/trainer.token" ] || .venv/bin/causal-gym-run stream token mint analyst trainer \
  --to "$runs/trainer.token" --state-dir "$runs/stream"
url=http://127.0.0.1:8600

for run in grpo placebo; do
  if ! grep -q '"finished": true' "$docs/$run/steps.json" 2>/dev/null; then
    resume=()
    [ -f "$docs/$run/checkpoint/trainer_state.json" ] && resume=(--resume)
    stage "$run ${resume[*]:-}"
    # a checkpoint every 10 steps, not the recipe's 25: the run is trained in pieces
    # of a session each (amendments.md, 4)
    (cd scripts && "$py" analyst_grpo.py --out "../$runs" --url "$url" \
      --token-file "../$runs/trainer.token" --run "$run" --save-every 10 "${resume[@]}")
  fi
done

if [ ! -f "$docs/sft-reference/adapter_model.safetensors" ]; then
  stage "third arm (the reference's decisions)"
  (cd scripts && "$py" analyst_sft.py --out "../$runs" --arm reference)
  mkdir -p "$docs/sft-reference"
  cp "$runs/sft-reference/adapter_config.json" "$runs/sft-reference/adapter_model.safetensors" \
    "$docs/sft-reference/"
fi

if [ ! -f "$docs/evaluation.json" ]; then
  stage "held-out evaluation"
  (cd scripts && "$py" analyst_eval.py --key "../$runs/heldout.key" --work "../$runs/eval" \
    --arm "start=../$docs/sft-random" --arm "grpo=../$docs/grpo/checkpoint" \
    --arm "sft-reference=../$docs/sft-reference" --arm "placebo=../$docs/placebo/checkpoint" \
    --json "../$docs/evaluation.json" --inspect "../$docs/inspect")
fi
stage "record"
(cd scripts && "$py" analyst_record.py)
.venv/bin/causal-gym-run stream stop analyst --state-dir "$runs/stream" || true
stage "done"

#!/usr/bin/env bash
# RoPE's scaling at evaluation on the converged LM study's RoPE runs (results/lm_rope_scaling/README.md):
# each finished run of configs/lm_converged/study.yaml with type rope whose best checkpoint is on this machine
# is scored on the test split, as its final evaluation scored it, under position interpolation and NTK-aware
# scaling from its training length (64 tokens):
#
#   relpos eval --run RUN --split test model.position.scaling=M model.position.scaling_length=64   (M = linear, ntk)
#
# one JSON line each, results/lm_rope_scaling/<run name>.<M>.json (written whole or not at all; an existing
# file is kept, so the script resumes). The unscaled figures are the run's own results.json.
# Runs are committed without their checkpoints (scripts/commit_finished_runs.sh): a run trained in another
# checkout has none here and is listed as skipped. configs/keep_checkpoints.list names the study's RoPE runs,
# so their best checkpoints are committed (the weights, a few MB: seeds 4 and 5; seeds 1-3 finished in a
# checkout that is gone) and a clone reruns them.
#
# Usage: scripts/rope_scaling.sh            (RELPOS=<binary>, default build/relpos; ~3-5 min per evaluation)
set -euo pipefail
cd "$(dirname "$0")/.."
relpos=${RELPOS:-build/relpos}
out=results/lm_rope_scaling
[ -x "$relpos" ] || { echo "rope_scaling: $relpos is not built (make build)" >&2; exit 2; }
mkdir -p "$out"
done_any=0
for run in results/lm_converged/runs/position=type-rope_seed=*; do
  name=$(basename "$run")
  if [ ! -f "$run/results.json" ]; then echo "rope_scaling: $name: not finished, skipped"; continue; fi
  if [ ! -f "$run/checkpoints/best/state.json" ]; then
    echo "rope_scaling: $name: no best checkpoint on this machine (trained in another checkout), skipped"
    continue
  fi
  for m in linear ntk; do
    f=$out/$name.$m.json
    [ -f "$f" ] && continue
    echo "rope_scaling: $name: scaling $m ($(date -u +%H:%M:%S))"
    "$relpos" eval --run "$run" --split test "model.position.scaling=$m" model.position.scaling_length=64 \
      > "$f.tmp" 2> "$f.log"
    grep '^{' "$f.tmp" > "$f.line" && [ "$(wc -l < "$f.line")" = 1 ] ||
      { echo "rope_scaling: $name $m: no result line (log: $f.log)" >&2; rm -f "$f.tmp" "$f.line"; exit 1; }
    mv "$f.line" "$f"
    rm -f "$f.tmp" "$f.log"
    done_any=1
  done
done
[ "$done_any" = 1 ] || echo "rope_scaling: nothing new to evaluate"

#!/usr/bin/env bash
# RoPE's scaling at evaluation on the converged LM study's RoPE runs (results/lm_rope_scaling/README.md): each
# finished RoPE run of configs/lm_converged/study.yaml whose best checkpoint is on this machine, scored on the
# test split as its final evaluation scored it, under position interpolation and NTK-aware scaling from its
# training length (64 tokens): `relpos eval --config` (docs/studies.md), one JSON file per run,
# results/lm_rope_scaling/<M>/<run id>.json for M = linear, ntk. It resumes (an existing file is kept) and says
# which runs it skipped (not finished, or no best checkpoint here: configs/keep_checkpoints.list keeps the
# study's RoPE checkpoints; seeds 1-3 finished in a checkout that is gone). The unscaled figures are the runs'
# own results.json.
#
# Usage: scripts/rope_scaling.sh            (RELPOS=<binary>, default build/relpos; ~3-5 min per evaluation)
set -euo pipefail
cd "$(dirname "$0")/.."
relpos=${RELPOS:-build/relpos}
[ -x "$relpos" ] || { echo "rope_scaling: $relpos is not built (make build)" >&2; exit 2; }
for m in linear ntk; do
  "$relpos" eval --config configs/lm_converged/study.yaml --runs 'position=type-rope_seed=*' --split test \
    --out "results/lm_rope_scaling/$m" "model.position.scaling=$m" model.position.scaling_length=64
done

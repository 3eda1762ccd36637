#!/usr/bin/env bash
# Everything results/lm_converged/README.md's final table reads, rendered from the finished runs; nothing trains
# (the campaign trains them: configs/campaign.list). In order:
#   1. configs/lm_converged/final.yaml links the finished runs of study.yaml and more_encodings.yaml (it trains
#      nothing of its own) and `relpos report` renders results/lm_converged_final/report.{md,json,csv} and plots;
#   2. the randomized rows scored with positions drawn as in training (`randomized_eval: sample_by_length`,
#      results/lm_converged/randomized_eval/<run id>.json; an existing file is kept, so only new runs cost,
#      ~5 CPU-minutes each; it needs their best checkpoints, which configs/keep_checkpoints.list keeps);
#   3. the learned encodings' parameters of every finished run (results/lm_converged/learned_positions.json);
#   4. the pages that cite them, checked (scripts/check_claims.py;
#      `scripts/check_claims.py --refresh results/lm_converged/README.md README.md` rewrites the
#      figures that moved and lists them; a verdict the new runs overturn fails until its words change).
# Evaluation runs with the kernels relpos chooses for the CPU, as the runs trained (OPENBLAS_CORETYPE unset).
#
# Usage: scripts/lm_converged_final.sh      (RELPOS=<binary>, default build/relpos)
set -euo pipefail
cd "$(dirname "$0")/.."
relpos=${RELPOS:-build/relpos}
[ -x "$relpos" ] || { echo "lm_converged_final: $relpos is not built (make build)" >&2; exit 2; }
unset OPENBLAS_CORETYPE

"$relpos" run configs/lm_converged/final.yaml --start-before @1
"$relpos" report results/lm_converged_final
"$relpos" eval --config configs/lm_converged/more_encodings.yaml --runs '*randomized*' --split test \
  --out results/lm_converged/randomized_eval model.position.randomized_eval=sample_by_length
finished=()
for d in results/lm_converged_final/runs/*; do [ -e "$d/results.json" ] && finished+=("$d"); done
scripts/learned_positions.py --out results/lm_converged/learned_positions.json "${finished[@]}"
scripts/check_claims.py results/lm_converged/README.md README.md

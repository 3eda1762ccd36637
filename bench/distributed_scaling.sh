#!/usr/bin/env bash
# Data-parallel scaling (docs/distributed.md): one run of the Shaw model of configs/quickstart_multi30k.yaml (Multi30k de->en,
# 2+2 layers, d = 128, 2,048 tokens per update) trained for STEPS updates at each rank count, 1 thread per
# rank, with the MPI build. Prints tokens/s (updates 6..STEPS, past start-up), the efficiency against one
# rank, and the time the gradient sums took (on the wire or waiting for the slowest rank). The evaluation
# is the validation loss only (no decoding).
#
#   bench/distributed_scaling.sh [STEPS] [RANKS...]      e.g. bench/distributed_scaling.sh 40 1 2
#
# Needs `make mpi` (build-mpi/relpos) and data/multi30k. Everything goes to a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build-mpi/relpos}
STEPS=${1:-40}
shift || true
RANKS=("$@")
[ ${#RANKS[@]} -gt 0 ] || RANKS=(1 2)
OUT=$(mktemp -d /tmp/relpos-scaling.XXXXXX)
# Root in containers; a core count below the rank count is allowed (and reported as what it is).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
base=""
for n in "${RANKS[@]}"; do
  mpirun --oversubscribe --bind-to none -np "$n" "$BIN" run configs/quickstart_multi30k.yaml name="scaling_np$n" \
    results_dir="$OUT" threads=1 'sweep.grid.model.position=[{type: shaw, k: 16}]' train.max_steps="$STEPS" \
    'eval.metrics=[loss]' 'report.metrics=[val.loss]' --quiet > "$OUT/np$n.log" 2>&1
  run=$(ls -d "$OUT/scaling_np$n/runs/"*)
  tps=$(python3 - "$run/metrics.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"train_loss"' in l]
a, b = rows[4], rows[-1]  # from the end of update 5 to the last
print(f"{sum(r['tokens'] for r in rows[5:]) / (b['elapsed'] - a['elapsed']):.0f}")
PY
)
  [ -n "$base" ] || base=$tps
  sums=$(grep -o 'the gradient sums.*' "$OUT/np$n.log" || echo "no gradient sums (one rank)")
  params=$(grep -o 'model: [0-9]* parameters' "$OUT/np$n.log" | head -1)
  echo "ranks $n: $tps tokens/s, efficiency $(python3 -c "print(f'{$tps / ($n * $base):.2f}')"); $params; $sums"
done
echo "logs and runs: $OUT"

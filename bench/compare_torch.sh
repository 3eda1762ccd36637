#!/usr/bin/env bash
# Side-by-side yardstick: the same training-step shapes in PyTorch (Debian's python3-torch) and relpos,
# in one session, at the same thread count. PyTorch is only a yardstick: install it yourself
# (apt-get install python3-torch python3-numpy); relpos never depends on it.
#   bench/compare_torch.sh [path/to/torch_ref.py] [threads...]
# torch_ref.py is the reference script kept next to the project (../shared/bench/torch_ref.py).
set -euo pipefail
cd "$(dirname "$0")/.."
REF=${1:-../shared/bench/torch_ref.py}
shift || true
THREADS=${*:-1 2}
[ -f "$REF" ] || { echo "compare_torch.sh: $REF not found (pass the path to torch_ref.py)" >&2; exit 2; }
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "compare_torch.sh: /usr/bin/python3 has no torch (apt-get install python3-torch)" >&2; exit 2; }
[ -x build/relpos_bench ] || make build
# OpenBLAS misdetects some virtual CPUs and falls back to its SSE3 kernels; relpos corrects this itself
# (blas::tune_process); give PyTorch the same kernels so that the comparison is fair.
CORE=$(grep -q avx512f /proc/cpuinfo && echo SkylakeX || echo Haswell)
declare -A FLAGS=(
  [tiny]="--d-model 64 --heads 4 --d-ff 256 --enc-layers 2 --dec-layers 2 --vocab 1000 --batch 32 --src-len 20 --tgt-len 20"
  [small]="--d-model 256 --heads 8 --d-ff 1024 --enc-layers 3 --dec-layers 3 --vocab 8000 --batch 64 --src-len 30 --tgt-len 30"
  [base-short]="--d-model 512 --heads 8 --d-ff 2048 --enc-layers 6 --dec-layers 6 --vocab 8000 --batch 16 --src-len 32 --tgt-len 32"
)
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; date $(date -u +%F)"
for t in $THREADS; do
  for shape in tiny small base-short; do
    for pe in abs rel; do
      steps=10; [ "$shape" = tiny ] && steps=30
      torch=$(OPENBLAS_CORETYPE=$CORE /usr/bin/python3 "$REF" ${FLAGS[$shape]} --pe $pe --k 16 --threads $t --omp-threads 1 \
              --steps $steps --warmup 3 --quiet 2>/dev/null | grep '^RESULT' || true)
      tt=$(sed -n 's/.*tgt_tok_per_s=\([0-9.e+]*\).*/\1/p' <<<"$torch")
      tm=$(sed -n 's/.*peak_rss_mib=\([0-9.]*\).*/\1/p' <<<"$torch")
      ours=$(build/relpos_bench --threads $t --only $shape --steps $steps --warmup 3 --no-attention | awk -v pe=$pe '$2==pe {print $4, $8}')
      ot=${ours% *}; om=${ours#* }
      ratio=$(awk -v a="$ot" -v b="$tt" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
      printf "threads %s %-10s %s  relpos %8s tok/s %6s MiB | torch %8s tok/s %6s MiB | speed ratio %s\n" \
             "$t" "$shape" "$pe" "$ot" "$om" "$tt" "$tm" "$ratio"
    done
  done
done

#!/usr/bin/env bash
# Side-by-side yardstick: the same training-step shapes in PyTorch (bench/torch_ref.py, Debian's
# python3-torch) and relpos (build/relpos_bench), in one session, at the same thread count, with the same
# OpenBLAS kernels. PyTorch is only a yardstick: install it yourself (apt-get install python3-torch
# python3-numpy); relpos never depends on it.
#
#   bench/compare_torch.sh                       # bench/torch_ref.py, 1 and 2 threads, every shape
#   SHAPES="ruoss kazemnejad lm" bench/compare_torch.sh 1   # the shapes the studies train, 1 thread
#   bench/compare_torch.sh 1                     # 1 thread only
#   bench/compare_torch.sh path/to/other_ref.py 1 2
#   SHAPES="tiny tables" STEPS=3 WARMUP=1 bench/compare_torch.sh 1   # a quick check (timings meaningless)
#   RELPOS_BENCH=build-dev/relpos_bench bench/compare_torch.sh   # another build of relpos_bench
#   ROUNDS=8 JSON=bench/results/x.json bench/compare_torch.sh   # eight alternating rounds, medians, and a JSON
#                                                # record of every round that READMEs cite (docs/claims.md)
#
# ROUNDS (default 1): every (threads, shape, encoding) is measured ROUNDS times, relpos then PyTorch,
# round after round (a drift of the machine's speed hits both sides alike); a row of the table is the
# median over the rounds of each side's median step.
# Threads: relpos runs its own pool with N threads (OpenBLAS single-threaded); PyTorch runs OpenBLAS at
# N threads and ATen/OpenMP at 1 (--omp-threads 1: 2 OpenMP + 2 OpenBLAS spinning pools on 2 cores
# was about 2x slower). Timed steps: 10 per shape (30 for tiny) after 3 untimed warm-up steps; medians.
set -euo pipefail
cd "$(dirname "$0")/.."
REF=bench/torch_ref.py
if [ $# -gt 0 ] && { [[ "$1" == *.py ]] || [ -f "$1" ]; }; then REF=$1; shift; fi
THREADS=${*:-1 2}
SHAPES=${SHAPES:-tiny small base-short tables ruoss kazemnejad lm}
WARMUP=${WARMUP:-3}
ROUNDS=${ROUNDS:-1}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "compare_torch.sh: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
if [ -n "${JSON:-}" ]; then
  [ -d "$(dirname "$JSON")" ] || { echo "compare_torch.sh: JSON=$JSON: no directory $(dirname "$JSON")" >&2; exit 2; }
fi
for t in $THREADS; do
  [[ "$t" =~ ^[1-9][0-9]*$ ]] || { echo "compare_torch.sh: thread count '$t' is not a positive integer" >&2; exit 2; }
done
PY=/usr/bin/python3
[ -f "$REF" ] || { echo "compare_torch.sh: $REF not found" >&2; exit 2; }
# (a reference of one's own that needs no torch, e.g. a stand-in in a test, runs without it)
if [ "$REF" = bench/torch_ref.py ]; then
  $PY -c "import torch" 2>/dev/null || { echo "compare_torch.sh: $PY has no torch (apt-get install python3-torch python3-numpy)" >&2; exit 2; }
fi
BENCH=${RELPOS_BENCH:-build/relpos_bench}
if [ -z "${RELPOS_BENCH:-}" ]; then [ -x "$BENCH" ] || make build; fi
[ -x "$BENCH" ] || { echo "compare_torch.sh: $BENCH is not an executable" >&2; exit 2; }

# The shapes of relpos_bench (kShapes in bench/bench_main.cpp), flag for flag.
declare -A FLAGS=(
  [tiny]="--d-model 64 --heads 4 --d-ff 256 --enc-layers 2 --dec-layers 2 --vocab 1000 --batch 32 --src-len 20 --tgt-len 20 --tie none"
  [small]="--d-model 256 --heads 8 --d-ff 1024 --enc-layers 3 --dec-layers 3 --vocab 8000 --batch 64 --src-len 30 --tgt-len 30 --tie none"
  [base-short]="--d-model 512 --heads 8 --d-ff 2048 --enc-layers 6 --dec-layers 6 --vocab 8000 --batch 16 --src-len 32 --tgt-len 32 --tie none"
  [tables]="--d-model 128 --heads 4 --d-ff 512 --enc-layers 2 --dec-layers 2 --vocab 4000 --batch 64 --src-len 32 --tgt-len 32 --tie all"
  # the shapes the studies train (kStudyShapes): configs/ruoss, configs/kazemnejad, configs/lm_converged
  [ruoss]="--family encoder_only --d-model 64 --heads 8 --d-ff 256 --dec-layers 5 --vocab 8 --batch 64 --src-len 64 --tgt-len 64 --dropout 0.1 --attn-dropout 0 --clip-norm 0"
  [kazemnejad]="--family decoder_only --d-model 128 --heads 4 --d-ff 512 --dec-layers 4 --vocab 106 --batch 64 --src-len 24 --tgt-len 24 --dropout 0.1 --attn-dropout 0.1 --clip-norm 1"
  [lm]="--family decoder_only --d-model 128 --heads 4 --d-ff 512 --dec-layers 2 --vocab 4000 --batch 64 --src-len 64 --tgt-len 64 --dropout 0.1 --attn-dropout 0.1 --clip-norm 0"
)
# The encodings measured per shape (relpos_bench's pe column): its campaigns' encodings for the study shapes.
declare -A PES=(
  [tiny]="abs rel" [small]="abs rel" [base-short]="abs rel" [tables]="abs rel"
  [ruoss]="rope alibi txl rand-rope" [kazemnejad]="rope alibi t5 none" [lm]="rope alibi"
)
for shape in $SHAPES; do
  [ -n "${FLAGS[$shape]+x}" ] || { echo "compare_torch.sh: unknown shape '$shape' (tiny, small, base-short, tables, ruoss, kazemnejad, lm)" >&2; exit 2; }
done

# The machine, and the OpenBLAS kernels. OpenBLAS misdetects some (virtual) CPUs and falls back to an
# older kernel family (SSE3 Prescott; Core2 and Nehalem are as slow). relpos corrects that itself
# (blas::better_core_type in autodiff/blas.cpp): only when OpenBLAS's family is of an older
# instruction-set tier than the CPU runs, and only to kernels this CPU can run (SkylakeX needs AVX-512
# F/BW/DQ/VL, Cooperlake also AVX512_BF16, Haswell AVX2 and FMA). The same rule here, so that PyTorch
# gets the same kernels; a core type the caller set in OPENBLAS_CORETYPE is left alone (relpos leaves it
# alone too), with a note when it is older than what the CPU runs.
FLAGS_LINE=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { grep -qw "$1" <<<"$FLAGS_LINE"; }
yn() { has "$1" && echo yes || echo no; }
MODEL=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "machine: ${MODEL:-unknown CPU}, $(nproc) cores, avx512f $(yn avx512f), avx2 $(yn avx2), fma $(yn fma); $(uname -sr); date $(date -u +%F)"
CORENAME='import ctypes
l = ctypes.CDLL("libopenblas.so.0"); l.openblas_get_corename.restype = ctypes.c_char_p
print(l.openblas_get_corename().decode())'
tier() {  # the instruction-set tier of a kernel family, as core_tier in autodiff/blas.cpp; -1 unknown
  case "${1,,}" in
    prescott|core2|penryn|dunnington|nehalem|atom|opteron|opteron_sse3|barcelona|bobcat|nano) echo 0 ;;
    sandybridge|bulldozer|piledriver|steamroller) echo 1 ;;
    haswell|zen|excavator) echo 2 ;;
    skylakex|cooperlake|sapphirerapids) echo 3 ;;
    *) echo -1 ;;
  esac
}
better() {  # the family relpos would switch to from $1 on this CPU, or nothing
  local t; t=$(tier "$1")
  [ "$t" -ge 0 ] || return 0
  if has avx2 && has fma && has avx512f && has avx512bw && has avx512dq && has avx512vl && [ "$t" -lt 3 ]; then
    if has avx512_bf16; then echo Cooperlake; else echo SkylakeX; fi
  elif has avx2 && has fma && [ "$t" -lt 2 ]; then
    echo Haswell
  fi
}
if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
  export OPENBLAS_CORETYPE
  echo "OpenBLAS: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE set by the caller, used by both sides"
  b=$(better "$OPENBLAS_CORETYPE")
  [ -z "$b" ] || echo "OpenBLAS: note: this CPU runs newer kernels ($b); unset OPENBLAS_CORETYPE to measure with them"
else
  detected=$(env -u OPENBLAS_CORETYPE $PY -c "$CORENAME" 2>/dev/null || echo unknown)
  want=$(better "$detected")
  if [ -n "$want" ]; then
    export OPENBLAS_CORETYPE=$want
    echo "OpenBLAS: detects $detected (older kernels than this CPU runs); both sides run with OPENBLAS_CORETYPE=$want"
  else
    echo "OpenBLAS: detects $detected; both sides use it (OPENBLAS_CORETYPE not set)"
  fi
fi
TORCH_VERSION=$($PY -c 'import torch; print(torch.__version__)' 2>/dev/null || echo none)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- 2>/dev/null || COMMIT="$COMMIT+dirty"
echo "torch: $TORCH_VERSION, reference $REF; relpos: commit $COMMIT"
echo "warm-up $WARMUP steps; timed steps ${STEPS:-10} (tiny ${STEPS:-30}); medians; threads: relpos pool N, PyTorch OpenBLAS N + ATen 1; rounds $ROUNDS"
echo

err=$(mktemp)
rounds=$(mktemp)  # one line per (round, threads, shape, pe): the record JSON= writes
trap 'rm -f "$err" "$rounds"' EXIT
for ((round = 1; round <= ROUNDS; round++)); do
  for t in $THREADS; do
    for shape in $SHAPES; do
      steps=${STEPS:-10}; [ "$shape" = tiny ] && steps=${STEPS:-30}
      # relpos_bench runs every encoding of one shape: columns shape pe params tok/s ms GFLOP/s of-peak MiB loss0
      ours=$("$BENCH" --threads "$t" --only "$shape" --steps "$steps" --warmup "$WARMUP" --no-attention 2>"$err" || true)
      for pe in ${PES[$shape]}; do
        read -r ot op om ol < <(awk -v s="$shape" -v pe="$pe" '$1==s && $2==pe && NF>=9 {print $4, $7, $8, $9}' <<<"$ours") || true
        if [ -z "${ot:-}" ]; then echo "relpos_bench failed ($shape $pe): $(tail -1 "$err")" >&2; ot=0; op=-; om=-; ol=-; fi
        # shellcheck disable=SC2086
        torch=$($PY "$REF" ${FLAGS[$shape]} --pe "$pe" --k 16 --threads "$t" --omp-threads 1 \
                --steps "$steps" --warmup "$WARMUP" --quiet 2>"$err" | grep '^RESULT' || true)
        [ -n "$torch" ] || echo "$REF failed ($shape $pe): $(tail -1 "$err")" >&2
        field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$torch"; }
        tt=$(field tgt_tok_per_s); tm=$(field peak_rss_mib); tl=$(field loss0)
        ratio=$(awk -v a="$ot" -v b="${tt:-0}" 'BEGIN { if (b > 0 && a > 0) printf "%.2fx", a / b; else print "n/a" }')
        printf "%sthreads %s %-10s %s  relpos %8.0f tok/s %6s MiB | torch %8.0f tok/s %6s MiB | speed ratio %-6s | loss0 %s / %s\n" \
               "$([ "$ROUNDS" -gt 1 ] && echo "round $round: ")" "$t" "$shape" "$pe" "$ot" "$om" "${tt:-0}" "${tm:--}" "$ratio" "$ol" "${tl:--}"
        echo "$round $t $shape $pe $ot ${op%\%} $om $ol ${tt:-0} ${tm:--} ${tl:--}" >> "$rounds"
        unset ot op om ol
      done
    done
  done
done

# Medians over the rounds, and the JSON record (bench/compare_torch_record.py): the machine, the versions,
# every round, the medians and the ranges a README cites; this session's facts go to it as one JSON argument
facts=$($PY -c 'import json, sys; print(json.dumps(dict(zip(sys.argv[1::2], sys.argv[2::2]))))' \
  command "ROUNDS=$ROUNDS SHAPES='$SHAPES' JSON=${JSON:-} bench/compare_torch.sh $THREADS" \
  date "$(date -u +%FT%TZ)" machine "${MODEL:-unknown CPU}" cores "$(nproc)" \
  avx512f "$(yn avx512f)" avx512_bf16 "$(yn avx512_bf16)" avx2 "$(yn avx2)" fma "$(yn fma)" \
  kernel "$(uname -sr)" openblas_coretype "${OPENBLAS_CORETYPE:-${detected:-}}" torch "$TORCH_VERSION" \
  relpos_commit "$COMMIT" reference "$REF" warmup "$WARMUP" steps "${STEPS:-10 (tiny ${STEPS:-30})}")
$PY bench/compare_torch_record.py "$rounds" "${JSON:-}" "$ROUNDS" "$facts"

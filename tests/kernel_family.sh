#!/usr/bin/env bash
# A small model's training does not depend on OpenBLAS's kernel family: every product of a model whose sizes are
# at most 512 (d_model, d_ff, the vocabulary; the study shapes) runs in relpos's register kernel, whose fused
# multiply-adds round the same whatever the vector width (autodiff/small_gemm.hpp, thin_gemm_fits). The same
# config and seed trained under OPENBLAS_CORETYPE=Haswell and =Prescott (SSE3; any x86-64 runs both) must give
# the same losses, gradient norms and metrics, bit for bit. Fails when a product of such a model goes back to
# OpenBLAS, or when the kernel's rounding starts to depend on the SIMD width.
#   tests/kernel_family.sh build/relpos
set -euo pipefail
relpos=${1:?usage: $0 RELPOS}
[ "$(uname -m)" = x86_64 ] || { echo "kernel_family: not x86-64, nothing to compare"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/config.yaml" <<EOF2
name: kernel_family
seed: 3
threads: 1
run_store: $tmp/runs
results_dir: $tmp/results
data:
  task: reverse
  valid_split: val
  test_splits: [test]
  synthetic: {n_symbols: 10, train_size: 400, valid_size: 40, test_size: 40, train_len: [2, 8], test_len: [9, 12]}
model: {family: decoder_only, d_model: 64, heads: 4, d_ff: 256, decoder_layers: 2, dropout: 0.1, attention_dropout: 0.1,
        norm: pre, position: {type: rope}}
train: {max_steps: 30, batch_tokens: 512, lr: 0.5, warmup: 10, eval_every: 15, checkpoint_every: 1000}
eval: {batch_tokens: 2048, splits: [val, test], metrics: [accuracy, token_accuracy, loss]}
EOF2
for family in Haswell Prescott; do
  OPENBLAS_CORETYPE=$family "$relpos" run "$tmp/config.yaml" -q > "$tmp/$family.out" 2>&1 ||
    { cat "$tmp/$family.out"; echo "FAIL: training with OPENBLAS_CORETYPE=$family failed"; exit 1; }
  run=$(ls -d "$tmp"/runs/*/)
  grep -q "OpenBLAS kernels $family" "$run/log.txt" || { echo "FAIL: the run did not record kernels $family"; exit 1; }
  sed 's/"elapsed": [0-9.e+-]*//' "$run/metrics.jsonl" > "$tmp/$family.metrics"
  python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["metrics"], sort_keys=True))' \
    "$run/results.json" > "$tmp/$family.results"
  rm -rf "$tmp/runs" "$tmp/results"
done
[ "$(wc -l < "$tmp/Haswell.metrics")" -ge 3 ] || { echo "FAIL: too few metrics lines"; cat "$tmp/Haswell.metrics"; exit 1; }
if ! diff "$tmp/Haswell.metrics" "$tmp/Prescott.metrics" || ! diff "$tmp/Haswell.results" "$tmp/Prescott.results"; then
  echo "FAIL: the same config and seed trained differently under Haswell and Prescott kernels (above)"
  exit 1
fi
echo "kernel_family: Haswell and Prescott kernels gave the same $(wc -l < "$tmp/Haswell.metrics") metrics lines and final metrics"

#!/usr/bin/env bash
# The learning curves of the randomized-position diagnosis (results/ruoss_randomized_diagnosis/curves.json and
# .png) from its finished runs and two committed reference runs (RoPE at real positions and randomized RoPE at
# range 1,024, seed 1, from configs/ruoss/lr_sweep.yaml and long.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
D=results/ruoss_randomized_diagnosis/runs
R=results/ruoss/runs
args=("RoPE, real positions=$R/178ab08d874bae66" "randomized RoPE, range 1,024=$R/075ce63d4526be43")
for spec in "randomized RoPE, range 512=position=type-rope-randomized-512-randomized_eval-sample_by_length_lr=0.25_d_model=64_d_ff=256_seed=1" \
            "randomized RoPE, range 1,024, d_model 128=position=type-rope-randomized-1024-randomized_eval-sample_by_length_lr=0.25_d_model=128_d_ff=512_seed=1" \
            "randomized ALiBi, range 1,024=position=type-alibi-randomized-1024-randomized_eval-sample_by_length_lr=0.25_d_model=64_d_ff=256_seed=1" \
            "randomized Transformer-XL, range 1,024=position=type-txl-randomized-1024-randomized_eval-sample_by_length_lr=0.5_d_model=64_d_ff=256_seed=1" \
            "randomized sinusoidal, range 1,024=position=type-sinusoidal-randomized-1024-randomized_eval-sample_by_length_lr=0.25_d_model=64_d_ff=256_seed=1"; do
  label=${spec%%=*}; run=${spec#*=}
  [ -f "$D/$run/results.json" ] && args+=("$label=$D/$run")
done
python3 scripts/learning_curves.py --metric val.token_accuracy --threshold 99 --at 2500,5000,10000 \
  --out results/ruoss_randomized_diagnosis/curves "${args[@]}"

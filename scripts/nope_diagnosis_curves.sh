#!/usr/bin/env bash
# The learning curves of the NoPE diagnosis under Kazemnejad et al.'s protocol
# (results/kazemnejad_nope_diagnosis/curves.json and .png) from its finished runs and two committed reference
# runs at 4 layers, d_model 128, seed 1: NoPE without the plateau stop (configs/kazemnejad/nope_no_plateau_reverse.yaml)
# and RoPE (results/kazemnejad_table_copy_reverse).
set -euo pipefail
cd "$(dirname "$0")/.."
D=results/kazemnejad_nope_diagnosis/runs
T=results/kazemnejad_table_copy_reverse/runs
args=("NoPE, 4 layers, d_model 128=results/kazemnejad/runs/505a38852c22632b"
      "RoPE, 4 layers, d_model 128=$T/task=reverse_position=type-rope_lr=0.25_max_steps=40000_seed=1")
for spec in "NoPE, 4 layers, d_model 256=d_model=256_d_ff=1024_decoder_layers=4_seed=1" \
            "NoPE, 8 layers, d_model 128=d_model=128_d_ff=512_decoder_layers=8_seed=1"; do
  label=${spec%%=*}; run=${spec#*=}
  [ -f "$D/$run/results.json" ] && args+=("$label=$D/$run")
done
python3 scripts/learning_curves.py --metric val.accuracy --threshold 99 --at 2500,5000,10000 \
  --out results/kazemnejad_nope_diagnosis/curves "${args[@]}"

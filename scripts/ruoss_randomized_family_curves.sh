#!/usr/bin/env bash
# The learning curves of Ruoss et al.'s family's randomized cells (results/ruoss_randomized_family/curves.json and
# .png): per-token validation accuracy against update for every finished run of each randomized cell, one colour a
# cell, the gate as a dashed line. The page lists from it the runs that stopped at the cap below the gate. The
# campaign's loop runs it again after each finished run of the family (scripts/campaign.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
D=results/ruoss_randomized_family/runs
gate=$(python3 -c "import yaml; print(yaml.safe_load(open('configs/ruoss/randomized_family.yaml'))['train']['stop']['target'])")
args=()
for spec in "randomized RoPE=position=type-rope-randomized-1024-randomized_eval-sample_by_length_lr=0.25" \
            "randomized ALiBi=position=type-alibi-randomized-1024-randomized_eval-sample_by_length-randomized_form-distances_lr=0.25" \
            "randomized Transformer-XL=position=type-txl-randomized-1024-randomized_eval-sample_by_length-randomized_form-distances_lr=0.5" \
            "randomized sinusoidal=position=type-sinusoidal-randomized-1024-randomized_eval-sample_by_length_lr=0.25"; do
  label=${spec%%=*}; cell=${spec#*=}
  for seed in 1 2 3 4 5; do
    [ -f "$D/${cell}_seed=$seed/results.json" ] && args+=("$label · seed $seed=$D/${cell}_seed=$seed")
  done
done
[ ${#args[@]} -gt 0 ] || { echo "ruoss_randomized_family_curves: no finished randomized run under $D" >&2; exit 1; }
python3 scripts/learning_curves.py --metric val.token_accuracy --threshold "$gate" --at 10000,20000,40000 \
  --color-by "·" --ylabel "per-token validation accuracy (%)" --out results/ruoss_randomized_family/curves "${args[@]}"

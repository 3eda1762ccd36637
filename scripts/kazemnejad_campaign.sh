#!/usr/bin/env bash
# The length-generalization study under Kazemnejad et al.'s protocol for their copy/reverse split
# (configs/kazemnejad/lr_sweep_copy_reverse.yaml, then study_copy_reverse.yaml for the cells competent within
# 10,000 updates, then long_copy_reverse.yaml: the others to their 40,000 updates), one task at a time:
# scripts/two_stage_campaign.sh says how. Reverse first (the budget's cut: copy when it allows). At the end,
# the comparison table (configs/kazemnejad/table_copy_reverse.yaml: each encoding at its chosen rate and cap,
# the family of comparisons) links the finished runs of its cells (it trains nothing) and is reported
# (results/kazemnejad_table_copy_reverse).
#   TASKS=reverse scripts/kazemnejad_campaign.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/two_stage_campaign.sh configs/kazemnejad/lr_sweep_copy_reverse.yaml configs/kazemnejad/study_copy_reverse.yaml configs/kazemnejad/long_copy_reverse.yaml
bin=${RELPOS:-build/relpos}
"$bin" run configs/kazemnejad/table_copy_reverse.yaml --start-before @1 >/dev/null
"$bin" report results/kazemnejad_table_copy_reverse

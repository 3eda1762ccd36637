#!/usr/bin/env bash
# The length-generalization study under Kazemnejad et al.'s protocol for their copy/reverse split
# (configs/kazemnejad/lr_sweep_copy_reverse.yaml, then long_copy_reverse.yaml: every cell's seeds at its chosen
# rate with up to their 40,000 updates, stopped at the competence gate; study_copy_reverse.yaml is the sweep's
# 10,000-update cap, whose points find the runs that stopped within it), one task at a time:
# scripts/two_stage_campaign.sh says how. Reverse first (the budget's cut: copy when it allows). At the end,
# the comparison table (configs/kazemnejad/table_copy_reverse.yaml: each encoding at its chosen rate, the family
# of comparisons) links the finished runs of its cells (it trains nothing) and is reported
# (results/kazemnejad_table_copy_reverse), and so is the exploratory pairs table (table_copy_reverse_pairs.yaml).
#   TASKS=reverse scripts/kazemnejad_campaign.sh
exec "$(dirname "$0")/two_stage_campaign.sh" configs/kazemnejad/lr_sweep_copy_reverse.yaml configs/kazemnejad/study_copy_reverse.yaml \
  configs/kazemnejad/long_copy_reverse.yaml configs/kazemnejad/table_copy_reverse.yaml \
  configs/kazemnejad/table_copy_reverse_pairs.yaml

#!/usr/bin/env bash
# The length-generalization study under Kazemnejad et al.'s protocol for their copy/reverse split
# (configs/kazemnejad/lr_sweep_copy_reverse.yaml, then study_copy_reverse.yaml for the cells competent within
# 10,000 updates, then long_copy_reverse.yaml: the others to their 40,000 updates), one task at a time:
# scripts/two_stage_campaign.sh says how. Reverse first (the budget's cut: copy when it allows).
#   TASKS=reverse scripts/kazemnejad_campaign.sh
exec "$(dirname "$0")/two_stage_campaign.sh" configs/kazemnejad/lr_sweep_copy_reverse.yaml configs/kazemnejad/study_copy_reverse.yaml configs/kazemnejad/long_copy_reverse.yaml

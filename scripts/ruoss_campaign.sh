#!/usr/bin/env bash
# The length-generalization study under Ruoss et al.'s protocol (configs/ruoss/): the learning-rate sweep
# (configs/ruoss/lr_sweep.yaml, seed 1), then seeds 2-5 of each competent cell at its chosen rate
# (configs/ruoss/study.yaml), one task at a time: scripts/two_stage_campaign.sh says how.
#   scripts/ruoss_campaign.sh                                        # until done (many hours)
#   TASKS=reverse FINISH_BY=@$(date -d '16:20' +%s) scripts/ruoss_campaign.sh   # start only runs that can finish by then
exec "$(dirname "$0")/two_stage_campaign.sh" configs/ruoss/lr_sweep.yaml configs/ruoss/study.yaml

#!/usr/bin/env bash
# The length-generalization study under Ruoss et al.'s protocol (configs/ruoss/): the learning-rate sweep
# (configs/ruoss/lr_sweep.yaml, seed 1, 10,000 updates), then seeds 2-5 of each competent cell at its chosen
# rate (configs/ruoss/study.yaml), then the cells no rate made competent at 40,000 updates
# (configs/ruoss/long.yaml: seed 1, continuing its capped sweep run, and seeds 2-5 if that made it competent),
# one task at a time: scripts/two_stage_campaign.sh says how. At the end, the comparison table
# (configs/ruoss/table.yaml: each cell at its chosen rate and cap, the family of comparisons) links the
# finished runs of its cells (it trains nothing) and is reported (results/ruoss_table), and so is the post-hoc
# pairs table (configs/ruoss/table_pairs.yaml).
#   scripts/ruoss_campaign.sh                                        # until done (many hours)
#   TASKS=reverse FINISH_BY=@$(date -d '16:20' +%s) scripts/ruoss_campaign.sh   # start only runs that can finish by then
#   POSITIONS='[{type: txl}, {type: sinusoidal}]' TASKS=reverse scripts/ruoss_campaign.sh  # stage 1 for these only
exec "$(dirname "$0")/two_stage_campaign.sh" configs/ruoss/lr_sweep.yaml configs/ruoss/study.yaml configs/ruoss/long.yaml \
  configs/ruoss/table.yaml configs/ruoss/table_pairs.yaml

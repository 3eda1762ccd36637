#!/usr/bin/env bash
# A two-stage study, resumable, one task at a time (TASKS, default every task of the sweep, in its order),
# so that a task's study is complete before the next task's sweep starts:
#   1. SWEEP_CONFIG restricted to the task: every encoding at each learning rate of the sweep, seed 1;
#   2. scripts/choose_lr.py picks each cell's rate on in-distribution validation (written to
#      <sweep results>/lr_choice.json) and the other seeds train at that rate, cell by cell, as soon as the
#      cell's sweep is complete: under LONG_CONFIG when given (its larger cap: a seed that reaches the target
#      within the sweep's cap stops there all the same, and is the same run under either cap, so STUDY_CONFIG's
#      points find it: experiments/run/continuation.hpp, find_equivalent; a seed that does not gets the longer
#      budget, as seed 1 would have), else under STUDY_CONFIG. A cell with no competent rate (seed 1 did not
#      reach the target at any rate) gets no more seeds here: its models say nothing about extrapolation.
#   3. (with LONG_CONFIG, the same study under a larger train.max_steps) each cell with no competent rate
#      trains seed 1 at its chosen rate to the larger cap (continuing the capped sweep run where it kept its
#      optimiser state: experiments/run/continuation.hpp), JOBS cells side by side, and then seeds 2-5 of
#      each cell that this made competent.
#   4. (with TABLE_CONFIGs, the comparison tables: sweep.cells at the chosen rates and caps) their finished runs
#      are linked (they train nothing) and they are reported.
# All configs share a run store, so finished runs are skipped. Two 1-thread runs side by side. Commit
# finished runs as they come: scripts/commit_finished_runs.sh <run store> (a loop).
#   scripts/two_stage_campaign.sh SWEEP_CONFIG STUDY_CONFIG [LONG_CONFIG [TABLE_CONFIG ...]]
#   TASKS="reverse" FINISH_BY=@$(date -d '16:20' +%s) scripts/two_stage_campaign.sh ...  # only runs that can finish by then
# RELPOS: the binary (default build/relpos; a copy keeps a campaign safe from rebuilds).
# JOBS: runs side by side (default 2, one per core); JOBS=1 (beside another campaign's run) also sets threads=1,
# so that every run trains at one thread as with two jobs (the thread count is part of what fixes the numbers).
# POSITIONS: restricts stage 1 to these encodings (a YAML list, e.g. POSITIONS='[{type: txl}, {type: sinusoidal}]');
# stages 2 and 3 go through every chosen cell as always (cells already trained are skipped in seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: scripts/two_stage_campaign.sh SWEEP_CONFIG STUDY_CONFIG [LONG_CONFIG [TABLE_CONFIG ...]]" >&2; exit 2; }
sweep_cfg=$1 study_cfg=$2 long_cfg=${3:-}
table_cfgs=("${@:4}")
bin=${RELPOS:-build/relpos}
jobs=${JOBS:-2}
one=()
[ "$jobs" = 1 ] && one=(threads=1)
name_of() { sed -n 's/^name: *//p' "$1" | head -1; }
results_of() { local d; d=$(sed -n 's/^results_dir: *//p' "$1" | head -1); echo "${d:-results}/$(name_of "$1")"; }
sweep_dir=$(results_of "$sweep_cfg") study_dir=$(results_of "$study_cfg")
tasks=${TASKS:-$(python3 -c "import sys, yaml; print(' '.join(yaml.safe_load(open(sys.argv[1]))['sweep']['grid']['data.task']))" "$sweep_cfg")}
fb=()
[ -n "${FINISH_BY:-}" ] && fb=(--finish-before "$FINISH_BY")
positions=()
[ -n "${POSITIONS:-}" ] && positions=("sweep.grid.model.position=$POSITIONS")
# Overriding the grid rewrites the experiment.yaml of the experiment it runs: scratch experiment
# directories take that, the runs themselves go to the shared store.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# relpos run's own --finish-before estimates from finished runs of the same points, which a cell's new seeds
# do not have yet: the deadline is applied to each cell here, from its seed-1 run's time.
deadline=()
[ -n "${FINISH_BY:-}" ] && deadline=(--finish-before "${FINISH_BY#@}")
# Whether the seed-1 run of LONG_CONFIG named by these overrides reached its competence target.
long_competent() {
  python3 - "$@" <<'PY'
import json, os, re, sys
d = os.path.join(sys.argv[1], "runs")
want = {k: v[1:-1] for k, v in (re.match(r"sweep\.grid\.([\w.]+)=(.*)", o).groups() for o in sys.argv[2:] if o.startswith("sweep.grid."))}
for name in os.listdir(d) if os.path.isdir(d) else []:
    p = os.path.join(d, name, "results.json")
    if not os.path.isfile(p):
        continue
    r = json.load(open(p, encoding="utf-8"))
    lab = r.get("labels", {})
    if lab.get("seed") == "1" and all(lab.get(k) == v for k, v in want.items()):
        sys.exit(0 if (r.get("competence") or {}).get("reached") else 1)
sys.exit(1)
PY
}
for task in $tasks; do
  echo "campaign: $task, stage 1, the learning-rate sweep ($sweep_cfg)"
  "$bin" run "$sweep_cfg" "sweep.grid.data.task=[$task]" "${positions[@]}" "results_dir=$scratch/sweep" "${one[@]}" --jobs "$jobs" "${fb[@]}" </dev/null
  # the sweep's own experiment.yaml and run links (no run starts): choose_lr reads them
  "$bin" run "$sweep_cfg" --start-before @1 >/dev/null
  python3 scripts/choose_lr.py "$sweep_dir" --json "$sweep_dir/lr_choice.json"
  python3 scripts/choose_lr.py "$sweep_dir" --overrides --competent-only "${deadline[@]}" |
    { grep -F "sweep.grid.data.task=[$task]" || true; } | while read -r line; do
    eval "set -- $line"
    echo "campaign: $task, stage 2, $*"
    "$bin" run "${long_cfg:-$study_cfg}" "$@" "results_dir=$scratch/study" "${one[@]}" --jobs "$jobs" "${fb[@]}" </dev/null
  done
  [ -n "$long_cfg" ] || continue
  long_dir=$(results_of "$long_cfg")
  mapfile -t long_cells < <(python3 scripts/choose_lr.py "$sweep_dir" --overrides --uncompetent-only --seeds 1 |
    { grep -F "sweep.grid.data.task=[$task]" || true; })
  # Seed 1 of every such cell first, JOBS of them side by side (each a 1-thread run, as the sweep's), so that
  # a core is not idle while one cell's long run trains; then the seeds of the cells it made competent.
  i=0
  for line in "${long_cells[@]}"; do
    eval "set -- $line"
    i=$((i + 1))
    echo "campaign: $task, stage 3, seed 1 to the longer cap ($long_cfg), $*"
    "$bin" run "$long_cfg" "$@" "results_dir=$scratch/long$i" threads=1 --jobs 1 "${fb[@]}" </dev/null &
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  done
  wait
  [ ${#long_cells[@]} -eq 0 ] || "$bin" run "$long_cfg" --start-before @1 >/dev/null
  for line in "${long_cells[@]}"; do
    eval "set -- $line"
    cell=("${@:1:3}")
    if long_competent "$long_dir" "${cell[@]}"; then
      echo "campaign: $task, stage 3, competent at the longer cap: seeds 2-5, ${cell[*]}"
      "$bin" run "$long_cfg" "${cell[@]}" 'sweep.seeds=[2,3,4,5]' "results_dir=$scratch/long" "${one[@]}" --jobs "$jobs" "${fb[@]}" </dev/null
    else
      echo "campaign: $task, stage 3, ${cell[*]}: seed 1 not competent at the longer cap (or not finished); no more seeds"
    fi
  done
done
# The studies' own experiment.yaml and run links (no run starts), then their reports.
"$bin" run "$study_cfg" --start-before @1 >/dev/null
"$bin" report "$study_dir"
if [ -n "$long_cfg" ]; then
  "$bin" run "$long_cfg" --start-before @1 >/dev/null
  "$bin" report "$(results_of "$long_cfg")"
fi
for table_cfg in "${table_cfgs[@]}"; do
  "$bin" run "$table_cfg" --start-before @1 >/dev/null
  "$bin" report "$(results_of "$table_cfg")"
done

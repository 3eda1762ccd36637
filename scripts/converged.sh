#!/usr/bin/env bash
# The converged reproduction of Shaw et al. (2018): Tables 1, 3 and 2 in that order of priority (then
# k0_vs_none, which compares runs the tables share), two
# 1-thread runs side by side (-j 2 on a 2-core machine), every run to its validation plateau. The three
# configs share one run store (results/converged/runs), so Shaw k = 16 is trained once for all three.
# Finished runs are skipped and an interrupted one resumes from its last checkpoint, so this script can
# be stopped and started again at any time; two copies of it never train the same run (each run is
# locked while it trains). The reports are written at the end (relpos report re-renders them any time).
#   scripts/converged.sh            # RELPOS=path/to/relpos, JOBS=N to change the defaults
#   START_BEFORE=+90m scripts/converged.sh   # start no new run after 90 minutes (or @<unix time>); the
#                                            # running ones finish: for a machine you hold for a while
#   FINISH_BY=@$(date -d 17:30 +%s) scripts/converged.sh   # start a run only while it can finish by then
#                                            # (most updates of a finished run at the latest pace, +10%, +5 min): for a machine you hold until a known time
#   KEEP_OPENBLAS_CORETYPE=1 scripts/converged.sh   # keep an OPENBLAS_CORETYPE set in the environment
set -euo pipefail
cd "$(dirname "$0")/.."
# The kernels: OpenBLAS's own choice for the CPU (on the AMD EPYC Zen 4 and Zen 5 machines relpos has trained on:
# Cooperlake, the same numbers on both; docs/performance.md), not a family the environment forces: some
# of those machines set OPENBLAS_CORETYPE=Haswell, which trains the tables' model 1.5x slower there and
# rounds differently.
if [ -n "${OPENBLAS_CORETYPE:-}" ] && [ -z "${KEEP_OPENBLAS_CORETYPE:-}" ]; then
  echo "converged.sh: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE unset (OpenBLAS chooses the kernels; KEEP_OPENBLAS_CORETYPE=1 keeps it)"
  unset OPENBLAS_CORETYPE
fi
RELPOS=${RELPOS:-build/relpos}
JOBS=${JOBS:-2}
[ -x "$RELPOS" ] || make build
deadline=()
if [ -n "${START_BEFORE:-}" ]; then
  # one absolute time for all three tables
  case "$START_BEFORE" in
    +*h) deadline=(--start-before "@$(( $(date +%s) + ${START_BEFORE:1:-1} * 3600 ))") ;;
    +*m) deadline=(--start-before "@$(( $(date +%s) + ${START_BEFORE:1:-1} * 60 ))") ;;
    +*s) deadline=(--start-before "@$(( $(date +%s) + ${START_BEFORE:1:-1} ))") ;;
    *) deadline=(--start-before "$START_BEFORE") ;;
  esac
fi
if [ -n "${FINISH_BY:-}" ]; then
  case "$FINISH_BY" in
    +*h) deadline+=(--finish-before "@$(( $(date +%s) + ${FINISH_BY:1:-1} * 3600 ))") ;;
    +*m) deadline+=(--finish-before "@$(( $(date +%s) + ${FINISH_BY:1:-1} * 60 ))") ;;
    +*s) deadline+=(--finish-before "@$(( $(date +%s) + ${FINISH_BY:1:-1} ))") ;;
    *) deadline+=(--finish-before "$FINISH_BY") ;;
  esac
fi
# then the comparisons across tables, which train nothing of their own (their points are the tables' runs)
for c in table1 table3 table2 k0_vs_none; do
  "$RELPOS" run "configs/converged/$c.yaml" -j "$JOBS" "${deadline[@]}"
done
for c in table1 table3 table2 k0_vs_none; do
  "$RELPOS" report "results/converged_$c"
done

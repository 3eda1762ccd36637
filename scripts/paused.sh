#!/usr/bin/env bash
# Runs a command with every `relpos run` of this machine paused (SIGSTOP), and resumes them (SIGCONT)
# however the command ends: quiet cores for a benchmark while a long campaign trains. A paused run only
# takes longer; its numbers do not change (nothing in training depends on wall time except a
# train.time_limit_minutes, which counts paused time too: avoid long pauses for such runs).
#   scripts/paused.sh bench/compare_torch.sh 1
#   scripts/paused.sh build/relpos_bench --threads 1 --only tables
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
pids=$(pgrep -f "relpos run " | grep -vx "$$" | tr '\n' ' ')
if [ -n "$pids" ]; then
  kill -STOP $pids
  trap 'kill -CONT $pids' EXIT INT TERM
  echo "paused relpos run process(es) $pids at $(date -u +%T)" >&2
  sleep 2  # let the caches and the scheduler settle
fi
export RELPOS_PAUSED_RUNS="$pids"  # what a measurement's record can say about the machine (scripts/time_first_hour.sh)
"$@"

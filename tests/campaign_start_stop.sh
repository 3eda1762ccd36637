#!/usr/bin/env bash
# scripts/campaign.sh end to end on two tiny configs (ctest campaign/start_stop_resume, ~45 s): `start -j 2`
# runs two trainers over config A (two seeds) and then config B (one seed); `stop` while A trains must leave
# no trainer or loop running, every unfinished run with a checkpoint and a parked copy of it, and no run
# finished by the stop; a second `start` resumes those runs from their checkpoints (not from step 0) and goes
# on to B; the loop then exits by itself after its last pass, every run of A and B finished, and `start`
# refuses to start twice. Fails when `stop` returns before a trainer has exited (it would leave a run
# writing), when a trainer does not go on to the next config, when a resumed run starts again from step 0,
# or when the loop outlives the trainers.
#   tests/campaign_start_stop.sh build/relpos
set -euo pipefail
bin=$(realpath "${1:?usage: tests/campaign_start_stop.sh RELPOS_BINARY}")
cd "$(dirname "$0")/.."
. tests/tiny_reverse.sh
tmp=$(mktemp -d)
cleanup() {
  for f in "$tmp"/state*/*.pid; do [ -f "$f" ] && while read -r p; do kill -TERM "$p" 2>/dev/null || true; done < "$f"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$tmp"/state/*.log; do echo "--- $f" >&2; tail -n 5 "$f" >&2; done; exit 1; }
# START_CHECK=0: `start` returns at once instead of watching its trainers for 3 s (checked at the end), so that the
# stop comes soon after the first checkpoint even on a loaded machine, long before a run of A can finish
export CAMPAIGN_DIR=$tmp/state PARK_DIR=$tmp/parked RELPOS=$bin COMMIT=0 INTERVAL=1 STAGGER=1 START_CHECK=0

config() {  # name seeds max_steps
  cat <<EOF
name: $1
seed: 1
threads: 1
$(tiny_reverse_common "$tmp")
train: {epochs: 100000, max_steps: $3, batch_tokens: 200, lr: 0.25, warmup: 10, eval_every: 500, checkpoint_every: 50}
eval: {batch_tokens: 1000, splits: [val], metrics: [accuracy]}
sweep:
  grid:
    model.position: [{type: alibi}]
  seeds: $2
EOF
}
# A's runs are 6,000 updates (~25 s each unloaded) so that none finishes before the stop; B's 3,000
config camp_a "[1, 2]" 6000 > "$tmp/a.yaml"
config camp_b "[3]" 3000 > "$tmp/b.yaml"
finished() { find "$tmp/runs" -name results.json 2>/dev/null | wc -l; }
wait_for() {  # seconds condition...
  local t=$1; shift
  for ((i = 0; i < t * 5; i++)); do "$@" && return 0; sleep 0.2; done
  return 1
}
checkpointed() { [ "$(find "$tmp/runs" -path '*/checkpoints/last/state.json' 2>/dev/null | wc -l)" -ge 1 ]; }

scripts/campaign.sh start -j 2 "$tmp/a.yaml" "$tmp/b.yaml" > "$tmp/start.out" || fail "start failed"
wait_for 60 checkpointed || fail "no checkpoint within 60 s"
scripts/campaign.sh status > "$tmp/status.out" || fail "status failed"
grep -q "trainers running: 2 of 2" "$tmp/status.out" || fail "status does not show two trainers: $(cat "$tmp/status.out")"
scripts/campaign.sh stop > "$tmp/stop.out" || fail "stop failed"
for f in trainers loop; do
  while read -r p; do kill -0 "$p" 2>/dev/null && fail "$f process $p still runs after stop"; done < "$tmp/state/$f.pid"
done
pgrep -f "$tmp/state/relpos run" > /dev/null && fail "a relpos of the campaign still runs after stop"
[ "$(finished)" -eq 0 ] || fail "a run finished before the stop; make the runs longer"
stopped_at=()
for run in "$tmp"/runs/*/; do
  [ -f "$run/checkpoints/last/state.json" ] || continue
  id=$(basename "$run")
  [ -f "$tmp/parked/$id/checkpoints/last/state.json" ] || fail "run $id has a checkpoint but no parked copy after stop"
  stopped_at+=("$id")
done
[ "${#stopped_at[@]}" -ge 1 ] || fail "no run was left with a checkpoint by the stop"
grep -q "interrupted" "$tmp"/state/trainer*.log || fail "no trainer log says its run was interrupted"

# the loop brings every page up to date: the counts of the pages the checker reads (their markers), and the
# summary and study pages rendered from docs/pages (render_pages, after every commit)
pages=$(scripts/campaign.sh _pages)
grep -qx docs/configs.md <<<"$pages" || fail "the loop's status counts leave out docs/configs.md"
for page in README.md results/README.md results/lm_converged/README.md; do
  [ -f "docs/pages/$page.j2" ] || grep -qx "$page" <<<"$pages" ||
    fail "the loop keeps $page current neither by its counts nor by rendering it (no docs/pages/$page.j2)"
done
# the second start without configs: the project's list (CAMPAIGN_LIST; configs/campaign.list by default)
CAMPAIGN_LIST=$tmp/none.list scripts/campaign.sh start -j 2 2> "$tmp/nolist.err" && fail "a start without configs or a list was accepted"
grep -q "no configs given" "$tmp/nolist.err" || fail "a start without a list does not say why: $(cat "$tmp/nolist.err")"
printf '# the campaign, in order
%s

  %s   # then B
' "$tmp/a.yaml" "$tmp/b.yaml" > "$tmp/campaign.list"
CAMPAIGN_LIST=$tmp/campaign.list scripts/campaign.sh start -j 2 > "$tmp/start2.out" || fail "second start (from the list) failed"
grep -q "the configs of $tmp/campaign.list: $tmp/a.yaml $tmp/b.yaml" "$tmp/start2.out" ||
  fail "the list's configs were not read in order: $(cat "$tmp/start2.out")"
scripts/campaign.sh start -j 2 "$tmp/a.yaml" "$tmp/b.yaml" 2> "$tmp/twice.err" && fail "a second start while running was accepted"
grep -q "is running" "$tmp/twice.err" || fail "starting twice does not say why: $(cat "$tmp/twice.err")"
loop_done() { ! kill -0 "$(cat "$tmp/state/loop.pid")" 2>/dev/null; }
wait_for 240 loop_done || fail "the loop still runs 240 s after the second start"
[ "$(finished)" -eq 3 ] || fail "$(finished) of 3 runs finished (config B's seed needs a trainer to go on to it)"
for id in "${stopped_at[@]}"; do
  grep -q "resuming from step" "$tmp"/state/trainer*.log || fail "run $id was not resumed from its checkpoint"
done
grep -q "every trainer has exited" "$tmp/state/loop.log" || fail "the loop did not make its last pass"

# `stop` waits for a trainer whose relpos takes its time to exit (a run evaluated before it stops): a stand-in
# relpos that needs 3 s after SIGTERM; stop must not return before it has exited.
printf '%s\n' '#!/usr/bin/env bash' \
  'case " $* " in *" --list "*) exit 0 ;; esac' \
  'trap '"'"'sleep 3; echo "interrupted (stand-in)"; exit 130'"'"' TERM' \
  'while :; do sleep 0.1; done' > "$tmp/slow_relpos"
chmod +x "$tmp/slow_relpos"
CAMPAIGN_DIR=$tmp/state2 RELPOS=$tmp/slow_relpos scripts/campaign.sh start -j 1 "$tmp/a.yaml" > /dev/null ||
  fail "start with the stand-in failed"
sleep 1
# status while a trainer has written nothing yet (no progress line, no validation): a report, not an error
CAMPAIGN_DIR=$tmp/state2 scripts/campaign.sh status > "$tmp/status2.out" ||
  fail "status fails while a trainer's log is empty: $(cat "$tmp/status2.out")"
grep -q "trainers running: 1 of 1" "$tmp/status2.out" || fail "status with an empty log: $(cat "$tmp/status2.out")"
t0=$(date +%s.%N)
CAMPAIGN_DIR=$tmp/state2 scripts/campaign.sh stop > /dev/null || fail "stop with the stand-in failed"
pgrep -f "$tmp/state2/relpos" > /dev/null && fail "stop returned while the stand-in relpos was still exiting"
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { exit !(b - a >= 2.9) }' || fail "stop returned before the stand-in's 3 s"
grep -q "interrupted (stand-in)" "$tmp/state2/trainer1.log" || fail "the stand-in did not get SIGTERM"
# `start` watches its trainers for START_CHECK seconds and says why one exited at once: a stand-in relpos that
# loads every config (--list) and fails to train
printf '%s\n' '#!/usr/bin/env bash' \
  'case " $* " in *" --list "*) exit 0 ;; esac' \
  'echo "stand-in: cannot train this config (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})" >&2; exit 1' \
  > "$tmp/failing_relpos"
chmod +x "$tmp/failing_relpos"
# (and the environment's OPENBLAS_CORETYPE does not reach the trainers, unless KEEP_CORETYPE=1: a run that
# is resumed under another environment keeps one kernel family)
OPENBLAS_CORETYPE=Haswell CAMPAIGN_DIR=$tmp/state3 RELPOS=$tmp/failing_relpos START_CHECK=2 scripts/campaign.sh start \
  -j 1 "$tmp/a.yaml" > "$tmp/exited.out" 2> "$tmp/exited.err" || fail "start with a trainer that exits at once failed itself"
grep -q "trainer 1 has already exited" "$tmp/exited.err" && grep -q "stand-in: cannot train" "$tmp/exited.err" ||
  fail "start does not say that its trainer exited at once, and why: $(cat "$tmp/exited.err")"
grep -q "(OPENBLAS_CORETYPE=unset)" "$tmp/exited.err" || fail "the trainer got the environment's kernels: $(cat "$tmp/exited.err")"
grep -q "OPENBLAS_CORETYPE=Haswell is not passed to the trainers" "$tmp/exited.out" || fail "start does not say it dropped OPENBLAS_CORETYPE"
CAMPAIGN_DIR=$tmp/state3 scripts/campaign.sh stop > /dev/null || fail "stop after a trainer exited at once failed"
KEEP_CORETYPE=1 OPENBLAS_CORETYPE=Haswell CAMPAIGN_DIR=$tmp/state4 RELPOS=$tmp/failing_relpos START_CHECK=2 \
  scripts/campaign.sh start -j 1 "$tmp/a.yaml" > /dev/null 2> "$tmp/kept.err" || fail "start with KEEP_CORETYPE=1 failed"
grep -q "(OPENBLAS_CORETYPE=Haswell)" "$tmp/kept.err" || fail "KEEP_CORETYPE=1 did not keep the kernels: $(cat "$tmp/kept.err")"
CAMPAIGN_DIR=$tmp/state4 scripts/campaign.sh stop > /dev/null || fail "stop after KEEP_CORETYPE=1 failed"
echo "campaign start/stop/resume: ${#stopped_at[@]} run(s) stopped and resumed, 3 of 3 finished; stop waits for a slow exit"

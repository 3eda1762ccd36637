#!/usr/bin/env bash
# scripts/park_checkpoints.sh on a fake run store: parks only unfinished runs, renews a copy only when the
# run has checkpointed again, restores only what is newer than the run's own, drops the copy of a finished
# run. Exits non-zero on the first difference.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export PARK_DIR=$tmp/parked
store=$tmp/runs
fail() { echo "FAIL: $*" >&2; exit 1; }
checkpoint() {  # run dir, kind, step
  mkdir -p "$1/checkpoints/$2/params"; echo "{\"step\": $3}" > "$1/checkpoints/$2/state.json"
  echo "weights at $3" > "$1/checkpoints/$2/params/w.npy"
}
step_in() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["step"])' "$1/state.json"; }

checkpoint "$store/a" last 5; checkpoint "$store/a" best 4
checkpoint "$store/b" last 7; echo '{}' > "$store/b/results.json"   # finished
mkdir -p "$store/c"                                                   # never checkpointed
out=$(scripts/park_checkpoints.sh park "$store")
[ "$(step_in "$PARK_DIR/a/checkpoints/last")" = 5 ] || fail "a not parked at step 5"
[ -f "$PARK_DIR/a/checkpoints/best/params/w.npy" ] || fail "a's best checkpoint not parked"
[ ! -e "$PARK_DIR/b" ] && [ ! -e "$PARK_DIR/c" ] || fail "a finished or never-checkpointed run was parked"
[ -z "$(scripts/park_checkpoints.sh park "$store")" ] || fail "an unchanged run was parked again"
checkpoint "$store/a" last 9
scripts/park_checkpoints.sh park "$store" | grep -q "a parked at step 9" || fail "a's newer checkpoint not parked"
[ ! -e "$PARK_DIR/a.tmp" ] || fail "a temporary copy was left"

rm -rf "$store/a/checkpoints"                                         # a fresh checkout: ignored files gone
scripts/park_checkpoints.sh restore "$store" | grep -q "a restored at step 9" || fail "a not restored"
[ "$(step_in "$store/a/checkpoints/last")" = 9 ] && [ "$(cat "$store/a/checkpoints/last/params/w.npy")" = "weights at 9" ] \
  || fail "a's restored checkpoint is not the parked one"
[ -d "$store/a/checkpoints/best" ] || fail "a's best checkpoint not restored"
checkpoint "$store/a" last 12                                         # the run's own is newer: kept
[ -z "$(scripts/park_checkpoints.sh restore "$store")" ] && [ "$(step_in "$store/a/checkpoints/last")" = 12 ] \
  || fail "a newer checkpoint was overwritten by an older parked copy"

echo '{}' > "$store/a/results.json"
scripts/park_checkpoints.sh park "$store" | grep -q "a finished" && [ ! -e "$PARK_DIR/a" ] || fail "a finished run's copy kept"
if scripts/park_checkpoints.sh unpark "$store" 2>/dev/null; then fail "an unknown mode was accepted"; fi
echo "park_checkpoints: all checks passed"

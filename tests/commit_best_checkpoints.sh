#!/usr/bin/env bash
# scripts/commit_finished_runs.sh and configs/keep_checkpoints.list, in a throwaway git repository: a finished
# run the list names (through an experiment's link into a shared store, by a glob) is committed with its best
# checkpoint and without its last one; a finished run it does not name is committed without checkpoints; a run
# committed before the list named it gets its best checkpoint in a commit of its own, once. Fails when the list
# is ignored, when a run it does not name brings its checkpoint, or when checkpoints/last goes in. (< 1 s)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir "$tmp/repo" && cd "$tmp/repo"
git init -q . && git config user.email t@example.com && git config user.name test
mkdir -p scripts configs results/lm/runs results/study/runs
cp "${CFR:-$src/scripts/commit_finished_runs.sh}" scripts/commit_finished_runs.sh && cp "$src/scripts/learned_positions.py" scripts/
cp "$src/.gitignore" .gitignore
finished_run() {  # a finished run in the shared store, with best and last checkpoints, linked from the study
  local hash=$1 id=$2
  mkdir -p "results/lm/runs/$hash/checkpoints/best/params" "results/lm/runs/$hash/checkpoints/last/params"
  echo '{"steps": 10}' > "results/lm/runs/$hash/results.json"
  echo '{"step": 10}' > "results/lm/runs/$hash/checkpoints/best/state.json"
  echo '{"parameters": []}' > "results/lm/runs/$hash/checkpoints/best/manifest.json"
  echo 'w' > "results/lm/runs/$hash/checkpoints/best/params/w.npy"
  echo '{}' > "results/lm/runs/$hash/checkpoints/last/manifest.json"
  ln -s "../../lm/runs/$hash" "results/study/runs/$id"
}
finished_run aaaa seed=1_position=type-rope
finished_run bbbb seed=1_position=type-alibi
finished_run cccc seed=2_position=type-rope
printf '# the study'"'"'s RoPE runs\nresults/study/runs/seed=*_position=type-rope  # for scaling\n' > configs/keep_checkpoints.list
git add scripts configs .gitignore && git commit -qm init
# seed 2's run was committed before the list existed: by hand, without its checkpoint; seed 3's too, with
# everything else it will ever have (its best checkpoint is then the only file the script adds)
git add results/lm/runs/cccc results/study/runs/seed=2_position=type-rope && git commit -qm "seed 2 by hand"
finished_run dddd seed=3_position=type-rope
echo '{}' > results/lm/runs/dddd/position_parameters.json
git add results/lm/runs/dddd results/study/runs/seed=3_position=type-rope && git commit -qm "seed 3 by hand"

scripts/commit_finished_runs.sh results/lm/runs results/study/runs > "$tmp/log" || { cat "$tmp/log"; fail "the script failed"; }
tracked() { git ls-files --error-unmatch -- "$1" > /dev/null 2>&1; }
tracked results/lm/runs/aaaa/results.json || fail "the listed run was not committed"
tracked results/lm/runs/aaaa/checkpoints/best/params/w.npy || fail "the listed run's best checkpoint was not committed"
tracked results/lm/runs/aaaa/checkpoints/last/manifest.json && fail "the listed run's last checkpoint was committed"
git log --format=%s -- results/lm/runs/aaaa | grep -q "with its best checkpoint" || fail "the commit does not say so: $(git log --format=%s -- results/lm/runs/aaaa)"
tracked results/lm/runs/bbbb/results.json || fail "the unlisted run was not committed"
[ -z "$(git ls-files results/lm/runs/bbbb/checkpoints)" ] || fail "the unlisted run's checkpoint was committed"
tracked results/lm/runs/cccc/checkpoints/best/manifest.json || fail "the run committed before it was listed did not get its best checkpoint"
git log -1 --format=%s -- results/lm/runs/cccc | grep -q "files added to the finished run results/lm/runs/cccc: .*checkpoints/best (configs/keep_checkpoints.list)" ||
  fail "the later checkpoint is committed as: $(git log -1 --format=%s -- results/lm/runs/cccc)"
tracked results/lm/runs/dddd/checkpoints/best/manifest.json || fail "a run with nothing else to add did not get its best checkpoint"
git log -1 --format=%s -- results/lm/runs/dddd | grep -q "files added to the finished run results/lm/runs/dddd: checkpoints/best (configs/keep_checkpoints.list)$" ||
  fail "its checkpoint is committed as: $(git log -1 --format=%s -- results/lm/runs/dddd)"
n=$(git rev-list --count HEAD)
scripts/commit_finished_runs.sh results/lm/runs results/study/runs > "$tmp/log2"
[ "$(git rev-list --count HEAD)" = "$n" ] || fail "a second pass committed again: $(cat "$tmp/log2")"
[ -z "$(git status --porcelain)" ] || fail "left behind: $(git status --porcelain)"
echo "commit_best_checkpoints: ok"

#!/usr/bin/env bash
# scripts/campaign.sh's loop, commit path, in a throwaway git repository: one pass (no trainer alive) commits a
# finished run, leaves an unfinished one alone, brings the status counts of the study's page and of a summary
# page (results/README.md) up to date and commits them, renders a page whose source is under docs/pages/ again
# and commits it, and leaves a page with uncommitted edits alone.
# Fails when a page the checker reads is left stale (as results/README.md once was), or when the
# committed run leaves out what its encoding learned (position_parameters.json, from its ignored checkpoint), or
# when a figure a finished run moved (a sum over a study's runs) goes unreported by status. (~5 s)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
repo=$tmp/repo
mkdir -p "$repo/scripts" "$repo/results/study/runs/a" "$repo/results/study/runs/b" "$repo/results/other" "$repo/configs"
cp "$src"/scripts/{campaign.sh,commit_finished_runs.sh,park_checkpoints.sh,check_claims.py,learned_positions.py,render_pages.py} "$repo/scripts/"
cp "$src/.gitignore" "$repo/.gitignore"
cd "$repo"
git init -q . && git config user.email t@example.com && git config user.name test
printf 'name: study\nresults_dir: results\n' > configs/study.yaml
echo '{"steps": 10}' > results/study/runs/a/results.json           # finished, with its best checkpoint: one
ck=results/study/runs/a/checkpoints/best                            # encoding parameter (log_L = 0, L = 1)
mkdir -p "$ck/params"
printf '{"step": 10}' > "$ck/state.json"
printf '{"parameters": [{"name": "decoder.position.log_L", "file": "params/log_L.npy"}]}' > "$ck/manifest.json"
python3 -c 'import struct,sys; h=b"{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: (1,), }"; h+=b" "*(-(10+len(h)+1)%64)+b"\n"; open(sys.argv[1],"wb").write(b"\x93NUMPY\x01\x00"+struct.pack("<H",len(h))+h+struct.pack("<f",0.0))' "$ck/params/log_L.npy"
echo 'not finished' > results/study/runs/b/log.txt                  # training
C="count('results/study/runs/*/results.json')"
printf '# Study\n\n0<!-- check results/study/runs/a/results.json %s --> of 2 runs finished.\n' "$C" > results/study/README.md
printf '# Results\n\n0<!-- check results/study/runs/a/results.json %s --> of 2 study runs.\n' "$C" > results/README.md
printf '# Other\n\n0<!-- check results/study/runs/a/results.json %s --> runs.\n' "$C" > results/other/README.md
mkdir -p results/drift                                              # a figure over every finished run of the study
S="sumof('results/study/runs/*/results.json', '\$steps')"
printf '# Drift\n\n10<!-- check results/study/runs/a/results.json %s --> updates in all, 1<!-- check results/study/runs/a/results.json %s --> runs.\n' "$S" "$C" > results/drift/README.md
printf '# Repo\n' > README.md                                        # the checker reads it by default
mkdir -p docs/pages/results/rendered results/rendered                 # a page rendered from a source (render_pages.py)
printf 'namespace: r\nfacts:\n  runs: "count(%s)"\n' "'results/study/runs/*/results.json'" > docs/pages/results/rendered/facts.yaml
printf '# Rendered\n\n{{ r.runs }} of 2 runs finished.\n' > docs/pages/results/rendered/README.md.j2
rm results/study/runs/a/results.json && /usr/bin/python3 scripts/render_pages.py > /dev/null && echo '{"steps": 10}' > results/study/runs/a/results.json
grep -q "^0 of 2 runs" results/rendered/README.md || fail "the rendered page's first rendering: $(cat results/rendered/README.md)"
git add configs scripts README.md results/study/README.md results/README.md results/other/README.md results/drift/README.md \
  docs/pages results/rendered/README.md
git commit -qm init
echo "draft line" >> results/other/README.md                        # someone is editing this page

state=$tmp/state
mkdir -p "$state"
echo configs/study.yaml > "$state/configs"
: > "$state/trainers.pid"                                           # no trainer: one pass, then the loop exits
CAMPAIGN_DIR=$state PARK_DIR=$tmp/parked INTERVAL=1 COMMIT=1 scripts/campaign.sh _loop > "$tmp/loop.log" 2>&1 ||
  { cat "$tmp/loop.log"; fail "the loop exited non-zero"; }

[ -z "$(git status --porcelain -- results/study/runs/a)" ] || fail "the finished run was not committed"
git ls-files --error-unmatch results/study/runs/a/results.json > /dev/null 2>&1 || fail "the finished run is not tracked"
git ls-files --error-unmatch results/study/runs/b/log.txt > /dev/null 2>&1 && fail "the unfinished run was committed"
git ls-files --error-unmatch results/study/runs/a/position_parameters.json > /dev/null 2>&1 ||
  fail "the finished run was committed without position_parameters.json"
grep -q '"exp": \[' results/study/runs/a/position_parameters.json || fail "position_parameters.json: $(cat results/study/runs/a/position_parameters.json)"
[ -z "$(git ls-files results/study/runs/a/checkpoints)" ] || fail "the checkpoint was committed"
grep -q "^1<!-- check" results/study/README.md || fail "the study's page still says: $(sed -n 3p results/study/README.md)"
grep -q "^1<!-- check" results/README.md || fail "the summary page results/README.md was left stale: $(sed -n 3p results/README.md)"
[ -z "$(git status --porcelain -- results/study/README.md results/README.md)" ] || fail "the updated counts were not committed"
grep -q "^1 of 2 runs" results/rendered/README.md || fail "the rendered page was not rendered again: $(cat results/rendered/README.md)"
[ -z "$(git status --porcelain -- results/rendered)" ] || fail "the rendered page was not committed"
grep -q "^0<!-- check" results/other/README.md || fail "a page with uncommitted edits was rewritten"
grep -q "draft line" results/other/README.md || fail "the uncommitted edit was lost"
grep -q "results/other/README.md has uncommitted edits" "$tmp/loop.log" || fail "the loop does not say why it left a page alone"
# a file added later to a run committed before: committed as that, not as a newly finished run
echo '{}' > results/study/runs/a/extra.json
scripts/commit_finished_runs.sh results/study/runs > /dev/null
git ls-files --error-unmatch results/study/runs/a/extra.json > /dev/null 2>&1 || fail "a file added to a committed run was not committed"
git log -1 --format=%s | grep -q "^files added to the finished run results/study/runs/a: extra.json$" ||
  fail "a file added to a committed run is committed as: $(git log -1 --format=%s)"
# the loop checks every page's figures after it commits: only the count of the page left alone differs; a run
# that finishes then moves the drift page's sum, and status (and stop) say which figure no longer matches
# before the suite finds it
[ -f "$state/claims.txt" ] || fail "the loop did not check the pages' figures after committing"
grep -q "results/other/README.md:3: shows 0" "$state/claims.txt" || fail "the stale count of the page left alone is not listed: $(cat "$state/claims.txt")"
grep -q "results/drift" "$state/claims.txt" && fail "the drift page differs before its sum moved: $(cat "$state/claims.txt")"
printf '#!/bin/sh\necho "# listed"\n' > "$state/relpos" && chmod +x "$state/relpos"
CAMPAIGN_DIR=$state scripts/campaign.sh status > "$tmp/status.log" 2>&1 || fail "status failed: $(cat "$tmp/status.log")"
grep -q "1 figure(s) no longer match" "$tmp/status.log" || fail "status does not list the stale count: $(cat "$tmp/status.log")"
mkdir -p results/study/runs/c && echo '{"steps": 5}' > results/study/runs/c/results.json
CAMPAIGN_DIR=$state PARK_DIR=$tmp/parked INTERVAL=1 COMMIT=1 scripts/campaign.sh _loop > "$tmp/loop2.log" 2>&1 ||
  { cat "$tmp/loop2.log"; fail "the second loop exited non-zero"; }
git ls-files --error-unmatch results/study/runs/c/results.json > /dev/null 2>&1 || fail "the second finished run was not committed"
CAMPAIGN_DIR=$state scripts/campaign.sh status > "$tmp/status.log" 2>&1 || fail "status failed: $(cat "$tmp/status.log")"
grep -q "2 figure(s) no longer match their sources" "$tmp/status.log" || fail "status does not say a figure moved: $(cat "$tmp/status.log")"
grep -q "results/drift/README.md:3: shows 10 but" "$tmp/status.log" || fail "status does not say which: $(cat "$tmp/status.log")"
grep -q "results/drift/README.md:3" "$tmp/loop2.log" || fail "the loop's log does not say which figure moved"
grep -q "updates in all, 2<!--" results/drift/README.md || fail "a page whose other figure moved kept a stale count: $(sed -n 3p results/drift/README.md)"
[ -z "$(git status --porcelain -- results/drift/README.md)" ] || fail "the drift page's count update was not committed"
# a pass with nothing new (HEAD where the last check was) checks no page: the check is ~9 CPU-seconds that the
# trainers beside it would lose every pass
mv scripts/check_claims.py scripts/check_claims_real.py
printf '#!/bin/sh\necho called >> "%s"\nexec python3 "$(dirname "$0")/check_claims_real.py" "$@"\n' "$tmp/checks" > scripts/check_claims.py
chmod +x scripts/check_claims.py
CAMPAIGN_DIR=$state PARK_DIR=$tmp/parked INTERVAL=1 COMMIT=1 scripts/campaign.sh _loop > "$tmp/loop3.log" 2>&1 ||
  { cat "$tmp/loop3.log"; fail "the third loop exited non-zero"; }
[ ! -e "$tmp/checks" ] || fail "a pass with nothing committed checked the pages $(wc -l < "$tmp/checks") time(s)"
echo "campaign loop commit path: ok"

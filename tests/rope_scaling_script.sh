#!/usr/bin/env bash
# scripts/rope_scaling.sh on a fake study with a stand-in relpos: a finished run with its best checkpoint is
# evaluated under both scalings (with the overrides the page states), one without a checkpoint or unfinished is
# skipped and said so, a second call evaluates nothing (it resumes), and an evaluation that prints no result line
# leaves no file and fails the script. (< 1 s)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$tmp/scripts" && cp "$src/scripts/rope_scaling.sh" "$tmp/scripts/"
runs=$tmp/results/lm_converged/runs
mkdir -p "$runs/position=type-rope_seed=1/checkpoints/best" "$runs/position=type-rope_seed=2" "$runs/position=type-rope_seed=3"
echo '{}' > "$runs/position=type-rope_seed=1/results.json"
echo '{}' > "$runs/position=type-rope_seed=1/checkpoints/best/state.json"
echo '{}' > "$runs/position=type-rope_seed=2/results.json"          # finished, its checkpoint elsewhere
cat > "$tmp/relpos" <<'STUB'
#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/calls"
echo "brown: a log line" >&2
[ -n "${STUB_FAIL:-}" ] && exit 0   # no result line
echo "{\"run\": \"$3\", \"overrides\": [\"$6\", \"$7\"], \"metrics\": {\"ppl@64\": 1}}"
STUB
chmod +x "$tmp/relpos"
RELPOS=$tmp/relpos "$tmp/scripts/rope_scaling.sh" > "$tmp/out.log" 2>&1 || { cat "$tmp/out.log"; fail "the script failed"; }
out=$tmp/results/lm_rope_scaling
for m in linear ntk; do
  f="$out/position=type-rope_seed=1.$m.json"
  [ -f "$f" ] || fail "no $f: $(cat "$tmp/out.log")"
  [ "$(wc -l < "$f")" = 1 ] || fail "$f is not one JSON line: $(cat "$f")"
  grep -q "model.position.scaling=$m\", \"model.position.scaling_length=64" "$f" || fail "$f: $(cat "$f")"
done
[ "$(wc -l < "$tmp/calls")" = 2 ] || fail "relpos was called $(wc -l < "$tmp/calls") times: $(cat "$tmp/calls")"
grep -q "eval --run results/lm_converged/runs/position=type-rope_seed=1 --split test" "$tmp/calls" || fail "calls: $(cat "$tmp/calls")"
grep -q "position=type-rope_seed=2: no best checkpoint" "$tmp/out.log" || fail "the run without a checkpoint was not reported"
grep -q "position=type-rope_seed=3: not finished" "$tmp/out.log" || fail "the unfinished run was not reported"
ls "$out" | grep -q "seed=2\|seed=3\|tmp\|log" && fail "stray files: $(ls "$out")"
RELPOS=$tmp/relpos "$tmp/scripts/rope_scaling.sh" > "$tmp/out2.log" 2>&1 || fail "the second call failed"
[ "$(wc -l < "$tmp/calls")" = 2 ] || fail "the second call evaluated again"
grep -q "nothing new to evaluate" "$tmp/out2.log" || fail "the second call did not say it had nothing to do"
rm "$out"/*.ntk.json
if STUB_FAIL=1 RELPOS=$tmp/relpos "$tmp/scripts/rope_scaling.sh" > "$tmp/out3.log" 2>&1; then fail "no result line, yet exit 0"; fi
[ ! -e "$out/position=type-rope_seed=1.ntk.json" ] || fail "a file was written without a result"
grep -q "no result line" "$tmp/out3.log" || fail "the failure is not said: $(cat "$tmp/out3.log")"
echo "rope_scaling script: ok"

#!/usr/bin/env bash
# scripts/rope_scaling.sh with a stand-in relpos: it asks `relpos eval --config` for the study's RoPE runs under
# both scalings with the overrides results/lm_rope_scaling/README.md states, one output directory each, and fails
# when relpos does. (`relpos eval --config` itself: cli/eval --config ... in tests/test_cli.cpp.) (< 1 s)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$tmp/scripts" && cp "$src/scripts/rope_scaling.sh" "$tmp/scripts/"
cat > "$tmp/relpos" <<'STUB'
#!/usr/bin/env bash
printf '%s|' "$@" >> "$(dirname "$0")/calls"; echo >> "$(dirname "$0")/calls"
[ -z "${STUB_FAIL:-}" ]
STUB
chmod +x "$tmp/relpos"
RELPOS=$tmp/relpos "$tmp/scripts/rope_scaling.sh" > "$tmp/out.log" 2>&1 || { cat "$tmp/out.log"; fail "the script failed"; }
[ "$(wc -l < "$tmp/calls")" = 2 ] || fail "relpos was called $(wc -l < "$tmp/calls") times: $(cat "$tmp/calls")"
for m in linear ntk; do
  want="eval|--config|configs/lm_converged/study.yaml|--runs|position=type-rope_seed=*|--split|test|--out|results/lm_rope_scaling/$m|model.position.scaling=$m|model.position.scaling_length=64|"
  grep -qxF "$want" "$tmp/calls" || fail "no call $want: $(cat "$tmp/calls")"
done
if STUB_FAIL=1 RELPOS=$tmp/relpos "$tmp/scripts/rope_scaling.sh" > "$tmp/out2.log" 2>&1; then fail "relpos failed, yet exit 0"; fi
echo "rope_scaling script: ok"

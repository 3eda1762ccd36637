#!/usr/bin/env bash
# scripts/ruoss_test500.sh's summary on a fake study whose runs are all scored already (no relpos eval): each cell
# over all its scored runs, and under `competent` over those that reached their gate (their results.json); a run
# the study no longer names stays out of every cell. Exits non-zero on the first difference.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/results/st/runs"
cp scripts/ruoss_test500.sh "$tmp/scripts/"
fail() { echo "FAIL: $*" >&2; exit 1; }
run() {  # store id, reached (true/false), name in the study or "", score at 41-500, exact match
  mkdir -p "$tmp/results/store/runs/$1"
  echo "{\"competence\": {\"reached\": $2, \"best\": 98.5}}" > "$tmp/results/store/runs/$1/results.json"
  [ -z "$3" ] || ln -s "../../store/runs/$1" "$tmp/results/st/runs/$3"
  echo "{\"run\": \"results/store/runs/$1\", \"name\": \"${3:-gone}\", \"checkpoint_step\": 10, \"metrics\":" \
       "{\"token_accuracy\": $4, \"accuracy\": $5, \"token_accuracy@41\": $4, \"token_accuracy@500\": $4}}" \
       >> "$tmp/results/st/test_41_500.jsonl"
}
run a true  "position=type-rope_lr=0.25_seed=1" 70 1
run b false "position=type-rope_lr=0.25_seed=2" 60 0
run c true  "position=type-rope_lr=0.25_seed=3" 74 3
run d true  "" 99 9                                  # a run the study no longer names
"$tmp/scripts/ruoss_test500.sh" st 2> "$tmp/err" || { cat "$tmp/err" >&2; fail "the script failed"; }
python3 - "$tmp/results/st/test_41_500.json" <<'PY' || fail "the summary differs (above)"
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
assert [c["cell"] for c in cells] == ["rope"], cells
c = cells[0]
assert c["runs"] == 3 and abs(c["token_accuracy@mean"]["mean"] - 68) < 1e-9, c
assert c["competent"]["runs"] == 2, c["competent"]
assert abs(c["competent"]["token_accuracy@mean"]["mean"] - 72) < 1e-9, c["competent"]
assert abs(c["competent"]["accuracy"]["mean"] - 2) < 1e-9 and c["competent"]["accuracy"]["max"] == 3, c["competent"]
assert d["runs"]["position=type-rope_lr=0.25_seed=2"]["competent"] is False
assert list(d["left_out"]) == ["d"], d["left_out"]
PY
echo "ruoss_test500 summary: ok"

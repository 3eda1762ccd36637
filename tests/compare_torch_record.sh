#!/usr/bin/env bash
# bench/compare_torch.sh's record (JSON=): with a stand-in reference that needs no torch (a fixed
# 1,000 tokens/s, 200 MiB), every round is kept, each row's speed ratio is the median of relpos's rounds
# over the reference's, the summary's ranges span the rows, and bad settings exit 2 before measuring.
# Usage: tests/compare_torch_record.sh BUILD/relpos_bench   (~5 s)
set -euo pipefail
cd "$(dirname "$0")/.."
bench=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
printf 'print("RESULT tgt_tok_per_s=1000 peak_rss_mib=200 loss0=8.5")\n' > "$tmp/ref.py"

SHAPES=tiny STEPS=2 WARMUP=0 ROUNDS=3 JSON=$tmp/out.json RELPOS_BENCH=$bench \
  bench/compare_torch.sh "$tmp/ref.py" 1 > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail "compare_torch.sh exited non-zero"; }
grep -q "medians over 3 rounds" "$tmp/log" || fail "no medians over the rounds printed"
python3 - "$tmp/out.json" <<'PY' || fail "the record does not hold what the rounds measured"
import json, statistics, sys
d = json.load(open(sys.argv[1]))
assert d["rounds"] == 3 and d["machine"] and d["cores"] >= 1 and d["relpos_commit"], d
rows = d["rows"]
assert sorted((r["threads"], r["shape"], r["pe"]) for r in rows) == [(1, "tiny", "abs"), (1, "tiny", "rel")], rows
for r in rows:
    assert [x["round"] for x in r["rounds"]] == [1, 2, 3], r
    med = statistics.median(x["relpos_tok_s"] for x in r["rounds"])
    assert med > 0 and r["relpos_tok_s"] == med, r
    assert abs(r["speed_ratio"] - med / 1000) < 1e-12, r
    assert abs(r["memory_ratio"] - r["relpos_mib"] / 200) < 1e-12, r
s = d["summary_by_threads"]["1"]
ratios = [r["speed_ratio"] for r in rows]
assert s["speed_ratio_min"] == min(ratios) and s["speed_ratio_max"] == max(ratios), s
PY
set +e
ROUNDS=0 bench/compare_torch.sh "$tmp/ref.py" 1 > /dev/null 2>&1; [ $? -eq 2 ] || fail "ROUNDS=0 was not refused with exit 2"
JSON=$tmp/nowhere/x.json bench/compare_torch.sh "$tmp/ref.py" 1 > /dev/null 2>&1
[ $? -eq 2 ] || fail "a JSON path in a missing directory was not refused with exit 2"
echo "compare_torch record: ok"

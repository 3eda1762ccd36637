#!/usr/bin/env bash
# Ruoss et al.'s test lengths for the comparison table: re-scores the best checkpoint of every run of
# results/ruoss_table at test lengths 41-500 (theirs; the runs were tested at 41-200), two examples per length
# (920 test examples, data.synthetic.test_size=920), without training: `relpos eval --split test`. Needs the
# runs' checkpoints, which are not committed: it runs where the runs were trained (the workspace of the
# campaign), and skips a run already scored. Appends one `relpos eval` JSON line per run to
# results/ruoss_table/test_41_500.jsonl, then writes results/ruoss_table/test_41_500.json: per run its
# per-token accuracy averaged over the lengths 41-500 (Ruoss et al.'s score), over 41-200 and over 201-500,
# the pooled per-token accuracy and the exact match; the README's numbers are checked against it.
# Measured: 109 CPU-seconds a run (one thread, RoPE, 2026-11-27), 0.7 GB.
#   scripts/ruoss_test500.sh            # every run of results/ruoss_table not scored yet
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${RELPOS:-build/relpos}
out=results/ruoss_table/test_41_500.jsonl
touch "$out"
for link in results/ruoss_table/runs/*/; do
  link=${link%/}
  run=$(readlink -f "$link")
  name=$(basename "$link")
  grep -q "\"run\": \"$run\"" "$out" && continue
  [ -f "$run/checkpoints/best/state.json" ] || { echo "ruoss_test500: $name: no best checkpoint here (not trained in this workspace); skipped" >&2; continue; }
  echo "ruoss_test500: $name" >&2
  "$bin" eval --run "$run" --split test 'data.synthetic.test_len=[41, 500]' data.synthetic.test_size=920 2>/dev/null >> "$out"
done
python3 - "$out" results/ruoss_table/test_41_500.json <<'PY'
import json, os, sys
src, dst = sys.argv[1:]
runs = {}
for line in open(src, encoding="utf-8"):
    r = json.loads(line)
    m = r["metrics"]
    per = {int(k.split("@")[1]): v for k, v in m.items() if k.startswith("token_accuracy@")}
    mean = lambda lo, hi: round(sum(v for n, v in per.items() if lo <= n <= hi) / sum(1 for n in per if lo <= n <= hi), 4)
    runs[os.path.basename(r["run"])] = {"checkpoint_step": r["checkpoint_step"], "token_accuracy@mean": mean(41, 500),
                                        "token_accuracy@mean_41_200": mean(41, 200), "token_accuracy@mean_201_500": mean(201, 500),
                                        "token_accuracy": m["token_accuracy"], "accuracy": m["accuracy"]}
json.dump({"command": "scripts/ruoss_test500.sh", "split": "test", "test_len": [41, 500], "test_size": 920, "runs": runs},
          open(dst, "w"), indent=1, sort_keys=True)
print(f"ruoss_test500: {len(runs)} runs in {dst}", file=sys.stderr)
PY

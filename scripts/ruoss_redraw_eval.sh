#!/usr/bin/env bash
# Re-scores the best checkpoint of a finished run of configs/ruoss/lr_sweep.yaml under other evaluation draws of
# its randomized positions, without training: the investigation behind `randomized_eval: sample_by_length`
# (results/ruoss_lr_sweep/README.md). For each draw stream s it runs `relpos eval --split SPLIT seed=s` with the
# run's randomized_eval set to MODE and eval.batch_tokens to EVAL_BATCH_TOKENS (the seed seeds the evaluation's
# position draws; the data and the weights do not depend on it). Until 2026-11-26 (b64b240) this script made
# a scratch run that resumed from a copy of the checkpoint; `relpos eval --split` gives the same numbers (checked:
# run 264589df717278a7, val, seed 2: 17.6 / 82.0 both ways). One JSON line per re-scoring on stdout.
#   scripts/ruoss_redraw_eval.sh RUN_ID MODE SPLIT EVAL_BATCH_TOKENS SEED...
#   MODE: sample or sample_by_length (the run's position with that randomized_eval); SPLIT: val or test
# e.g. scripts/ruoss_redraw_eval.sh 264589df717278a7 sample val 8192 1 2 3 >> results/ruoss_lr_sweep/eval_draws.jsonl
#   scripts/ruoss_redraw_eval.sh --summary FILE.jsonl   # mean, sd, min, max per (run, mode, split, batching), JSON
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --summary ]; then
  exec python3 - "$2" <<'PY'
import json, statistics, sys
groups = {}
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    groups.setdefault((r["run"], r["randomized_eval"], r["split"], r["eval_batch_tokens"]), []).append(r)
out = []
for (run, mode, split, bt), rs in sorted(groups.items()):
    g = {"run": run, "randomized_eval": mode, "split": split, "eval_batch_tokens": bt, "draws": len(rs)}
    for m in ("accuracy", "token_accuracy"):
        v = [r[m] for r in rs]
        g[m] = {"mean": round(statistics.mean(v), 4), "sd": round(statistics.stdev(v), 4) if len(v) > 1 else 0.0,
                "min": min(v), "max": max(v)}
    out.append(g)
print(json.dumps({"groups": out}, indent=1))
PY
fi
[ $# -ge 5 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
id=$1 mode=$2 split=$3 bt=$4; shift 4
bin=${RELPOS:-build/relpos}
src=results/ruoss/runs/$id
[ -f "$src/results.json" ] && [ -f "$src/checkpoints/best/state.json" ] ||
  { echo "ruoss_redraw_eval: $src is not a finished run with its best checkpoint" >&2; exit 2; }
best=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$src/checkpoints/best/state.json")
for seed in "$@"; do
  "$bin" eval --run "$src" --split "$split" "seed=$seed" "eval.batch_tokens=$bt" "model.position.randomized_eval=$mode" \
      2>/dev/null | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
run, mode, split, bt, seed, step = sys.argv[1:]
m = r["metrics"]
print(json.dumps({"run": run, "step": int(step), "randomized_eval": mode, "split": split, "eval_batch_tokens": int(bt),
                  "draw_seed": int(seed), "accuracy": m["accuracy"], "token_accuracy": m["token_accuracy"]}))
' "$id" "$mode" "$split" "$bt" "$seed" "$best" || { echo "ruoss_redraw_eval: re-scoring with seed $seed failed" >&2; exit 1; }
done

#!/usr/bin/env bash
# Re-scores the best checkpoint of a finished run of configs/ruoss/lr_sweep.yaml under other evaluation draws of
# its randomized positions, without training: the investigation behind `randomized_eval: sample_by_length`
# (results/ruoss_lr_sweep/README.md). For each draw stream s (the run's seed: the data do not depend on it, and
# the checkpoint replaces the initialisation, so it changes only the evaluation's position draws) it copies the
# checkpoint into a scratch run of the same config stopped at the checkpoint's step (train.max_steps), which
# relpos resumes, does not train, and evaluates. (The scratch run needs an optimiser state to resume from; it
# never takes a step, so the copy of the parameters put there is never read.) One JSON line per re-scoring on
# stdout. Scratch directories under $TMPDIR (default /tmp).
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
label() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['labels'][sys.argv[2]])" "$src/results.json" "$1"; }
pos=$(label model.position) lr=$(label train.lr) task=$(label data.task)
pos=$(echo "$pos" | sed -E "s/randomized_eval: [a-z_]+/randomized_eval: $mode/")
best=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$src/checkpoints/best/state.json")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for seed in "$@"; do
  ov=("sweep.grid.data.task=[$task]" "sweep.grid.model.position=[$pos]" "sweep.grid.train.lr=[$lr]" "sweep.seeds=[$seed]"
      "train.max_steps=$best" "eval.batch_tokens=$bt" "eval.splits=[$split]" "report.metrics=[$split.accuracy]"
      "results_dir=$tmp/e$seed" "run_store=$tmp/store$seed")
  dir=$("$bin" run configs/ruoss/lr_sweep.yaml "${ov[@]}" --list | grep -o "$tmp/store$seed/[0-9a-f]*" | head -1)
  mkdir -p "$dir/checkpoints"
  for c in best last; do
    cp -r "$src/checkpoints/best" "$dir/checkpoints/$c"
    mkdir -p "$dir/checkpoints/$c/optim"
    for f in "$src"/checkpoints/best/params/*.npy; do
      n=$(basename "$f" .npy); cp "$f" "$dir/checkpoints/$c/optim/$n.m.npy"; cp "$f" "$dir/checkpoints/$c/optim/$n.v.npy"
    done
    sed -i "s/\"config_hash\": \"[^\"]*\"/\"config_hash\": \"$(basename "$dir")\"/" "$dir/checkpoints/$c/state.json"
  done
  "$bin" run configs/ruoss/lr_sweep.yaml "${ov[@]}" --quiet >/dev/null 2>&1 ||
    { echo "ruoss_redraw_eval: re-scoring with seed $seed failed: $(tail -1 "$dir/log.txt")" >&2; exit 1; }
  python3 - "$dir/results.json" "$id" "$mode" "$split" "$bt" "$seed" "$best" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
_, run, mode, split, bt, seed, step = sys.argv[1:]
m = r["metrics"]
print(json.dumps({"run": run, "step": int(step), "randomized_eval": mode, "split": split, "eval_batch_tokens": int(bt),
                  "draw_seed": int(seed), "accuracy": m[split + ".accuracy"], "token_accuracy": m[split + ".token_accuracy"]}))
PY
done

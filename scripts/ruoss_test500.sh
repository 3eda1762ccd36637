#!/usr/bin/env bash
# Ruoss et al.'s test lengths: re-scores the best checkpoint of every run of a Ruoss-protocol study at test
# lengths 41-500 (theirs; the studies test at 41-200), two examples per length (920 test examples,
# data.synthetic.test_size=920), without training: `relpos eval --split test`. Needs the runs' checkpoints,
# which are not committed: it runs where the runs were trained (the workspace of the campaign), and skips a run
# already scored or without a checkpoint here. Appends one `relpos eval` JSON line per run, with the run's name in
# the study (`name`), to results/STUDY/test_41_500.jsonl, then writes results/STUDY/test_41_500.json: per run its per-token accuracy
# averaged over the lengths 41-500 (Ruoss et al.'s score), over 41-200 and over 201-500, the pooled per-token
# accuracy and the exact match; per cell (the run's name without its seed) the mean and sd of each over its
# scored runs, and under `competent` the same over those of its runs that reached their gate (their results.json's
# competence; absent where the study gates nothing). A scored run its study no longer names (the config amended since) stays in the .jsonl and is
# summarised under `left_out` by its run's id, in no cell. Pages read the summary by name (docs/claims.md).
# Measured: 109 CPU-seconds a run (one thread, RoPE, 2026-11-27), 0.7 GB.
#   scripts/ruoss_test500.sh                            # results/ruoss_table
#   scripts/ruoss_test500.sh ruoss_randomized_family    # another study under results/
set -euo pipefail
cd "$(dirname "$0")/.."
study=${1:-ruoss_table}
[ -d "results/$study/runs" ] || { echo "ruoss_test500: results/$study/runs does not exist (give a study under results/)" >&2; exit 2; }
bin=${RELPOS:-build/relpos}
out=results/$study/test_41_500.jsonl
touch "$out"
for link in results/"$study"/runs/*/; do
  link=${link%/}
  name=$(basename "$link")
  run=$(realpath --relative-to=. "$link")
  [ -f "$run/results.json" ] || continue  # not finished
  grep -q "\"run\": \"$run\"" "$out" && continue  # this run scored already (a name may change runs: an amended config)
  [ -f "$run/checkpoints/best/state.json" ] || { echo "ruoss_test500: $name: no best checkpoint here (not trained in this workspace); skipped" >&2; continue; }
  echo "ruoss_test500: $name" >&2
  if ! line=$("$bin" eval --run "$run" --split test 'data.synthetic.test_len=[41, 500]' data.synthetic.test_size=920 2>"$out.err"); then
    echo "ruoss_test500: $name: relpos eval failed:" >&2; cat "$out.err" >&2; rm -f "$out.err"; exit 1
  fi
  rm -f "$out.err"
  # the line as relpos eval wrote it (its run is the store's directory), with the study's name of the run
  python3 -c 'import json, sys; d = json.loads(sys.argv[1]); d["name"] = sys.argv[2]; print(json.dumps(d))' "$line" "$name" >> "$out"
done
python3 - "$out" "results/$study/test_41_500.json" "$study" <<'PY'
import json, os, re, statistics, sys
src, dst, study = sys.argv[1:]
runs, cells, left_out = {}, {}, {}
# the study's run of each name now (its link's target): a line of a run the study no longer names (its config
# amended since) is kept in the .jsonl and summarised apart, under its run's id, never in a cell
runs_dir = os.path.join("results", study, "runs")
current = {n: os.path.relpath(os.path.realpath(os.path.join(runs_dir, n))) for n in os.listdir(runs_dir)}
for line in open(src, encoding="utf-8"):
    r = json.loads(line)
    m = r["metrics"]
    per = {int(k.split("@")[1]): v for k, v in m.items() if k.startswith("token_accuracy@")}
    mean = lambda lo, hi: round(sum(v for n, v in per.items() if lo <= n <= hi) / sum(1 for n in per if lo <= n <= hi), 4)
    name = r["name"]
    scored = {"checkpoint_step": r["checkpoint_step"], "token_accuracy@mean": mean(41, 500),
              "token_accuracy@mean_41_200": mean(41, 200), "token_accuracy@mean_201_500": mean(201, 500),
              "token_accuracy": m["token_accuracy"], "accuracy": m["accuracy"]}
    competence = json.load(open(os.path.join(r["run"], "results.json"), encoding="utf-8")).get("competence")
    if competence is not None:
        scored["competent"] = bool(competence.get("reached"))
    if current.get(name) != r["run"]:
        left_out[os.path.basename(r["run"])] = dict(scored, name=name, run=r["run"])
        continue
    runs[name] = scored
    # the cell: the run's name without its seed and rate, e.g. position=type-rope_lr=0.25_seed=3 -> rope
    cell = re.sub(r"_seed=\d+$", "", name)
    cell = re.sub(r"_lr=[\d.e-]+", "", cell).replace("position=type-", "")
    cells.setdefault(cell, []).append(runs[name])
KEYS = ("token_accuracy@mean", "token_accuracy@mean_41_200", "token_accuracy@mean_201_500", "accuracy")
def stats(rs):
    entry = {"runs": len(rs)}
    for key in KEYS:
        vals = [x[key] for x in rs]
        if vals:
            entry[key] = {"mean": round(statistics.mean(vals), 4), "max": max(vals),
                          "std": round(statistics.stdev(vals), 4) if len(vals) > 1 else 0.0}
    return entry
summary = []
for cell, rs in sorted(cells.items()):
    entry = dict(stats(rs), cell=cell)
    if any("competent" in x for x in rs):
        entry["competent"] = stats([x for x in rs if x.get("competent")])
    summary.append(entry)
json.dump({"command": f"scripts/ruoss_test500.sh {study}", "split": "test", "test_len": [41, 500], "test_size": 920,
           "runs": runs, "cells": summary, "left_out": left_out}, open(dst, "w"), indent=1, sort_keys=True)
print(f"ruoss_test500: {len(runs)} runs in {dst}", file=sys.stderr)
PY

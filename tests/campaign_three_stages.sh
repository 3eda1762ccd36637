#!/usr/bin/env bash
# scripts/two_stage_campaign.sh end to end on a tiny decoder-only study (ctest campaign/three_stages_tiny):
# a sweep of three encodings x two rates at 20 updates whose competence target no cell can reach, so stage 2
# trains nothing and stage 3 continues each cell's chosen seed-1 run to 40 updates, two cells side by side.
# Fails when a stage-3 run trained from step 0 instead of continuing its capped sweep run (a thread count or
# a config that differs), when a cell is skipped or trained twice, when JOBS=2 trains the cells one after the
# other, or when a second start trains anything. Then the same study with a target every run reaches at its
# first validation: stage 2 trains seeds 2-5 of every cell under the longer cap, and both the study (the
# sweep's cap) and the long config find those runs finished (the same runs under either cap), none trained twice.
#   tests/campaign_three_stages.sh build/relpos
set -euo pipefail
bin=$(realpath "${1:?usage: tests/campaign_three_stages.sh RELPOS_BINARY}")
cd "$(dirname "$0")/.."
. tests/tiny_reverse.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

config() {  # name max_steps seeds
  cat <<EOF
name: $1
seed: 1
threads: 2
$(tiny_reverse_common "$tmp")
train: {epochs: 1000, max_steps: $2, batch_tokens: 200, lr: 0.25, warmup: 10, eval_every: 10, checkpoint_every: 10,
        stop: {patience: 12, min_delta: 0.001, rule: improvement, target_metric: accuracy, target: 100}}
eval: {batch_tokens: 1000, splits: [val, test], metrics: [accuracy, token_accuracy, loss]}
sweep:
  grid:
    data.task: [reverse]
    model.position: [{type: none}, {type: alibi}, {type: rope}]
    train.lr: [0.25, 0.5]
  seeds: $3
report: {rows: data.task+model.position, columns: train.lr, bootstrap: 0, metrics: [val.accuracy, test.accuracy]}
EOF
}
config t_sweep 20 '[1]' > "$tmp/sweep.yaml"
config t_study 20 '[1, 2, 3, 4, 5]' > "$tmp/study.yaml"
config t_long 40 '[1, 2, 3, 4, 5]' > "$tmp/long.yaml"
config t_table 40 '[1, 2, 3, 4, 5]' > "$tmp/table.yaml"  # the comparison table: links and reports, trains nothing

RELPOS=$bin JOBS=2 TASKS=reverse scripts/two_stage_campaign.sh "$tmp/sweep.yaml" "$tmp/study.yaml" "$tmp/long.yaml" "$tmp/table.yaml" \
  > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail "the campaign exited with an error"; }

python3 - "$tmp" <<'PY' || { cat "$tmp/log"; exit 1; }
import json, os, sys
tmp = sys.argv[1]
def results(exp):
    d = os.path.join(tmp, "results", exp, "runs")
    out = {}
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        p = os.path.join(d, name, "results.json")
        if os.path.isfile(p):
            out[name] = json.load(open(p, encoding="utf-8"))
    return out
sweep, study, long = results("t_sweep"), results("t_study"), results("t_long")
def check(cond, why):
    if not cond:
        print("FAIL:", why, file=sys.stderr)
        sys.exit(1)
check(len(sweep) == 6, f"the sweep finished {len(sweep)} runs, not 6")
check(not any(r["competence"]["reached"] for r in sweep.values()), "a sweep run reached an unreachable target")
# the study shares the sweep's run store: its seed-1 points are the sweep's runs; it must train no other seed
extra = [n for n, r in study.items() if r["labels"]["seed"] != "1"]
check(not extra, f"stage 2 trained {extra} with no competent cell")
check(len(long) == 3, f"stage 3 finished {len(long)} runs, not one per cell (3)")
table = results("t_table")
check(sorted(os.path.realpath(os.path.join(tmp, "results", "t_table", "runs", n)) for n in table) ==
      sorted(os.path.realpath(os.path.join(tmp, "results", "t_long", "runs", n)) for n in long),
      "the table did not link exactly the long config's finished runs")
check(os.path.isfile(os.path.join(tmp, "results", "t_table", "report.md")), "the table was not reported")
cells = {(r["labels"]["model.position"]) for r in long.values()}
check(len(cells) == 3, f"stage 3 trained cells {sorted(cells)}")
for name, r in long.items():
    check(r["labels"]["seed"] == "1", f"{name}: stage 3 trained seed {r['labels']['seed']} of a cell seed 1 left short")
    check(r["steps"] == 40, f"{name}: {r['steps']} updates, not the longer cap's 40")
    check(r.get("continued_from"), f"{name}: trained from step 0 instead of continuing its capped sweep run")
print("campaign: 6 sweep runs, no stage-2 run, 3 stage-3 runs each continued from its sweep run")
PY
# JOBS=2: the second cell's long run starts before the first one finishes (a core is not left idle).
python3 - "$tmp/log" <<'PY' || { cat "$tmp/log"; exit 1; }
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
starts = [i for i, l in enumerate(lines) if "stage 3, seed 1 to the longer cap" in l]
if len(starts) != 3:
    sys.exit(f"FAIL: {len(starts)} stage-3 starts in the log, not 3")
done = [i for i, l in enumerate(lines) if i > starts[0] and l.endswith(": finished")]
if not done or starts[1] > done[0]:
    sys.exit("FAIL: stage 3 trained its cells one after the other with JOBS=2")
PY

# A second start finds everything done: no run trains again.
RELPOS=$bin JOBS=2 TASKS=reverse scripts/two_stage_campaign.sh "$tmp/sweep.yaml" "$tmp/study.yaml" "$tmp/long.yaml" \
  > "$tmp/log2" 2>&1 || { cat "$tmp/log2"; fail "the second start exited with an error"; }
if grep -q 'model: .* parameters' "$tmp/log2"; then cat "$tmp/log2"; fail "the second start trained a run again"; fi

# Every cell competent at once (target 0: reached at the first validation, update 10, before either cap).
rm -rf "$tmp/runs" "$tmp/results"
for f in sweep study long; do sed -i 's/target: 100}/target: 0}/' "$tmp/$f.yaml"; done
RELPOS=$bin JOBS=2 TASKS=reverse scripts/two_stage_campaign.sh "$tmp/sweep.yaml" "$tmp/study.yaml" "$tmp/long.yaml" \
  > "$tmp/log3" 2>&1 || { cat "$tmp/log3"; fail "the campaign with competent cells exited with an error"; }
python3 - "$tmp" <<'PY' || { cat "$tmp/log3"; exit 1; }
import json, os, sys
tmp = sys.argv[1]
store = os.path.join(tmp, "runs")
trained = [d for d in os.listdir(store) if os.path.isfile(os.path.join(store, d, "results.json"))]
def check(cond, why):
    if not cond:
        print("FAIL:", why, file=sys.stderr)
        sys.exit(1)
# 6 sweep runs + seeds 2-5 of the three chosen cells, each trained once
check(len(trained) == 6 + 3 * 4, f"the store holds {len(trained)} finished runs, not 18")
# stage 2 trained the new seeds under the longer cap (a seed that needed more than the sweep's cap gets it)
import yaml
caps = sorted(yaml.safe_load(open(os.path.join(store, d, "config.yaml")))["train"]["max_steps"] for d in trained)
check(caps == [20] * 6 + [40] * 12, f"caps of the store's runs {caps}: stage 2 did not train under the long config")
for exp, cap in (("t_study", 20), ("t_long", 40)):
    d = os.path.join(tmp, "results", exp, "runs")
    seen = {}
    for name in os.listdir(d):
        p = os.path.join(d, name, "results.json")
        if os.path.isfile(p):
            r = json.load(open(p, encoding="utf-8"))
            seen[name] = os.path.realpath(os.path.join(d, name))
            check(r["stop_reason"] == "target" and r["steps"] == 10, f"{exp}/{name}: {r['stop_reason']} at {r['steps']}")
    # the chosen cells' five seeds, each a run of the store (the long config's seed 1: the sweep's run)
    check(len([n for n in seen if "seed=1" not in n]) == 12, f"{exp}: {len(seen)} finished points {sorted(seen)}")
    check(all(os.path.dirname(p) == os.path.realpath(store) for p in seen.values()), f"{exp}: a link outside the store")
print("campaign: every cell competent at update 10; seeds 2-5 trained once, found by both caps")
PY
echo "ok"

#!/usr/bin/env bash
# scripts/replay_prefix.py end to end on a tiny run (ctest scripts/replay_prefix_matches_a_run_and_finds_a_change,
# ~10 s): a finished 40-update run replayed for 20 updates matches line for line (exit 0, 20 identical); the
# same run with one training loss changed in its metrics.jsonl is refused at that update (exit 1, the update,
# the key and both values in the record); a log.txt whose first segment was interrupted at update 12 limits
# the replay to 12 updates; --kernels replays on the family asked for (one this CPU does not run: exit 2); an
# id that is not one run of the config is exit 2. Fails if the script compares
# nothing, ignores a changed value, or replays past the first segment.
#   tests/replay_prefix.sh build/relpos
set -euo pipefail
bin=$(realpath "${1:?usage: tests/replay_prefix.sh RELPOS_BINARY}")
cd "$(dirname "$0")/.."
. tests/tiny_reverse.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat > "$tmp/tiny.yaml" <<YAML
name: tiny_replay
seed: 1
threads: 1
$(tiny_reverse_common "$tmp")
train: {epochs: 100000, max_steps: 40, batch_tokens: 200, lr: 0.25, warmup: 10, eval_every: 500, checkpoint_every: 1000}
eval: {batch_tokens: 1000, splits: [val], metrics: [accuracy]}
sweep:
  seeds: [1, 2]
YAML
"$bin" run "$tmp/tiny.yaml" -q > "$tmp/train.log" 2>&1 || { cat "$tmp/train.log" >&2; fail "the tiny runs did not train"; }
run=$tmp/results/tiny_replay/runs/seed=2
[ -f "$run/results.json" ] || fail "no finished run at $run"

# 1. the run as it is: the first 20 updates match
python3 scripts/replay_prefix.py "$tmp/tiny.yaml" seed=2 --steps 20 --relpos "$bin" --out "$tmp/same.json" -- eval.batch_tokens=500 \
  || fail "an unchanged run did not replay identically: $(cat "$tmp/same.json" 2>/dev/null)"
python3 - "$tmp/same.json" <<'PY' || fail "the record of an identical replay is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["replayed_steps"] == 20 and r["training_lines"] == 20 and r["identical"] == 20, r
assert r["first_difference"] is None and r["run"] == "seed=2" and r["segments"][0]["start"] == 0, r
assert r["command"].endswith("-- eval.batch_tokens=500"), r["command"]
PY

# 2. one training loss changed: exit 1 at that update
cp "$run/metrics.jsonl" "$tmp/metrics.orig"
python3 - "$run/metrics.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for d in lines:
    if d.get("step") == 7 and "train_loss" in d:
        d["train_loss"] = round(d["train_loss"] + 1e-6, 6)
open(sys.argv[1], "w").write("".join(json.dumps(d) + "\n" for d in lines))
PY
set +e
python3 scripts/replay_prefix.py "$tmp/tiny.yaml" seed=2 --steps 20 --relpos "$bin" --out "$tmp/changed.json" 2>/dev/null
rc=$?
set -e
[ "$rc" = 1 ] || fail "a changed training loss gave exit $rc, not 1"
python3 - "$tmp/changed.json" <<'PY' || fail "the record does not name update 7's train_loss"
import json, sys
r = json.load(open(sys.argv[1]))
d = r["first_difference"]
assert d["step"] == 7 and d["key"] == "train_loss" and d["run"] != d["replay"] and r["identical"] == 19, r
PY
cp "$tmp/metrics.orig" "$run/metrics.jsonl"

# 3. the first segment interrupted at update 12 (resumed later): the replay stops there
cp "$run/log.txt" "$tmp/log.orig"
python3 - "$run/log.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read().splitlines(True)
i = next(k for k, l in enumerate(text) if re.search(r"\] model: .*OpenBLAS kernels", l))
stamp = text[i][:text[i].index("]") + 1]
text[i + 1:i + 1] = [f"{stamp} interrupted at step 12: checkpoint written to x/checkpoints/last\n", text[i],
                     f"{stamp} resuming from step 12 (epoch 1, batch 12)\n"]
open(sys.argv[1], "w").write("".join(text))
PY
python3 scripts/replay_prefix.py "$tmp/tiny.yaml" seed=2 --steps 20 --relpos "$bin" --out "$tmp/segment.json" 2>/dev/null \
  || fail "the replay of the first segment did not match"
python3 - "$tmp/segment.json" <<'PY' || fail "the replay went past the first segment"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["replayed_steps"] == 12 and r["identical"] == 12 and len(r["segments"]) == 2 and r["segments"][1]["start"] == 12, r
PY
cp "$tmp/log.orig" "$run/log.txt"

# 4. --kernels: the replay runs on the family asked for, and says so; one this CPU does not run is exit 2
k=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['replay_kernels'])" "$tmp/same.json")
python3 scripts/replay_prefix.py "$tmp/tiny.yaml" seed=2 --steps 5 --kernels "$k" --relpos "$bin" --out "$tmp/kernels.json" 2>/dev/null \
  || fail "a replay on the run's own kernels asked by --kernels did not match"
python3 - "$tmp/kernels.json" "$k" <<'PY' || fail "the record of a --kernels replay is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["kernels_from"] == "--kernels" and r["replay_kernels"].lower() == sys.argv[2].lower(), r
assert "--kernels " + sys.argv[2] in r["command"] and r["identical"] == 5, r
PY
set +e
python3 scripts/replay_prefix.py "$tmp/tiny.yaml" seed=2 --steps 5 --kernels NoSuchCore --relpos "$bin" > /dev/null 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || fail "kernels the replay could not run on gave exit $rc, not 2"

# 5. not one run of the config
set +e
python3 scripts/replay_prefix.py "$tmp/tiny.yaml" 'seed=*' --relpos "$bin" > /dev/null 2>&1; rc1=$?
python3 scripts/replay_prefix.py "$tmp/tiny.yaml" seed=9 --relpos "$bin" > /dev/null 2>&1; rc2=$?
set -e
[ "$rc1" = 2 ] && [ "$rc2" = 2 ] || fail "a pattern of two runs gave exit $rc1 and an unknown id $rc2, not 2"
echo "replay_prefix: ok"

#!/usr/bin/env bash
# Two builds of relpos_bench on the study shapes, alone and two processes at once (the campaigns run two
# 1-thread trainers on two cores, which share the memory bandwidth), round after round, one thread each.
#
#   OLD=/tmp/relpos-base/build/relpos_bench NEW=build/relpos_bench ROUNDS=3 JSON=bench/results/x.json \
#     scripts/paused.sh bench/side_by_side.sh
#
# A round runs OLD alone, NEW alone, two OLD at once, two NEW at once (each: relpos_bench --threads 1 --only
# $SHAPES --no-attention). The record (JSON=) keeps every round of every process: seconds per update, the
# share of the one-core sgemm peak, first-step loss, and per (build, mode, shape, pe) the median over the
# rounds (side by side: over both processes of every round), with NEW's speed-up over OLD.
# SHAPES (default "ruoss kazemnejad lm"), STEPS (10), WARMUP (3), ROUNDS (3).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD:?set OLD=path/to/old/relpos_bench}" "${NEW:?set NEW=path/to/new/relpos_bench}"
SHAPES=${SHAPES:-ruoss kazemnejad lm}
STEPS=${STEPS:-10}
WARMUP=${WARMUP:-3}
ROUNDS=${ROUNDS:-3}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "side_by_side.sh: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
for b in "$OLD" "$NEW"; do [ -x "$b" ] || { echo "side_by_side.sh: $b is not an executable" >&2; exit 2; }; done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
run() { "$1" --threads 1 --only $SHAPES --steps "$STEPS" --warmup "$WARMUP" --no-attention > "$2" 2>&1; }
for ((r = 1; r <= ROUNDS; r++)); do
  for which in old new; do
    bin=$OLD; [ "$which" = new ] && bin=$NEW
    run "$bin" "$tmp/$r.$which.alone.1"
  done
  for which in old new; do
    bin=$OLD; [ "$which" = new ] && bin=$NEW
    run "$bin" "$tmp/$r.$which.pair.1" & p1=$!
    run "$bin" "$tmp/$r.$which.pair.2" & p2=$!
    wait $p1 $p2
  done
  echo "round $r done at $(date -u +%T)" >&2
done
MODEL=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- 2>/dev/null || COMMIT="$COMMIT+dirty"
python3 - "$tmp" "${JSON:-}" "$OLD" "$NEW" "$ROUNDS" "$STEPS" "$WARMUP" "${MODEL:-unknown CPU}" "$(nproc)" "$COMMIT" \
  "$(date -u +%FT%TZ)" "$SHAPES" <<'PY'
import glob, json, os, re, statistics, sys
tmp, out, old, new, rounds, steps, warmup, model, cores, commit, date, shapes = sys.argv[1:]
runs, peaks, kernels = {}, [], set()
for f in sorted(glob.glob(os.path.join(tmp, "*"))):
    r, which, mode, proc = os.path.basename(f).split(".")
    for line in open(f):
        m = re.match(r"sgemm peak .*: ([\d.]+) GFLOP/s", line)
        if m:
            peaks.append(dict(round=int(r), build=which, mode=mode, process=int(proc), gflops=float(m.group(1))))
        m = re.search(r"OpenBLAS kernels (\S+)", line)
        if m:
            kernels.add(m.group(1))
        p = line.split()
        if len(p) == 9 and p[0] in shapes.split() and re.match(r"^[\d.]+$", p[4]):
            runs.setdefault((which, mode, p[0], p[1]), []).append(dict(
                round=int(r), process=int(proc), s_per_update=float(p[4]) / 1000, of_peak_pct=float(p[6].rstrip("%")),
                peak_mib=float(p[7]), loss0=float(p[8])))
rows = []
for (which, mode, shape, pe), rs in sorted(runs.items()):
    rows.append(dict(build=which, mode=mode, shape=shape, pe=pe, rounds=rs,
                     s_per_update=statistics.median(x["s_per_update"] for x in rs),
                     of_peak_pct=statistics.median(x["of_peak_pct"] for x in rs),
                     loss0=rs[0]["loss0"]))
def row(which, mode, shape, pe):
    return next((x for x in rows if (x["build"], x["mode"], x["shape"], x["pe"]) == (which, mode, shape, pe)), None)
for x in rows:
    if x["build"] == "new":
        o = row("old", x["mode"], x["shape"], x["pe"])
        x["speedup_over_old"] = o["s_per_update"] / x["s_per_update"] if o else None
        x["same_loss0_as_old"] = o is not None and o["loss0"] == x["loss0"]
print(f"{'build':<5} {'mode':<6} {'shape':<11} {'pe':<10} {'s/update':>9} {'of peak':>8} {'speed-up':>9}")
for x in rows:
    su = x.get("speedup_over_old")
    print(f"{x['build']:<5} {x['mode']:<6} {x['shape']:<11} {x['pe']:<10} {x['s_per_update']:9.4f} {x['of_peak_pct']:7.0f}% "
          f"{'' if su is None else f'{su:8.2f}x'}")
if out:
    rec = dict(command=f"OLD={old} NEW={new} ROUNDS={rounds} SHAPES='{shapes}' STEPS={steps} WARMUP={warmup} "
                       f"bench/side_by_side.sh", date=date, machine=model, cores=int(cores),
               openblas_kernels=sorted(kernels), relpos_commit=commit, old=old, new=new, rounds=int(rounds),
               steps=int(steps), warmup=int(warmup), sgemm_peak_gflops=peaks,
               sgemm_peak_gflops_median=statistics.median(p["gflops"] for p in peaks) if peaks else None, rows=rows)
    with open(out, "w") as f:
        json.dump(rec, f, indent=1)
        f.write("\n")
    print(f"wrote {out}")
PY

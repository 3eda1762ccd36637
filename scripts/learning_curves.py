#!/usr/bin/env python3
"""Learning curves of a validation metric for a set of runs, side by side: a JSON summary and a PNG.

    scripts/learning_curves.py --metric val.token_accuracy --threshold 99 --at 2500,5000,10000 \
        --out results/ruoss_randomized_diagnosis/curves LABEL=RUN_DIR [LABEL=RUN_DIR ...]

For each run (a directory with metrics.jsonl): its validation points of METRIC, the first update at which the
metric reached THRESHOLD (null if never), its best value and that update, and its value at each update of
--at (the last validation at or before it; null past the run's end). Writes OUT.json and, where gnuplot is
installed, OUT.png (one line per run). A page reads the JSON through its facts (docs/claims.md).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys


def curve(run_dir, metric):
    path = os.path.join(run_dir, "metrics.jsonl")
    if not os.path.isfile(path):
        sys.exit(f"learning_curves: {run_dir} has no metrics.jsonl")
    points = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if f'"{metric}"' in line:
                row = json.loads(line)
                points.append((row["step"], row[metric]))
    if not points:
        sys.exit(f"learning_curves: {run_dir}/metrics.jsonl has no '{metric}'")
    return points


def summarise(label, run_dir, metric, threshold, at):
    points = curve(run_dir, metric)
    first = next((s for s, v in points if threshold is not None and v >= threshold), None)
    best_step, best = max(points, key=lambda p: (p[1], -p[0]))
    values_at = {}
    for a in at:
        before = [v for s, v in points if s <= a]
        values_at[str(a)] = before[-1] if before and points[-1][0] >= a else None
    return {"label": label, "run": os.path.relpath(os.path.realpath(run_dir)), "points": points,
            "first_at_threshold": first, "best": best, "best_step": best_step, "last_step": points[-1][0],
            "at": values_at}


def plot(out, metric, runs):
    if not shutil.which("gnuplot"):
        print("learning_curves: gnuplot is not installed; no plot", file=sys.stderr)
        return
    dat = out + ".dat"
    with open(dat, "w", encoding="utf-8") as f:
        for r in runs:
            f.write(f"# {r['label']}\n")
            for s, v in r["points"]:
                f.write(f"{s} {v}\n")
            f.write("\n\n")
    lines = ", ".join(f"'{dat}' index {i} with lines lw 2 title '{r['label']}' noenhanced" for i, r in enumerate(runs))
    script = (f"set terminal pngcairo size 900,520\nset output '{out}.png'\nset key bottom right\n"
              f"set xlabel 'update'\nset ylabel '{metric}' noenhanced\nset grid\nplot {lines}\n")
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.remove(dat)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metric", required=True)
    ap.add_argument("--threshold", type=float)
    ap.add_argument("--at", default="", help="updates at which to read each curve, comma-separated")
    ap.add_argument("--out", required=True, help="OUT.json and OUT.png are written")
    ap.add_argument("runs", nargs="+", metavar="LABEL=RUN_DIR")
    a = ap.parse_args()
    at = [int(x) for x in a.at.split(",") if x.strip()]
    runs = []
    for spec in a.runs:
        label, sep, run_dir = spec.partition("=")
        if not sep:
            sys.exit(f"learning_curves: '{spec}' is not LABEL=RUN_DIR")
        runs.append(summarise(label, run_dir, a.metric, a.threshold, at))
    with open(a.out + ".json", "w", encoding="utf-8") as f:
        json.dump({"metric": a.metric, "threshold": a.threshold, "at": at, "runs": runs}, f, indent=1)
        f.write("\n")
    plot(a.out, a.metric, runs)
    for r in runs:
        print(f"{r['label']}: best {r['best']} at {r['best_step']}, reached {a.threshold} at {r['first_at_threshold']}, "
              + ", ".join(f"@{k} {v}" for k, v in r["at"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

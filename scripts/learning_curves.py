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


def colours(labels, sep=None, dashed=None):
    """Each label's line colour (1, 2, ...) and key entry (None: no entry). With SEP, the labels that share the
    part before SEP share a colour and one key entry, that part, on the group's first line that is not DASHED
    (a list of booleans; the key shows a solid sample), else on its first."""
    dashed = dashed or [False] * len(labels)
    groups, colour, titled = [], [], {}
    for i, label in enumerate(labels):
        group = label.split(sep)[0].strip() if sep else label
        if group not in groups:
            groups.append(group)
        c = groups.index(group) + 1
        colour.append(c)
        if c not in titled or (dashed[titled[c]] and not dashed[i]):
            titled[c] = i
    return [(c, groups[c - 1] if titled[c] == i else None) for i, c in enumerate(colour)]


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        rows = [(250, 60.0), (500, 99.5), (750, 98.0), (1000, 99.7)]
        with open(os.path.join(d, "metrics.jsonl"), "w", encoding="utf-8") as f:
            for step, v in rows:
                f.write(json.dumps({"step": step, "val.token_accuracy": v}) + "\n")
                f.write(json.dumps({"step": step, "loss": 1.0}) + "\n")  # a training line: not a point
        r = summarise("a", d, "val.token_accuracy", 99, [600, 1000, 2000])
        assert r["points"] == rows, r["points"]
        assert r["first_at_threshold"] == 500, r
        assert (r["best"], r["best_step"]) == (99.7, 1000), r
        assert r["at"] == {"600": 99.5, "1000": 99.7, "2000": None}, r["at"]
        assert summarise("a", d, "val.token_accuracy", 99.9, [])["first_at_threshold"] is None
    got = colours(["RoPE · seed 1", "ALiBi · seed 1", "RoPE · seed 2"], "·")
    assert got == [(1, "RoPE"), (2, "ALiBi"), (1, None)], got
    assert colours(["x", "y"]) == [(1, "x"), (2, "y")]
    got = colours(["RoPE · seed 1", "RoPE · seed 2", "ALiBi · seed 1"], "·", [True, False, True])
    assert got == [(1, None), (1, "RoPE"), (2, "ALiBi")], got
    print("learning_curves: self-test passed")
    return 0


def plot(out, metric, runs, threshold=None, sep=None, ylabel=None):
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
    parts = []
    dashed_at = [threshold is not None and r["first_at_threshold"] is None for r in runs]
    # with a threshold drawn, a run that never reached it is dashed
    for i, (colour, title) in enumerate(colours([r["label"] for r in runs], sep, dashed_at)):
        key = f"title '{title}' noenhanced" if title is not None else "notitle"
        dashed = " dt 2" if dashed_at[i] else ""
        parts.append(f"'{dat}' index {i} with lines lw {1.5 if sep else 2} lc {colour}{dashed} {key}")
    lines = ", ".join(parts)
    gate = f"set arrow from graph 0, first {threshold} to graph 1, first {threshold} nohead dt 2 lc 'gray'\n" if threshold else ""
    script = (f"set terminal pngcairo size 900,520\nset output '{out}.png'\nset key bottom right\n"
              f"set xlabel 'update'\nset ylabel '{ylabel or metric}' noenhanced\nset grid\n{gate}plot {lines}\n")
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.remove(dat)


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metric", required=True)
    ap.add_argument("--threshold", type=float)
    ap.add_argument("--at", default="", help="updates at which to read each curve, comma-separated")
    ap.add_argument("--out", required=True, help="OUT.json and OUT.png are written")
    ap.add_argument("--color-by", metavar="SEP", help="one colour (and key entry) for the runs whose labels share the "
                    "part before SEP (\"randomized RoPE · seed 1\" with SEP '·'); the threshold drawn as a dashed line, and "
                    "dashed too the runs that never reached it")
    ap.add_argument("--ylabel", help="the plot's y-axis label (default: the metric's name)")
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
    plot(a.out, a.metric, runs, a.threshold if a.color_by else None, a.color_by, a.ylabel)
    for r in runs:
        print(f"{r['label']}: best {r['best']} at {r['best_step']}, reached {a.threshold} at {r['first_at_threshold']}, "
              + ", ".join(f"@{k} {v}" for k, v in r["at"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

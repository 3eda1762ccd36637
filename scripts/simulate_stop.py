#!/usr/bin/env python3
"""Replays plateau stopping rules on finished runs' learning curves (metrics.jsonl), to choose the
rule of train.stop from a pilot that trained past its plateau (results/pilot_convergence/README.md).

For each run and each (patience, min_delta): the validation at which the rule of relpos's trainer
(experiments/train/trainer.cpp) would have stopped -- `patience` validations in a row that do not lower the
best validation loss by more than `min_delta` -- the best step up to there (the checkpoint the run would
evaluate), its validation loss and greedy validation BLEU, and what the full curve reached.

    scripts/simulate_stop.py results/pilot_convergence/runs/*/metrics.jsonl
    scripts/simulate_stop.py --patience 3 5 8 --min-delta 0 0.002 0.005 RUN/metrics.jsonl ...
"""
import argparse
import json
import sys


def curve(path):
    out = {}
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            if j.get("valid_loss") is not None:
                out[j["step"]] = (j["epoch"], j["valid_loss"], j.get("valid_bleu_tok"))
    return [(s,) + out[s] for s in sorted(out)]


def replay(points, patience, min_delta):
    best, best_at, bad = float("inf"), None, 0
    for i, (step, epoch, loss, bleu) in enumerate(points):
        bad = 0 if loss < best - min_delta else bad + 1
        if loss < best:
            best, best_at = loss, i
        if patience and bad >= patience:
            return i, best_at
    return len(points) - 1, best_at


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("metrics", nargs="+")
    ap.add_argument("--patience", type=int, nargs="+", default=[3, 5, 8])
    ap.add_argument("--min-delta", type=float, nargs="+", default=[0.0, 0.001, 0.002, 0.005])
    a = ap.parse_args()
    for path in a.metrics:
        pts = curve(path)
        if not pts:
            print(f"{path}: no validation lines", file=sys.stderr)
            continue
        full_best = min(range(len(pts)), key=lambda i: pts[i][2])
        bleus = [p[3] for p in pts if p[3] is not None]
        print(f"\n{path}: {len(pts)} validations, last step {pts[-1][0]} (epoch {pts[-1][1]}); lowest validation loss "
              f"{pts[full_best][2]:.4f} at step {pts[full_best][0]} (epoch {pts[full_best][1]})"
              + (f"; greedy val BLEU there {pts[full_best][3]:.2f}, highest {max(bleus):.2f}" if bleus else ""))
        print(f"{'patience':>8} {'min_delta':>9} {'stop step':>9} {'epoch':>5} {'best step':>9} {'best loss':>9} "
              f"{'Δ loss vs full':>14} {'val BLEU':>8} {'updates saved':>13}")
        for p in a.patience:
            for d in a.min_delta:
                stop, best = replay(pts, p, d)
                s, e, l, b = pts[best]
                print(f"{p:>8} {d:>9.4f} {pts[stop][0]:>9} {pts[stop][1]:>5} {s:>9} {l:>9.4f} "
                      f"{l - pts[full_best][2]:>+14.4f} {(f'{b:.2f}' if b is not None else '-'):>8} "
                      f"{pts[-1][0] - pts[stop][0]:>13}")


if __name__ == "__main__":
    main()

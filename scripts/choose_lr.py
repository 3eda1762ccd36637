#!/usr/bin/env python3
"""Chooses each cell's learning rate from a learning-rate sweep, on in-distribution validation only.

A cell is (data.task, model.position). Among its finished runs of one seed (default 1) at the swept
learning rates, the chosen rate is the one whose run
  1. reached its competence target (results.json "competence".reached), then
  2. has the highest validation exact match (val.accuracy), then the highest val.token_accuracy, then
  3. the lowest validation loss (val.loss), then the smaller learning rate.
Test metrics are never read. A cell is chosen only when every rate of the sweep has finished (else it is
listed as waiting), so a choice never changes once written.

    scripts/choose_lr.py results/ruoss_lr_sweep                      # a table; exit 0
    scripts/choose_lr.py results/ruoss_lr_sweep --json out.json      # also the choices as JSON
    scripts/choose_lr.py results/ruoss_lr_sweep --overrides
        # one line per chosen cell: the relpos run overrides that train its other seeds at its rate
    scripts/choose_lr.py --self-test     # checks the rule on a made-up sweep (run by the suite)
    scripts/choose_lr.py results/ruoss_lr_sweep --overrides --uncompetent-only --seeds 1
        # the cells no rate made competent: seed 1 at the chosen rate, for a longer budget

The experiment directory is one that `relpos run` wrote (experiment.yaml with the sweep, runs/ with the
run directories or links into a run store). Standard library only.
"""
import argparse
import json
import os
import re
import shlex
import sys
import time


def sweep_rates(experiment_yaml):
    """The train.lr values of the sweep, as text, from experiment.yaml (a flow list on one line)."""
    with open(experiment_yaml, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*train\.lr:\s*\[(.*)\]\s*$", line)
            if m:
                return [v.strip() for v in m.group(1).split(",") if v.strip()]
    return []


def grid_positions(experiment_yaml):
    """The model.position values of the sweep's grid (flow maps on one line), or None when it names none.
    Runs of positions no longer in the grid (a superseded variant whose links stay for the record) are not
    cells to choose for."""
    with open(experiment_yaml, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*model\.position:\s*\[(.*)\]\s*$", line)
            if m:
                return re.findall(r"\{[^{}]*\}", m.group(1))
    return None


def runs(exp_dir):
    out = []
    root = os.path.join(exp_dir, "runs")
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "results.json")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        r["_dir"] = name
        out.append(r)
    return out


def key(r):
    m = r.get("metrics", {})
    c = r.get("competence") or {}
    return (1 if c.get("reached") else 0, m.get("val.accuracy", -1.0), m.get("val.token_accuracy", -1.0),
            -m.get("val.loss", float("inf")), -float(r["labels"]["train.lr"]))


def self_test():
    """The rule and the three --overrides selections on a made-up sweep; exit 1 on the first wrong answer."""
    import contextlib
    import io
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "experiment.yaml"), "w", encoding="utf-8") as f:
            f.write("sweep:\n  grid:\n    model.position: [{type: a}, {type: b}, {type: c}, {type: d}]\n"
                    "    train.lr: [0.25, 0.5]\n")
        # (position, lr, seed, reached, val.accuracy, val.loss)
        made = [("{type: a}", "0.25", "1", True, 99.0, 0.2), ("{type: a}", "0.5", "1", True, 99.5, 0.3),
                ("{type: b}", "0.25", "1", False, 40.0, 0.5), ("{type: b}", "0.5", "1", True, 10.0, 0.9),
                ("{type: c}", "0.25", "1", False, 30.0, 0.5), ("{type: c}", "0.5", "1", False, 35.0, 0.6),
                ("{type: d}", "0.25", "1", True, 99.0, 0.2),  # 0.5 missing: waiting
                ("{type: a}", "0.25", "2", False, 0.0, 9.0),  # another seed: never read
                ("{type: e}", "0.25", "1", False, 1.0, 9.0), ("{type: e}", "0.5", "1", False, 1.0, 9.0)]  # not in the grid
        for i, (pos, lr, seed, reached, acc, loss) in enumerate(made):
            run = os.path.join(d, "runs", str(i))
            os.makedirs(run)
            with open(os.path.join(run, "results.json"), "w", encoding="utf-8") as f:
                json.dump({"labels": {"data.task": "t", "model.position": pos, "train.lr": lr, "seed": seed},
                           "metrics": {"val.accuracy": acc, "val.loss": loss, "test.accuracy": 100 - acc},
                           "competence": {"reached": reached}, "train_seconds": 60}, f)

        def run(*args):
            out, err = io.StringIO(), io.StringIO()
            saved = sys.argv
            sys.argv = ["choose_lr.py", d, *args]
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = main()
            finally:
                sys.argv = saved
            return code, out.getvalue()

        def cells(text):
            return sorted(re.findall(r"model\.position=\[(\{type: \w\})\]' 'sweep\.grid\.train\.lr=\[([\d.]+)\]",
                                     text))

        failures = []

        def expect(what, got, want):
            if got != want:
                failures.append(f"{what}: got {got}, want {want}")

        expect("all chosen cells", cells(run("--overrides")[1]),
               [("{type: a}", "0.5"), ("{type: b}", "0.5"), ("{type: c}", "0.5")])
        expect("competent only", cells(run("--overrides", "--competent-only")[1]),
               [("{type: a}", "0.5"), ("{type: b}", "0.5")])
        expect("uncompetent only", cells(run("--overrides", "--uncompetent-only", "--seeds", "1")[1]),
               [("{type: c}", "0.5")])
        expect("seeds named", "sweep.seeds=[1]" in run("--overrides", "--uncompetent-only", "--seeds", "1")[1], True)
        expect("both selections refused", run("--overrides", "--competent-only", "--uncompetent-only")[0], 2)
        code, table = run()
        expect("table exit code", code, 0)
        expect("waiting cell listed", "waiting for lr 0.5" in table, True)
        for f in failures:
            print("choose_lr self-test: " + f, file=sys.stderr)
        if failures:
            return 1
        print("choose_lr self-test: the rule and the three selections hold, runs outside the grid ignored (7 checks)")
        return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("experiment", help="an experiment directory written by relpos run (e.g. results/ruoss_lr_sweep)")
    ap.add_argument("--seed", default="1", help="the seed of the sweep (default 1)")
    ap.add_argument("--json", help="write the choices to this file")
    ap.add_argument("--overrides", action="store_true",
                    help="print, per chosen cell, the relpos run overrides (shell-quoted) that train its other seeds")
    ap.add_argument("--seeds", default="2,3,4,5", help="the seeds --overrides names (default 2,3,4,5)")
    ap.add_argument("--finish-before", type=float, metavar="UNIX_TIME",
                    help="with --overrides: only cells whose seed-1 run at the chosen rate, timed again (+10%% and 5 "
                         "minutes), can finish by then")
    ap.add_argument("--competent-only", action="store_true",
                    help="with --overrides: leave out cells whose chosen run did not reach the competence target "
                         "(no rate of the sweep made seed 1 competent: more seeds would train models that say "
                         "nothing about extrapolation)")
    ap.add_argument("--uncompetent-only", action="store_true",
                    help="with --overrides: only the cells whose chosen run did NOT reach the competence target (for a "
                         "longer budget, e.g. configs/ruoss/long.yaml with --seeds 1)")
    a = ap.parse_args()
    if a.competent_only and a.uncompetent_only:
        print("choose_lr: --competent-only and --uncompetent-only exclude each other", file=sys.stderr)
        return 2
    exp_yaml = os.path.join(a.experiment, "experiment.yaml")
    if not os.path.isfile(exp_yaml):
        print(f"choose_lr: {a.experiment} is not an experiment directory (no experiment.yaml)", file=sys.stderr)
        return 2
    rates = sweep_rates(exp_yaml)
    if not rates:
        print(f"choose_lr: {exp_yaml} sweeps no train.lr", file=sys.stderr)
        return 2
    positions = grid_positions(exp_yaml)
    cells = {}
    for r in runs(a.experiment):
        lab = r.get("labels", {})
        if lab.get("seed") != a.seed or "train.lr" not in lab:
            continue
        if positions is not None and lab.get("model.position", "") not in positions:
            continue
        cells.setdefault((lab.get("data.task", ""), lab.get("model.position", "")), []).append(r)
    chosen, waiting = [], []
    for (task, pos), rs in cells.items():
        have = sorted({r["labels"]["train.lr"] for r in rs}, key=float)
        missing = [x for x in rates if x not in have]
        if missing:
            waiting.append({"task": task, "position": pos, "missing_lr": missing})
            continue
        best = max(rs, key=key)
        chosen.append({"task": task, "position": pos, "lr": best["labels"]["train.lr"],
                       "train_seconds": best.get("train_seconds", 0),
                       "reached": bool((best.get("competence") or {}).get("reached")),
                       "val_accuracy": best["metrics"].get("val.accuracy"),
                       "by_lr": {r["labels"]["train.lr"]: {"val_accuracy": r["metrics"].get("val.accuracy"),
                                                            "reached": bool((r.get("competence") or {}).get("reached")),
                                                            "steps": r.get("steps")} for r in rs}})
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"rule": "competence reached, then highest val.accuracy, val.token_accuracy, lowest val.loss, "
                               "smaller lr; seed " + a.seed + "; test metrics never read",
                       "chosen": chosen, "waiting": waiting}, f, indent=1)
            f.write("\n")
    if a.overrides:
        for c in chosen:
            if a.competent_only and not c["reached"]:
                print(f"choose_lr: {c['task']} {c['position']}: not competent at any rate of the sweep; its other "
                      f"seeds are not trained", file=sys.stderr)
                continue
            if a.uncompetent_only and c["reached"]:
                continue
            if a.finish_before and time.time() + 1.1 * float(c["train_seconds"]) + 300 > a.finish_before:
                print(f"choose_lr: {c['task']} {c['position']}: its runs take about {c['train_seconds'] / 60:.0f} "
                      f"minutes, more than is left before the deadline; not started", file=sys.stderr)
                continue
            print(" ".join(shlex.quote(o) for o in (f"sweep.grid.data.task=[{c['task']}]",
                                                     f"sweep.grid.model.position=[{c['position']}]",
                                                     f"sweep.grid.train.lr=[{c['lr']}]", f"sweep.seeds=[{a.seeds}]")))
        return 0
    for c in chosen:
        per = ", ".join(f"lr {lr}: {v['val_accuracy']:.2f}{'' if v['reached'] else ' (not competent)'}"
                        for lr, v in sorted(c["by_lr"].items(), key=lambda kv: float(kv[0])))
        print(f"{c['task']:18s} {c['position']:60s} -> lr {c['lr']}   ({per})")
    for w in waiting:
        print(f"{w['task']:18s} {w['position']:60s} waiting for lr {', '.join(w['missing_lr'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Replays plateau stopping rules on finished runs' learning curves (metrics.jsonl), to choose the
rule of train.stop from a pilot that trained past its plateau (results/pilot_convergence/README.md),
and to see where the two rules of relpos's trainer (train.stop.rule, experiments/train/trainer.cpp
`count_validation`) part on runs already trained.

Both rules count `patience` validations in a row without an improvement and then stop; an improvement
is a validation loss below a reference minus `min_delta`. They differ in the reference:

    running_best  the lowest loss so far; every lower loss moves it, however small the step, so a loss
                  that falls by less than min_delta per validation stops the run (the rule the converged
                  tables and the LM study were trained with)
    improvement   the loss of the last validation that counted as an improvement; it moves only on an
                  improvement larger than min_delta (Keras' and Lightning's EarlyStopping; the default)

The best checkpoint is the lowest loss under either rule.

Table mode: for each run and each (patience, min_delta), the validation at which the rule would have
stopped, the best step up to there (the checkpoint the run would evaluate), its validation loss and
greedy validation BLEU, and what the full curve reached. A rule that does not stop within the curve shows
the curve's last validation as its stop step; with --rule both (the default) or improvement such a row
ends in "(no stop)", while --rule running_best prints the table exactly as this script always did.

    scripts/simulate_stop.py results/pilot_convergence/runs/*/metrics.jsonl
    scripts/simulate_stop.py RUN/metrics.jsonl ... --patience 3 5 8 --min-delta 0 0.002 0.005 --rule running_best

Summary mode (--summary-json FILE): for finished runs, each with config.yaml and results.json next to
its metrics.jsonl, replays both rules with the run's own train.stop {patience, min_delta} and writes per
run: where running_best stops (checked against the recorded stop when results.json says stop_reason
"plateau"), whether improvement would have stopped by then or continued, its count of bad validations
at the last validation, the lowest loss and its step, and the loss trend over the last six validations;
with a summary per study (the directory above runs/). Exit 1 when a replayed running_best stop differs
from a recorded plateau stop (the JSON is written either way).

    scripts/simulate_stop.py --summary-json results/plateau_rule/replay.json \\
        results/converged/runs/*/metrics.jsonl results/lm_extrapolation/runs/*/metrics.jsonl

Standard library only.
"""
import argparse
import json
import os
import re
import sys

RULES = ("running_best", "improvement")
TREND = 6  # validations over which the summary measures the loss trend


def curve(path):
    out = {}
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            if j.get("valid_loss") is not None:
                out[j["step"]] = (j["epoch"], j["valid_loss"], j.get("valid_bleu_tok"))
    return [(s,) + out[s] for s in sorted(out)]


def trace(points, patience, min_delta, rule="running_best"):
    """Replays one rule as count_validation does. Returns a dict: stop (index of the validation at which
    the rule stops, None when it does not stop within the curve), best (index of the lowest loss up to the
    stop, or over the whole curve), bad (bad-validation count after each validation, up to the stop),
    reference (the rule's reference loss after the last replayed validation) and reference_index (the
    validation that set it; None while no validation has counted)."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    lowest, best_at, count, bad = float("inf"), None, 0, []
    reference, reference_at = float("inf"), None  # improvement: the last loss that counted
    for i, (step, epoch, loss, bleu) in enumerate(points):
        ref = lowest if rule == "running_best" else reference
        if loss < ref - min_delta:
            count, reference, reference_at = 0, loss, i
        else:
            count += 1
        bad.append(count)
        if loss < lowest:
            lowest, best_at = loss, i
        if patience and count >= patience:
            return {"stop": i, "best": best_at, "bad": bad,
                    "reference": lowest if rule == "running_best" else reference,
                    "reference_index": best_at if rule == "running_best" else reference_at}
    return {"stop": None, "best": best_at, "bad": bad,
            "reference": lowest if rule == "running_best" else reference,
            "reference_index": best_at if rule == "running_best" else reference_at}


def replay(points, patience, min_delta, rule="running_best"):
    """(index of the stop or of the last validation, index of the best validation up to there)."""
    t = trace(points, patience, min_delta, rule)
    return (len(points) - 1 if t["stop"] is None else t["stop"]), t["best"]


# ----------------------------------------------------------------------------- table mode

def print_tables(path, pts, patience_values, delta_values, rules, mark_no_stop=True):
    full_best = min(range(len(pts)), key=lambda i: pts[i][2])
    bleus = [p[3] for p in pts if p[3] is not None]
    print(f"\n{path}: {len(pts)} validations, last step {pts[-1][0]} (epoch {pts[-1][1]}); lowest validation loss "
          f"{pts[full_best][2]:.4f} at step {pts[full_best][0]} (epoch {pts[full_best][1]})"
          + (f"; greedy val BLEU there {pts[full_best][3]:.2f}, highest {max(bleus):.2f}" if bleus else ""))
    for rule in rules:
        if len(rules) > 1:
            print(f"rule {rule}:")
        print(f"{'patience':>8} {'min_delta':>9} {'stop step':>9} {'epoch':>5} {'best step':>9} {'best loss':>9} "
              f"{'Δ loss vs full':>14} {'val BLEU':>8} {'updates saved':>13}")
        for p in patience_values:
            for d in delta_values:
                t = trace(pts, p, d, rule)
                stop = len(pts) - 1 if t["stop"] is None else t["stop"]
                s, e, l, b = pts[t["best"]]
                print(f"{p:>8} {d:>9.4f} {pts[stop][0]:>9} {pts[stop][1]:>5} {s:>9} {l:>9.4f} "
                      f"{l - pts[full_best][2]:>+14.4f} {(f'{b:.2f}' if b is not None else '-'):>8} "
                      f"{pts[-1][0] - pts[stop][0]:>13}" + (" (no stop)" if mark_no_stop and t["stop"] is None else ""))


# ----------------------------------------------------------------------------- summary mode

def _scalar(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _flow_map(text):
    """'{patience: 5, min_delta: 0.002}' -> dict (flat flow maps only, as relpos writes train.stop)."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise ValueError(f"not a flow map: {text!r}")
    out = {}
    for item in filter(None, (x.strip() for x in inner[1:-1].split(","))):
        k, _, v = item.partition(":")
        out[k.strip()] = _scalar(v)
    return out


def read_config(path):
    """The few keys of a run's resolved config.yaml the summary needs: name and train.stop (written as a
    flow map or as a block). Not a YAML parser: the resolved configs relpos writes only."""
    with open(path) as f:
        lines = f.read().split("\n")
    name, stop, epochs, section = None, None, None, None
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            key, _, value = line.partition(":")
            section = key.strip()
            if section == "name":
                name = _scalar(value)
            continue
        e = re.match(r"  epochs:\s*(\d+)\s*$", line)
        if section == "train" and e:
            epochs = int(e.group(1))
        m = re.match(r"(\s+)stop:\s*(.*)$", line)
        if section == "train" and m and len(m.group(1)) == 2:
            if m.group(2).strip():
                stop = _flow_map(m.group(2))
            else:  # block map: the lines indented deeper
                stop = {}
                for nxt in lines[i + 1:]:
                    if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                        break
                    if nxt.strip():
                        k, _, v = nxt.strip().partition(":")
                        stop[k.strip()] = _scalar(v)
    return name, stop, epochs


def summarize_run(metrics_path):
    run_dir = os.path.dirname(os.path.abspath(metrics_path))
    run_id = os.path.basename(run_dir)
    store = os.path.dirname(run_dir)
    study = os.path.basename(os.path.dirname(store)) if os.path.basename(store) == "runs" else os.path.basename(store)
    name, stop, epochs_cap = read_config(os.path.join(run_dir, "config.yaml"))
    if not stop or not stop.get("patience"):
        raise SystemExit(f"{run_dir}/config.yaml: no train.stop with patience > 0")
    patience, min_delta = int(stop["patience"]), float(stop.get("min_delta", 0))
    with open(os.path.join(run_dir, "results.json")) as f:
        res = json.load(f)
    pts = curve(metrics_path)
    if not pts:
        raise SystemExit(f"{metrics_path}: no validation lines")
    n = len(pts)
    rb = trace(pts, patience, min_delta, "running_best")
    # Improvement is replayed over the whole curve; "by then" is running_best's stop (or the curve's end).
    horizon = n - 1 if rb["stop"] is None else rb["stop"]
    im = trace(pts[:horizon + 1], patience, min_delta, "improvement")
    lowest = min(range(n), key=lambda i: pts[i][2])
    last = pts[-TREND:]
    first_loss, last_loss = last[0][2], last[-1][2]
    recorded_plateau = res.get("stop_reason") == "plateau"
    rb_stop_step = None if rb["stop"] is None else pts[rb["stop"]][0]
    matches = None
    if recorded_plateau:
        matches = rb["stop"] is not None and rb_stop_step == res.get("steps") and rb["stop"] == n - 1
    if im["stop"] is None:
        verdict = "neither" if rb["stop"] is None else "continued"
    elif rb["stop"] is None or im["stop"] < rb["stop"]:
        verdict = "earlier"  # cannot happen: improvement's reference is never below the running best
    else:
        verdict = "same"
    im_bad = im["bad"][-1]
    secs = res.get("train_seconds")
    per_validation = secs / n if secs is not None else None  # wall seconds of training per validation interval
    ref_i = im["reference_index"]
    return {
        "id": run_id,
        "study": study,
        "table": name,
        "result_id": res.get("id"),
        "labels": res.get("labels", {}),
        "seed": res.get("seed"),
        "patience": patience,
        "min_delta": min_delta,
        "config_rule": stop.get("rule"),
        "stop_reason": res.get("stop_reason"),
        "steps": res.get("steps"),
        "epochs_completed": res.get("epochs_completed"),
        "train_seconds": res.get("train_seconds"),
        "train_hours": round(res["train_seconds"] / 3600, 4) if res.get("train_seconds") is not None else None,
        "threads": res.get("threads"),
        "machine": res.get("machine"),
        "epochs_cap": epochs_cap,
        "validations": n,
        "last_validation_step": pts[-1][0],
        "running_best": {
            "stops": rb["stop"] is not None,
            "stop_validation": None if rb["stop"] is None else rb["stop"] + 1,  # 1-based: the n-th validation
            "stop_step": rb_stop_step,
            "bad_at_last": rb["bad"][-1],
            "matches_recorded_stop": matches,
        },
        "improvement": {
            "stopped_by_then": im["stop"] is not None,
            "stop_validation": None if im["stop"] is None else im["stop"] + 1,
            "stop_step": None if im["stop"] is None else pts[im["stop"]][0],
            "bad_at_last": im_bad,
            "reference_loss": None if ref_i is None else round(im["reference"], 6),
            "reference_step": None if ref_i is None else pts[ref_i][0],
            "improves_below": None if ref_i is None else round(im["reference"] - min_delta, 6),
            "min_more_validations": None if im["stop"] is not None else patience - im_bad,
            # continuing: the fewest further validations times this run's mean training seconds per validation
            "min_more_seconds": None if im["stop"] is not None or per_validation is None
            else round((patience - im_bad) * per_validation, 1),
        },
        "verdict": verdict,
        "lowest_loss": pts[lowest][2],
        "lowest_loss_step": pts[lowest][0],
        "recorded_best_step": res.get("best_step"),
        "best_step_matches": res.get("best_step") == pts[lowest][0] if res.get("best_step") is not None else None,
        "trend": {
            "validations": len(last),
            "steps": [p[0] for p in last],
            "losses": [p[2] for p in last],
            "first_loss": first_loss,
            "last_loss": last_loss,
            "rel_change": (last_loss - first_loss) / first_loss,
            "rel_change_pct": 100 * (last_loss - first_loss) / first_loss,
            "mean_drop_per_validation": (first_loss - last_loss) / (len(last) - 1) if len(last) > 1 else 0.0,
        },
    }


def summarize_study(runs):
    def count(pred):
        return sum(1 for r in runs if pred(r))

    cont = [r for r in runs if r["verdict"] == "continued"]
    by_table, by_reason, bad_hist = {}, {}, {}
    for r in cont:
        by_table[r["table"]] = by_table.get(r["table"], 0) + 1
    for r in runs:
        by_reason[r["stop_reason"]] = by_reason.get(r["stop_reason"], 0) + 1
        k = str(r["improvement"]["bad_at_last"])
        bad_hist[k] = bad_hist.get(k, 0) + 1
    runs_by_table = {}
    for r in runs:
        runs_by_table[r["table"]] = runs_by_table.get(r["table"], 0) + 1
    secs = [r["train_seconds"] for r in cont if r["train_seconds"] is not None]
    drops = [r["trend"]["mean_drop_per_validation"] for r in runs]
    cont_changes = [r["trend"]["rel_change_pct"] for r in cont]
    checked = [r for r in runs if r["running_best"]["matches_recorded_stop"] is not None]
    stops = sorted({(r["patience"], r["min_delta"]) for r in runs})
    return {
        "runs": len(runs),
        "stop": [{"patience": p, "min_delta": d} for p, d in stops],
        "stop_reason": by_reason,
        "running_best_stops": count(lambda r: r["running_best"]["stops"]),
        "recorded_plateau": len(checked),
        "replay_matches_recorded": count(lambda r: r["running_best"]["matches_recorded_stop"] is True),
        "mismatches": [r["id"] for r in checked if not r["running_best"]["matches_recorded_stop"]],
        "best_step_matches": count(lambda r: r["best_step_matches"] is True),
        "improvement_same_stop": count(lambda r: r["verdict"] == "same"),
        "improvement_earlier": count(lambda r: r["verdict"] == "earlier"),
        "continued": len(cont),
        "neither_stops": count(lambda r: r["verdict"] == "neither"),
        "runs_by_table": runs_by_table,
        "continued_by_table": by_table,
        "continued_ids": [r["id"] for r in cont],
        "improvement_bad_at_last": bad_hist,
        "config_rule_named": count(lambda r: r["config_rule"] is not None),
        "steps_min": min(r["steps"] for r in runs),
        "steps_max": max(r["steps"] for r in runs),
        "epochs_cap_min": min((r["epochs_cap"] for r in runs if r["epochs_cap"] is not None), default=None),
        "epochs_cap_max": max((r["epochs_cap"] for r in runs if r["epochs_cap"] is not None), default=None),
        "train_seconds_total": round(sum(r["train_seconds"] or 0 for r in runs), 1),
        "validations_min": min(r["validations"] for r in runs),
        "validations_max": max(r["validations"] for r in runs),
        "lowest_at_last_validation": count(lambda r: r["lowest_loss_step"] == r["last_validation_step"]),
        "continued_lowest_at_stop": count(lambda r: r["verdict"] == "continued"
                                          and r["lowest_loss_step"] == r["last_validation_step"]),
        "trend_mean_drop_min": min(drops),
        "trend_mean_drop_max": max(drops),
        "continued_trend_rel_change_pct_min": min(cont_changes, default=None),
        "continued_trend_rel_change_pct_max": max(cont_changes, default=None),
        "continued_train_seconds": round(sum(secs), 1),
        "continued_train_hours": round(sum(secs) / 3600, 4),
        "continued_train_seconds_mean": round(sum(secs) / len(secs), 1) if secs else None,
        "continued_train_seconds_min": min(secs) if secs else None,
        "continued_train_seconds_max": max(secs) if secs else None,
        "continued_threads_max": max((r["threads"] for r in cont if r["threads"] is not None), default=None),
        "continued_min_more_seconds": round(sum(r["improvement"]["min_more_seconds"] for r in cont), 1),
        "continued_min_more_validations": min((r["improvement"]["min_more_validations"] for r in cont), default=None),
    }


def write_summary(out_path, metrics_paths):
    runs = [summarize_run(p) for p in metrics_paths]
    studies = {}
    for r in runs:
        studies.setdefault(r["study"], []).append(r)
    doc = {
        "made_by": "scripts/simulate_stop.py --summary-json FILE METRICS.jsonl ... (the README names the globs)",
        "inputs": len(metrics_paths),
        "rules": {
            "running_best": "improvement = loss < (lowest loss so far) - min_delta; the lowest moves on every lower loss",
            "improvement": "improvement = loss < (loss of the last improvement) - min_delta; the reference moves only then",
            "stop": "patience validations in a row without an improvement",
        },
        "fields": {
            "stop_validation": "1-based number of the validation at which the rule stops (null: no stop within the curve)",
            "improvement.stopped_by_then": "improvement would have stopped at or before running_best's stop (or the curve's end)",
            "verdict": "same: improvement stops where running_best does; continued: running_best stops, improvement "
                       "would not have by then; neither: no rule stops within the curve; earlier: improvement stops first",
            "improvement.min_more_validations": "patience - bad_at_last: the fewest further validations before "
                                                "improvement could stop",
            "improvement.min_more_seconds": "min_more_validations x train_seconds / validations: the fewest further "
                                            "training seconds (wall clock, on the run's own machine and threads)",
            "trend.rel_change": "(last loss - loss 5 validations before) / the latter, over the last 6 validations",
        },
        "summary": {s: summarize_study(rs) for s, rs in studies.items()},
        "runs": runs,
    }
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    bad = 0
    for s, sm in doc["summary"].items():
        print(f"{s}: {sm['runs']} runs, stop {sm['stop']}, stop_reason {sm['stop_reason']}; running_best stops "
              f"{sm['running_best_stops']} (matches the recorded plateau stop in {sm['replay_matches_recorded']} of "
              f"{sm['recorded_plateau']}); improvement: same stop {sm['improvement_same_stop']}, continued "
              f"{sm['continued']} {sm['continued_by_table']}, neither stops {sm['neither_stops']}")
        for rid in sm["mismatches"]:
            r = next(x for x in studies[s] if x["id"] == rid)
            print(f"  MISMATCH {rid}: recorded stop at step {r['steps']}, running_best replays "
                  f"{r['running_best']['stop_step']}", file=sys.stderr)
            bad += 1
    print(f"wrote {out_path}")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("metrics", nargs="+")
    ap.add_argument("--patience", type=int, nargs="+", default=[3, 5, 8])
    ap.add_argument("--min-delta", type=float, nargs="+", default=[0.0, 0.001, 0.002, 0.005])
    ap.add_argument("--rule", choices=RULES + ("both",), default="both",
                    help="table mode: the rule(s) replayed (default both)")
    ap.add_argument("--summary-json", metavar="FILE",
                    help="summary mode: each run's own train.stop, both rules, written to FILE")
    a = ap.parse_args()
    if a.summary_json:
        return write_summary(a.summary_json, a.metrics)
    rules = RULES if a.rule == "both" else (a.rule,)
    for path in a.metrics:
        pts = curve(path)
        if not pts:
            print(f"{path}: no validation lines", file=sys.stderr)
            continue
        print_tables(path, pts, a.patience, a.min_delta, rules, mark_no_stop=a.rule != "running_best")
    return 0


if __name__ == "__main__":
    sys.exit(main())

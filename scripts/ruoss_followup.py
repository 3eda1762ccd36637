#!/usr/bin/env python3
"""Writes the config of Ruoss et al.'s family on duplicate_string and missing_duplicate, for the two encodings
that the rule of configs/ruoss/randomized_family.yaml picks from the family's report on reverse_string.

The rule (stated in that config's header before any randomized run of the family finished): the two encodings
whose comparison (randomized - real) has the largest absolute mean paired difference in Ruoss et al.'s score at
41-200 (test.token_accuracy@mean), among the comparisons tested (a verdict: both cells at the gate in at least 3
paired seeds); if fewer than two are tested, the rest by the most randomized seeds at the gate, then by the
randomized cell's mean score. Their cells, gate, rates and seeds as in the family.

    scripts/ruoss_followup.py --preview     # the choice the report gives now, and the config it would write
    scripts/ruoss_followup.py               # writes configs/ruoss/followup_tasks.yaml; refused until the
                                            # choice can no longer change (below)
    scripts/ruoss_followup.py --self-test   # checks the rule on made-up reports (run by the suite)

The choice can no longer change once every run of the family has finished, or earlier when (a) at least two
comparisons are tested with every run of their cells finished (their mean paired differences are final) and (b)
every other comparison can no longer be tested: its cells' runs at the gate and still unfinished cannot make 3
paired seeds (min(real at the gate + real unfinished, randomized at the gate + randomized unfinished) < 3).

Reads results/ruoss_randomized_family/report.json and configs/ruoss/randomized_family.yaml; needs PyYAML
(Debian's python3-yaml, installed by `make`).
"""
import argparse
import datetime
import json
import subprocess
import textwrap
import sys

import yaml

FAMILY_CONFIG = "configs/ruoss/randomized_family.yaml"
FAMILY_REPORT = "results/ruoss_randomized_family/report.json"
OUT = "configs/ruoss/followup_tasks.yaml"
SCORE = "test.token_accuracy@mean"
TASKS = ["duplicate_string", "missing_duplicate"]
NAMES = {"rope": "RoPE", "alibi": "ALiBi", "txl": "Transformer-XL", "sinusoidal": "sinusoidal"}


class _Plain(yaml.SafeDumper):
    """Writes a value each time it occurs (no &anchors and *aliases for the cells that share a position map)."""

    def ignore_aliases(self, data):
        return True


def flow(value):
    """A YAML value as the report labels it: one line, flow style."""
    return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10**6).strip()


def is_tested(con):
    """Whether a comparison of the report is tested (3 paired seeds at the gate or more): it carries a verdict, final
    or, while the family trains, read against the stated family ("waits for the family" included)."""
    return bool(con) and con.get("verdict") in ("holds", "not shown", "contradicted", "waits for the family")


def contrast(report, rand, real):
    return next((c for c in report.get("contrasts", []) if c["row"] == rand and c["minus"] == real and c["metric"] == SCORE),
                None)


def pairs(cells):
    """{type: {"real": row, "randomized": row}}: the config's cells by encoding, as the report labels their rows."""
    by_type = {}
    for c in cells:
        pos = c["model.position"]
        by_type.setdefault(pos["type"], {})["randomized" if "randomized" in pos else "real"] = flow(pos)
    return by_type


def score_cell(report, row):
    return next((c for c in report["cells"] if c["row"] == row and c["metric"] == SCORE), None)


def choose(report, cells):
    """(the two chosen encodings' type names, the evidence lines) from a family report and the config's cells."""
    rank = []
    for t, pair in pairs(cells).items():
        rand, real = pair["randomized"], pair["real"]
        con = contrast(report, rand, real)
        tested = is_tested(con)
        cell = score_cell(report, rand)
        at_gate = cell["competent"]["reached"] if cell and cell.get("competent") else 0
        mean = cell["competent"]["mean"] if cell and cell.get("competent") and cell["competent"]["mean"] is not None else None
        rank.append({"type": t, "tested": tested, "diff": con["mean"] if tested else None, "n": con["n"] if con else 0,
                     "at_gate": at_gate, "score": mean})
    tested = sorted((r for r in rank if r["tested"]), key=lambda r: -abs(r["diff"]))
    rest = sorted((r for r in rank if not r["tested"]),
                  key=lambda r: (-r["at_gate"], -(r["score"] if r["score"] is not None else float("-inf"))))
    chosen = (tested + rest)[:2]
    lines = []
    for r in tested + rest:
        name = NAMES.get(r["type"], r["type"])
        if r["tested"]:
            lines.append(f"{name}: tested over {r['n']} paired seeds, mean paired difference {r['diff']:+.2f} points")
        else:
            score = "none" if r["score"] is None else f"{r['score']:.2f}%"
            lines.append(f"{name}: not tested, randomized seeds at the gate {r['at_gate']}, its mean score {score}")
    return [r["type"] for r in chosen], lines


def settled(report, config):
    """(whether the choice can no longer change before the family completes, why): see the module's comment."""
    seeds = len(config["sweep"]["seeds"])

    def counts(row):
        cell = score_cell(report, row)
        comp = cell.get("competent") if cell else None
        return (comp["reached"], comp["runs"]) if comp else (0, 0)

    final, why = 0, []
    for t, pair in pairs(config["sweep"]["cells"]).items():
        (real_gate, real_runs), (rand_gate, rand_runs) = counts(pair["real"]), counts(pair["randomized"])
        name = NAMES.get(t, t)
        if real_runs == seeds and rand_runs == seeds:
            final += is_tested(contrast(report, pair["randomized"], pair["real"]))
            continue
        bound = min(real_gate + seeds - real_runs, rand_gate + seeds - rand_runs)
        if bound >= 3:
            return False, f"{name} can still be tested (up to {bound} paired seeds at the gate)"
        why.append(f"{name} can no longer be tested (at most {bound} paired seeds at the gate)")
    if final < 2:
        return False, "fewer than two comparisons are final"
    return True, "; ".join(why)


def family_complete(report, config):
    want = len(config["sweep"]["cells"]) * len(config["sweep"]["seeds"])
    return report["runs"] >= want, report["runs"], want


def build_config(config, chosen, lines, commit, today, when="every run of that family finished"):
    family = [c for t in chosen for c in config["sweep"]["cells"] if c["model.position"]["type"] == t]
    family.sort(key=lambda c: ("randomized" in c["model.position"], chosen.index(c["model.position"]["type"])))
    # every task's real-position cells first (cheap), then the randomized ones, each task in turn
    cells = [dict({"data.task": task}, **c) for randomized in (False, True) for task in TASKS for c in family
             if ("randomized" in c["model.position"]) == randomized]
    names = " and ".join(NAMES.get(t, t) for t in chosen)
    header = [
        f"Ruoss et al.'s family on two more tasks, for {names}: each randomized encoding minus the same at its real",
        "positions, paired by seed, on duplicate_string and missing_duplicate. Written by scripts/ruoss_followup.py on",
        f"{today} from results/ruoss_randomized_family/report.json at {commit},",
    ] + textwrap.wrap(f"{when}, before any run of this config trained; the cells, gate, rates, seeds and tests are the "
                      "family's and are not changed after any of its test numbers is seen.", 112) + [
        "The two encodings, by the rule configs/ruoss/randomized_family.yaml states (the largest absolute mean paired",
        "difference in Ruoss et al.'s score at 41-200 among the comparisons tested; then the most randomized seeds at",
        "the gate; then the randomized cell's mean score):",
    ] + ["  " + l for l in lines] + [
        "The tests: for each task and each of the two encodings, randomized - real on the two test metrics (Ruoss et",
        "al.'s score, per-token accuracy averaged over the test lengths 41-200, each length alike; and exact match):",
        "8 comparisons, Holm-adjusted together; a comparison is tested only if both of its cells reached the gate in",
        "at least 3 paired seeds. Both tasks' real-position cells train first (~0.1 core-hour a run on reverse_string), then",
        "the randomized ones, so that a comparison whose real cell misses the gate is known before its randomized cell is paid for.",
        "Run: scripts/campaign.sh start (add it to configs/campaign.list), then relpos report results/ruoss_followup_tasks.",
    ]
    out = {
        "name": "ruoss_followup_tasks",
        "description": f"Ruoss et al. protocol, duplicate_string and missing_duplicate, per-token gate: randomized {names} against their real positions, 5 seeds",
    }
    for k in ("seed", "threads", "run_store"):
        out[k] = config[k]
    out["data"] = dict(config["data"])
    out["data"]["task"] = TASKS[0]
    for k in ("model", "train", "eval"):
        out[k] = config[k]
    out["sweep"] = {"cells": cells, "seeds": config["sweep"]["seeds"]}
    contrasts = []
    for task in TASKS:
        for t in chosen:
            pair = {("randomized" if "randomized" in c["model.position"] else "real"): c for c in family
                    if c["model.position"]["type"] == t}
            contrasts.append([f"{task} · {flow(pair['randomized']['model.position'])}",
                              f"{task} · {flow(pair['real']['model.position'])}"])
    out["report"] = {
        "title": f"Ruoss et al. protocol (encoder-only, train 1-40, test 41-200), per-token gate: randomized {names} against their real positions on two more tasks",
        "rows": "data.task+model.position",
        "bootstrap": 0,
        "metrics": config["report"]["metrics"],
        "contrasts": contrasts,
        "plots": ["metric_vs_length"],
    }
    body = yaml.dump(out, Dumper=_Plain, sort_keys=False, width=120, allow_unicode=True, default_flow_style=None)
    return "\n".join("# " + h for h in header) + "\n" + body


def self_test():
    cells = [{"model.position": {"type": "rope"}, "train.lr": 0.25},
             {"model.position": {"type": "rope", "randomized": 1024}, "train.lr": 0.25},
             {"model.position": {"type": "alibi"}, "train.lr": 0.25},
             {"model.position": {"type": "alibi", "randomized": 1024}, "train.lr": 0.25},
             {"model.position": {"type": "txl"}, "train.lr": 0.5},
             {"model.position": {"type": "txl", "randomized": 1024}, "train.lr": 0.5}]

    def report(diffs, gates, scores):
        rep = {"runs": 30, "contrasts": [], "cells": []}
        for t in ("rope", "alibi", "txl"):
            rand, real = flow({"type": t, "randomized": 1024}), flow({"type": t})
            d = diffs.get(t)
            rep["contrasts"].append({"row": rand, "minus": real, "metric": SCORE, "mean": d, "n": 3 if d is not None else 2,
                                     "verdict": "holds" if d is not None else None})
            rep["cells"].append({"row": rand, "metric": SCORE, "competent": {"reached": gates[t], "mean": scores[t]}})
        return rep

    # two tested: the largest absolute differences win, a negative one included
    chosen, _ = choose(report({"rope": 20.0, "alibi": -25.0, "txl": 5.0}, {"rope": 3, "alibi": 3, "txl": 5},
                              {"rope": 70, "alibi": 40, "txl": 80}), cells)
    assert chosen == ["alibi", "rope"], chosen
    # one tested: the other by the most randomized seeds at the gate, ties by the mean score
    chosen, _ = choose(report({"rope": 1.0}, {"rope": 3, "alibi": 2, "txl": 2}, {"rope": 70, "alibi": 60, "txl": 65}), cells)
    assert chosen == ["rope", "txl"], chosen
    chosen, _ = choose(report({}, {"rope": 0, "alibi": 2, "txl": 1}, {"rope": None, "alibi": 60, "txl": 65}), cells)
    assert chosen == ["alibi", "txl"], chosen
    config = {"seed": 1, "threads": 1, "run_store": "results/ruoss/runs", "data": {"task": "reverse"}, "model": {},
              "train": {}, "eval": {}, "sweep": {"cells": cells, "seeds": [1, 2, 3, 4, 5]},
              "report": {"metrics": [SCORE]}}
    assert family_complete({"runs": 29}, config)[0] is False and family_complete({"runs": 30}, config)[0] is True

    def counted(cells_counts):  # {type: ((real at gate, real runs), (randomized at gate, randomized runs))}
        rep = {"cells": []}
        for t, ((a, b), (c, d)) in cells_counts.items():
            rep["cells"].append({"row": flow({"type": t}), "metric": SCORE, "competent": {"reached": a, "runs": b}})
            rep["cells"].append({"row": flow({"type": t, "randomized": 1024}), "metric": SCORE,
                                 "competent": {"reached": c, "runs": d}})
            if min(a, c) >= 3:
                rep.setdefault("contrasts", []).append({"row": flow({"type": t, "randomized": 1024}), "minus": flow({"type": t}),
                                                        "metric": SCORE, "mean": 1.0, "n": min(a, c), "verdict": "waits for the family"})
        return rep
    done = {"rope": ((5, 5), (3, 5)), "alibi": ((5, 5), (5, 5))}
    # txl's randomized cell: 0 of 2 finished at the gate, 3 to come: it may still make 3 paired seeds
    assert settled(counted(dict(done, txl=((5, 5), (0, 2)))), config)[0] is False
    # one more below the gate: at most 2 paired, it can no longer be tested, and two comparisons are final
    ok, why = settled(counted(dict(done, txl=((5, 5), (0, 3)))), config)
    assert ok and "Transformer-XL" in why, why
    # the real cell bounds it too: 2 real runs at the gate, however the randomized ones end
    assert settled(counted(dict(done, txl=((2, 5), (1, 2)))), config)[0] is True
    # a comparison that is not final (its randomized cell unfinished) leaves fewer than two final
    assert settled(counted({"rope": ((5, 5), (3, 4)), "alibi": ((5, 5), (5, 5)), "txl": ((1, 5), (0, 0))}), config)[0] is False
    text = build_config(config, ["alibi", "rope"], ["x"], "abc", "2026-01-01")
    out = yaml.safe_load(text)
    kept = [(c["data.task"], c["model.position"]) for c in out["sweep"]["cells"]]
    real = [{"type": "alibi"}, {"type": "rope"}]
    rand = [{"type": "alibi", "randomized": 1024}, {"type": "rope", "randomized": 1024}]
    assert kept == [(t, p) for group in (real, rand) for t in TASKS for p in group], kept
    assert out["report"]["contrasts"][0] == ["duplicate_string · {type: alibi, randomized: 1024}",
                                             "duplicate_string · {type: alibi}"], out["report"]["contrasts"][0]
    assert len(out["report"]["contrasts"]) == 4 and all(c["train.lr"] == 0.25 for c in out["sweep"]["cells"])
    print("ruoss_followup: self-test passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preview", action="store_true", help="print the choice and the config; write nothing")
    ap.add_argument("--self-test", action="store_true", help="check the rule on made-up reports")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    with open(FAMILY_CONFIG) as f:
        config = yaml.safe_load(f)
    with open(FAMILY_REPORT) as f:
        report = json.load(f)
    chosen, lines = choose(report, config["sweep"]["cells"])
    complete, have, want = family_complete(report, config)
    early, why = (True, "") if complete else settled(report, config)
    commit = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], capture_output=True, text=True).stdout.strip()
    when = ("every run of that family finished" if complete else
            f"{have} of its {want} runs finished, the choice settled: {why}" if early else
            f"{have} of its {want} runs finished (a preview: {why})")
    text = build_config(config, chosen, lines, commit or "(no commit)", datetime.date.today().isoformat(), when)
    if a.preview:
        state = "complete" if complete else "the choice settled" if early else f"the choice may still change: {why}"
        print(f"# PREVIEW: {have} of the family's {want} runs finished; {state}\n" + text, end="")
        return 0
    if not early:
        sys.exit(f"ruoss_followup: {FAMILY_REPORT} reports {have} of the family's {want} runs and {why}; the choice is "
                 "made once it can no longer change (--preview shows the current one)")
    with open(OUT, "w") as f:
        f.write(text)
    print(f"ruoss_followup: wrote {OUT} ({' and '.join(chosen)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Trains the first updates of a finished run again with this checkout's relpos and compares them with the
run's own metrics.jsonl, line for line: evidence that the committed code still computes what a run computed
(e.g. a run whose results.json records a commit with uncommitted changes, `+dirty`).

    scripts/replay_prefix.py CONFIG RUN_ID [--steps N] [--out FILE] [--relpos BIN] [--kernels K] [-- OVERRIDES ...]
    scripts/replay_prefix.py configs/lm_converged/study.yaml 'position=type-rope_seed=4' --steps 200 \\
        --out results/lm_converged/replay/position=type-rope_seed=4.json -- data.lm.max_eval_tokens=2048

The replay is `relpos run CONFIG --only RUN_ID train.max_steps=N threads=T run_store=TMP/runs
results_dir=TMP OVERRIDES` in a scratch directory (OVERRIDES: evaluation settings that make its closing
evaluation cheap; they must not touch training), with T the run's threads (results.json) and OpenBLAS's kernel
family the one the run's first segment trained with (its log.txt: "model: ...; OpenBLAS kernels X; relpos C",
one line per start or resume; other kernels round differently). N is at most the update at which that segment
ended: later segments resumed from checkpoints a clone does not have. Every key of every training line of
metrics.jsonl (train_loss, lr, grad_norm, tokens, epoch) up to N is compared as written, all but the
wall-clock `elapsed`. The experiment's cached subword models (RESULTS_DIR/NAME/subword) are copied into the
scratch directory when they exist, so that the replay does not train them again.

Writes a JSON record (the run, its segments, the replay's commit, machine and kernels, how many lines match,
the first that does not) to --out or stdout. `--kernels K` replays on kernel family K instead (Haswell,
SkylakeX, Cooperlake, ...): which kernels trained a first segment whose log does not name them is the family
whose replay is identical, since two families part within a few updates. Exit status: 0 every compared line identical, 1 a line differs,
2 the replay could not be made (bad arguments, relpos failed, kernels this CPU cannot run).
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# "model: N parameters; T thread(s)[; MACHINE, OpenBLAS kernels K; relpos C]": logs written before 2026-11-27
# name no machine, kernels or commit
SEGMENT_RE = re.compile(r"^\[(?P<time>[^\]]+)\] model: [^;]*; (?P<threads>\d+) threads?"
                        r"(?:; (?P<machine>.*), OpenBLAS kernels (?P<kernels>[A-Za-z0-9_]+); relpos (?P<commit>\S+))?\s*$")
RESUME_RE = re.compile(r"^\[[^\]]+\] resuming from step (\d+)")
INTERRUPT_RE = re.compile(r"^\[[^\]]+\] interrupted at step (\d+)")


def fail(msg):
    print(f"replay_prefix: {msg}", file=sys.stderr)
    sys.exit(2)


def segments(log_path):
    """The run's training segments from its log.txt: start step, end step (None: it ran to the end), kernels,
    commit, machine, threads."""
    out = []
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            m = SEGMENT_RE.match(line.rstrip("\n"))
            if m:
                out.append({"start": 0, "end": None, "kernels": m["kernels"], "commit": m["commit"],
                            "machine": m["machine"], "threads": int(m["threads"]), "time": m["time"]})
                continue
            if not out:
                continue
            m = RESUME_RE.match(line)
            if m:
                out[-1]["start"] = int(m.group(1))
            m = INTERRUPT_RE.match(line)
            if m:
                out[-1]["end"] = int(m.group(1))
    return out


def training_lines(path, upto):
    lines = {}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            raw = raw.strip()
            if not raw:
                continue
            d = json.loads(raw)
            if "train_loss" in d and d.get("step", 0) <= upto:
                lines[d["step"]] = d
    return lines


def top_key(config, key):
    with open(config, encoding="utf-8") as f:
        for line in f:
            m = re.match(rf"^{key}:\s*(.*?)\s*(#.*)?$", line)
            if m:
                return m.group(1).strip("\"'")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("run_id")
    ap.add_argument("--steps", type=int, default=200, help="updates to replay (at most the first segment's)")
    ap.add_argument("--out", help="write the JSON record here (default: stdout)")
    ap.add_argument("--relpos", default=os.path.join(ROOT, "build", "relpos"))
    ap.add_argument("--kernels", help="OpenBLAS kernel family to replay on (default: the first segment's)")
    argv = sys.argv[1:]
    overrides = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    a.overrides = overrides  # after --: overrides for the replay's closing evaluation
    if a.steps < 1:
        fail(f"--steps {a.steps}: give at least 1")
    if not os.access(a.relpos, os.X_OK):
        fail(f"{a.relpos}: no relpos binary there (cmake --build build --target relpos, or --relpos BIN)")
    listed = subprocess.run([a.relpos, "run", a.config, "--list", "--only", a.run_id], capture_output=True, text=True)
    if listed.returncode != 0:
        fail(listed.stderr.strip() or listed.stdout.strip())
    rows = [l for l in listed.stdout.splitlines() if l.split() and l.split()[0] == a.run_id]
    if len(rows) != 1:
        fail(f"{a.run_id}: not one point of {a.config} (--only is a pattern: give one run's id)")
    m = re.search(r" -> (\S+)", rows[0])
    run_dir = m.group(1) if m else os.path.join(top_key(a.config, "results_dir") or "results",
                                                   top_key(a.config, "name") or "", "runs", a.run_id)
    for f in ("results.json", "metrics.jsonl", "log.txt"):
        if not os.path.isfile(os.path.join(run_dir, f)):
            fail(f"{run_dir}: no {f} (a finished run has its results.json, metrics.jsonl and log.txt)")
    with open(os.path.join(run_dir, "results.json"), encoding="utf-8") as f:
        record = json.load(f)
    segs = segments(os.path.join(run_dir, "log.txt"))
    if not segs:
        fail(f"{run_dir}/log.txt: no 'model: ...' line (a run's every start and resume writes one)")
    # the segment that made the first updates: the last one that started from update 0
    first = [s for s in segs if s["start"] == 0][-1]
    kernels_from = "log.txt"
    if not first["kernels"]:  # an older log: the kernels of results.json's machine, where the run finished
        m = re.search(r"OpenBLAS kernels ([A-Za-z0-9_]+)", record.get("machine", ""))
        if not m:
            fail(f"{run_dir}: neither log.txt nor results.json's machine names the OpenBLAS kernels")
        first = dict(first, kernels=m.group(1), machine=record["machine"].split(", OpenBLAS")[0])
        kernels_from = "results.json machine (log.txt of this run does not name them: an older log)"
    if a.kernels:
        first = dict(first, kernels=a.kernels)
        kernels_from = "--kernels"
    steps = a.steps if first["end"] is None else min(a.steps, first["end"])
    threads = int(record.get("threads") or first["threads"])

    tmp = tempfile.mkdtemp(prefix="relpos-replay-")
    try:
        name = top_key(a.config, "name") or "replay"
        cache = os.path.join(top_key(a.config, "results_dir") or "results", name, "subword")
        if os.path.isdir(cache):
            shutil.copytree(cache, os.path.join(tmp, name, "subword"))
        env = dict(os.environ, OPENBLAS_CORETYPE=first["kernels"])
        cmd = [a.relpos, "run", a.config, "--only", a.run_id, "-q", f"train.max_steps={steps}", f"threads={threads}",
               f"run_store={tmp}/runs", f"results_dir={tmp}"] + a.overrides
        print(f"replay_prefix: {a.run_id}: {steps} updates with {first['kernels']} kernels, {threads} thread(s) "
              f"(the run's first segment: relpos {first['commit']}, {first['machine']})", file=sys.stderr)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"relpos run failed ({done.returncode}): {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
        log = done.stdout + done.stderr
        got = re.search(r"OpenBLAS kernels ([A-Za-z0-9_]+); relpos (\S+)", log)
        if not got or got.group(1).lower() != first["kernels"].lower():
            fail(f"the replay ran with {got.group(1) if got else 'unknown'} kernels, not the run's {first['kernels']} "
                 f"(this CPU cannot run them?)")
        replay_runs = [os.path.join(tmp, "runs", d) for d in os.listdir(os.path.join(tmp, "runs"))]
        if len(replay_runs) != 1:
            fail(f"expected one replayed run in {tmp}/runs, found {len(replay_runs)}")
        new = training_lines(os.path.join(replay_runs[0], "metrics.jsonl"), steps)
        old = training_lines(os.path.join(run_dir, "metrics.jsonl"), steps)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    identical, first_difference = 0, None
    for step in sorted(set(new) | set(old)):
        n, o = new.get(step), old.get(step)
        keys = sorted((set(n or {}) | set(o or {})) - {"elapsed"})
        bad = [k for k in keys if (n or {}).get(k) != (o or {}).get(k)]
        if not bad:
            identical += 1
        elif first_difference is None:
            first_difference = {"step": step, "key": bad[0], "run": (o or {}).get(bad[0]), "replay": (n or {}).get(bad[0])}
    out = {
        "run": a.run_id, "run_dir": run_dir, "config": a.config,
        "command": "scripts/replay_prefix.py " + " ".join([a.config, a.run_id, "--steps", str(a.steps)] +
                                                          (["--kernels", a.kernels] if a.kernels else []) +
                                                          (["--"] + a.overrides if a.overrides else [])),
        "run_commit": record.get("commit"), "segments": segs,
        "replayed_steps": steps, "training_lines": len(old), "identical": identical,
        "first_difference": first_difference,
        "replay_commit": got.group(2), "replay_kernels": got.group(1), "kernels_from": kernels_from, "threads": threads,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    text = json.dumps(out, indent=1) + "\n"
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    same = first_difference is None and identical == len(old) and len(new) == len(old) and len(old) > 0
    print(f"replay_prefix: {a.run_id}: {identical} of {len(old)} training lines up to update {steps} identical"
          + ("" if same else f"; first difference: {first_difference}"), file=sys.stderr)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

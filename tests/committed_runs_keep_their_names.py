#!/usr/bin/env python3
"""Every committed run is still its config's run: for each config under configs/ whose results directory holds
runs, `relpos run CONFIG --list` must list every committed run (results/<name>/runs/<run>/results.json) as
finished, and a run linked into a run store must be listed at the store path its link names.

A run is matched to its config by the config hash (experiments/run/identity.hpp). An option or key added to
relpos without `omit_from_run_name_at` at the value older runs computed changes that hash, and every finished
run of the configs that use it would train again, unnoticed until a campaign reached it. This test names
each such run.

Usage: tests/committed_runs_keep_their_names.py BUILD/relpos [CONFIG ...]   (default: every configs/**/*.yaml;
~20 s; run from anywhere, paths are the repository's)
       tests/committed_runs_keep_their_names.py BUILD/relpos --self-test   (a copy of configs/converged/table2.yaml
with one training value changed must fail for every one of its committed runs)
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MISSING_DATA_RE = re.compile(r"data\.dir: directory '([^']+)' does not exist")
_mirror = None  # the stand-in working directory, made once when a data set is not installed


def mirror_with(missing):
    """A working directory that is the repository (every entry a link to it, data/ copied as links) plus the
    empty directory MISSING: what --list reads of a data set that is not installed here is only that it exists
    (CI installs no Brown corpus), and the run names do not depend on its files."""
    global _mirror
    if _mirror is None:
        _mirror = tempfile.mkdtemp(prefix="relpos-names-")
        for e in os.listdir(ROOT):
            if e != "data":
                os.symlink(os.path.join(ROOT, e), os.path.join(_mirror, e))
        if os.path.isdir(os.path.join(ROOT, "data")):
            shutil.copytree(os.path.join(ROOT, "data"), os.path.join(_mirror, "data"), symlinks=True,
                            copy_function=os.symlink)
    os.makedirs(os.path.join(_mirror, missing), exist_ok=True)
    return _mirror


def list_runs(relpos, rel):
    """`relpos run REL --list` in the repository, or in its mirror when a data set is missing."""
    cwd = ROOT
    for _ in range(4):  # a config names at most a few data directories
        out = subprocess.run([relpos, "run", rel, "--list"], cwd=cwd, capture_output=True, text=True)
        m = MISSING_DATA_RE.search(out.stderr or "")
        if out.returncode == 0 or not m or os.path.isabs(m.group(1)):
            return out
        cwd = mirror_with(m.group(1))
    return out


LINE_RE = re.compile(r"^(\S+)\s.*?(?:\s->\s(\S+))?(?:\s+\[(\w+)[^\]]*\])?$")  # NAME OVERRIDES [-> STORE PATH] [[STATE...]]


def top_level(text, key, default=None):
    m = re.search(rf"^{key}:\s*\"?([^\s\"#]+)", text, re.M)
    return m.group(1) if m else default


def check(relpos, config):
    """The problems of one config, as sentences; (problems, committed runs checked)."""
    with open(config, encoding="utf-8") as f:
        text = f.read()
    name = top_level(text, "name")
    results = top_level(text, "results_dir", "results")
    runs_dir = os.path.join(ROOT, results, name or "", "runs")
    if not name or not os.path.isdir(runs_dir):
        return [], 0
    committed = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(runs_dir, "*", "results.json")))
    if not committed:
        return [], 0
    rel = os.path.relpath(config, ROOT)
    out = list_runs(relpos, config if rel.startswith("..") else rel)
    if out.returncode != 0:
        return [f"{rel}: `relpos run {rel} --list` failed: {(out.stderr or out.stdout).strip().splitlines()[-1:]}"], 0
    listed = {}
    for line in out.stdout.splitlines():
        m = LINE_RE.match(line)
        if m:
            listed[m.group(1)] = (m.group(2), m.group(3) or "not started")
    problems = []
    for run in committed:
        where = os.path.join(runs_dir, run)
        if run not in listed:
            problems.append(f"{rel}: committed run {run} is not a point of the config any more")
            continue
        path, state = listed[run]
        if state != "finished":
            problems.append(f"{rel}: committed run {run} is listed as '{state}', not finished: its config hash changed"
                            + (f" (the config names {path})" if path else ""))
        elif os.path.islink(where) and path:
            target = os.path.normpath(os.path.join(os.path.dirname(where), os.readlink(where)))
            if os.path.normpath(os.path.join(ROOT, path)) != target:
                problems.append(f"{rel}: committed run {run} links to {os.path.relpath(target, ROOT)}, but the config "
                                f"names {path}")
    return problems, len(committed)


def self_test(relpos):
    """A config whose hash changed (label smoothing 0.1 -> 0.11, the run names unchanged) matches none of its runs."""
    src = os.path.join(ROOT, "configs", "converged", "table2.yaml")
    with open(src, encoding="utf-8") as f:
        text = f.read()
    changed = re.sub(r"label_smoothing: 0\.1\b", "label_smoothing: 0.11", text, count=1)
    assert changed != text, "configs/converged/table2.yaml has no 'label_smoothing: 0.1' to change"
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(changed)
    try:
        problems, n = check(relpos, f.name)
    finally:
        os.unlink(f.name)
    ok = n > 0 and len(problems) == n and all("not finished" in p for p in problems)
    print(f"self-test: {len(problems)} of {n} committed runs reported for a changed hash" + ("" if ok else " (FAILED)"))
    return 0 if ok else 1


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        return 2
    relpos = os.path.abspath(sys.argv[1])
    if sys.argv[2:] == ["--self-test"]:
        return self_test(relpos)
    configs = sys.argv[2:] or sorted(glob.glob(os.path.join(ROOT, "configs", "**", "*.yaml"), recursive=True))
    problems, checked, configs_with_runs = [], 0, 0
    for c in configs:
        p, n = check(relpos, os.path.abspath(c))
        problems += p
        checked += n
        configs_with_runs += n > 0
    if _mirror:
        shutil.rmtree(_mirror, ignore_errors=True)
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    print(f"committed runs: {checked} in {configs_with_runs} configs checked, {len(problems)} not matched")
    if checked == 0:
        print("FAIL: no committed run found (wrong repository root?)", file=sys.stderr)
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

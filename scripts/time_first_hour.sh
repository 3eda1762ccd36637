#!/usr/bin/env bash
# What the README's "How long they take" says, measured: a fresh clone of HEAD in a temporary directory,
# `make run` (builds relpos, trains configs/quickstart.yaml, prints its table) and then `make test` (builds
# the suite and runs it), each timed, written as one JSON record with the machine, the commit, the date and
# the load average when it started (a campaign training beside it slows both; say so, or pause it).
#   scripts/time_first_hour.sh bench/results/first-hour-$(date -u +%F)-<machine>.json
#   scripts/paused.sh scripts/time_first_hour.sh FILE     # with a campaign's trainers paused
# The Debian packages must be installed already (scripts/install-deps.sh): apt's download time depends on the
# network, not on relpos, and is not in the figures.
set -euo pipefail
out=${1:?usage: scripts/time_first_hour.sh OUT.json}
cd "$(dirname "$0")/.."
root=$(pwd)
commit=$(git rev-parse --short=12 HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || echo "time_first_hour: the working tree has changes; the clone measures HEAD ($commit) without them" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load=$(cut -d' ' -f1-3 /proc/loadavg)
git clone -q "$root" "$tmp/relpos"
timed() {  # name command...: wall, user and system seconds of the command into $tmp/<name>.time, its output into .log
  local name=$1; shift
  echo "time_first_hour: $name ..." >&2
  ( cd "$tmp/relpos" && /usr/bin/time -f "%e %U %S" -o "$tmp/$name.time" "$@" > "$tmp/$name.log" 2>&1 ) ||
    { tail -n 20 "$tmp/$name.log" >&2; echo "time_first_hour: $name failed (above)" >&2; exit 1; }
}
timed make_run make run
timed make_test make test
python3 - "$out" "$tmp" "$commit" "$load" <<'PY'
import datetime, json, os, platform, re, subprocess, sys
out, tmp, commit, load = sys.argv[1:5]
def times(name):
    wall, user, sys_ = (float(x) for x in open(os.path.join(tmp, name + ".time")).read().split()[-3:])
    return {"wall_seconds": wall, "cpu_seconds": round(user + sys_, 1)}
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
test_log = open(os.path.join(tmp, "make_test.log")).read()
suite = re.search(r"Total Test time \(real\) =\s*([\d.]+) sec", test_log)
passed = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", test_log)
record = {
    "command": "scripts/time_first_hour.sh " + out,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "commit": commit,
    "machine": f"{cpu}, {os.cpu_count()} cores",
    "load_average_at_start": load,
    # scripts/paused.sh sets it: training processes stopped for the measurement (the load average still counts
    # them for a minute or more); absent when nothing was paused
    "paused_relpos_runs": os.environ.get("RELPOS_PAUSED_RUNS", "").split(),
    "make_run": times("make_run"),
    "make_test": dict(times("make_test"), suite_seconds=float(suite.group(1)) if suite else None,
                      tests=int(passed.group(3)) if passed else None, failed=int(passed.group(2)) if passed else None),
}
os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
with open(out, "w") as f:
    json.dump(record, f, indent=1)
    f.write("\n")
print(json.dumps(record, indent=1))
PY

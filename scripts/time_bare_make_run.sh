#!/usr/bin/env bash
# `make run` on a bare Debian machine, package installs included, timed: a minimal Debian bookworm
# (debootstrap --variant=minbase, plus git and make, which a user needs to clone and to type `make run`) in a
# chroot, a fresh clone of HEAD in it, apt's package lists and downloaded archives emptied, then `make run`
# (scripts/install-deps.sh installs what is missing, the relpos binary is built, configs/quickstart.yaml
# trains and its table prints). Writes one JSON record: wall seconds of the whole command and of its three
# phases (package installs, build, quickstart runs and report), the machine, the commit, the date, the mirror.
#   sudo scripts/time_bare_make_run.sh bench/results/bare-make-run-$(date -u +%F)-<machine>.json [CHROOT_DIR]
#   sudo scripts/paused.sh scripts/time_bare_make_run.sh FILE      # with a campaign's trainers paused
# Needs root, debootstrap and the network (the Debian mirror of /etc/apt; MIRROR=... to choose). CHROOT_DIR
# (default /var/tmp/relpos-bare-bookworm) keeps the bare system made once (CHROOT_DIR/pristine: debootstrap, git,
# make) and copies it anew to CHROOT_DIR/work for every measurement, so nothing a previous one installed is
# there. The download speed of the mirror is part of the figure: say which.
set -euo pipefail
out=${1:?usage: scripts/time_bare_make_run.sh OUT.json [CHROOT_DIR]}
C=${2:-/var/tmp/relpos-bare-bookworm}
cd "$(dirname "$0")/.."
root=$(pwd)
[ "$(id -u)" -eq 0 ] || { echo "time_bare_make_run: needs root (chroot, debootstrap)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "time_bare_make_run: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
MIRROR=${MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
commit=$(git rev-parse --short=12 HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || echo "time_bare_make_run: the working tree has changes; the clone measures HEAD ($commit) without them" >&2
P=$C/pristine
W=$C/work
mounts() {  # mounts DIR: proc, dev and dev/pts of the host inside DIR
  mountpoint -q "$1/proc" || mount -t proc proc "$1/proc"
  mountpoint -q "$1/dev" || mount --bind /dev "$1/dev"
  mountpoint -q "$1/dev/pts" || mount --bind /dev/pts "$1/dev/pts"
  cp /etc/resolv.conf "$1/etc/resolv.conf"
}
unmounts() { for d in "$@"; do umount "$d/dev/pts" "$d/dev" "$d/proc" 2>/dev/null || true; done; }
trap 'unmounts "$P" "$W"' EXIT
if [ ! -x "$P/usr/bin/git" ]; then
  echo "time_bare_make_run: debootstrap of bookworm (minbase) into $P, then git and make ..." >&2
  rm -rf "$P"
  debootstrap --variant=minbase bookworm "$P" "$MIRROR" >/dev/null
  mounts "$P"
  chroot "$P" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git make ca-certificates >/dev/null && apt-get clean && rm -rf /var/lib/apt/lists/*"
  unmounts "$P"
fi
unmounts "$W"
rm -rf "$W"
cp -a "$P" "$W"
C=$W
mounts "$C"
git clone -q "$root" "$C/root/relpos"
chroot "$C" bash -c "apt-get clean; rm -rf /var/lib/apt/lists/*"
load=$(cut -d' ' -f1-3 /proc/loadavg)
log=$(mktemp)
# every output line stamped with milliseconds since the start
chroot "$C" bash -c 'cd /root/relpos && s=$(date +%s%N); make run 2>&1 | while IFS= read -r l; do printf "%d %s\n" $((($(date +%s%N) - s) / 1000000)) "$l"; done; printf "%d END %s\n" $((($(date +%s%N) - s) / 1000000)) "${PIPESTATUS[0]}"' > "$log"
python3 - "$out" "$log" "$commit" "$load" "$MIRROR" <<'PY'
import datetime, json, os, platform, sys
out, log, commit, load, mirror = sys.argv[1:6]
lines = [l.rstrip("\n").split(" ", 1) for l in open(log)]
def first(pred):
    return next((int(t) / 1000 for t, *rest in lines if rest and pred(rest[0])), None)
end = first(lambda s: s.startswith("END "))
status = next(rest[0].split()[1] for t, *rest in lines if rest and rest[0].startswith("END "))
if status != "0":
    sys.exit(f"time_bare_make_run: make run failed (exit {status}); its output: {log}")
installed = first(lambda s: s.startswith("relpos: packages installed.")) or 0.0
run_start = first(lambda s: s.startswith("build/relpos run "))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
record = {
    "command": "scripts/time_bare_make_run.sh " + out,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "commit": commit,
    "machine": f"{cpu}, {os.cpu_count()} cores",
    "system": "Debian bookworm, debootstrap --variant=minbase with git and make, in a chroot",
    "mirror": mirror,
    "load_average_at_start": load,
    "paused_relpos_runs": os.environ.get("RELPOS_PAUSED_RUNS", "").split(),
    "make_run_wall_seconds": round(end, 1),
    "phases_wall_seconds": {
        "package_installs": round(installed, 1),
        "build": round(run_start - installed, 1),
        "quickstart_runs_and_report": round(end - run_start, 1),
    },
}
with open(out, "w") as f:
    json.dump(record, f, indent=1)
    f.write("\n")
print(json.dumps(record, indent=1))
PY
rm -f "$log"

#!/usr/bin/env bash
# Re-renders every study's report with the current relpos: `relpos report results/<study>` for every
# results/<study>/ that has an experiment.yaml (report.md, report.csv, report.json and the plots; no run is
# trained or changed), then says which report.json files changed and how their verdicts moved: per study
# the Holm family's size (m) and how many comparisons hold, before -> after, and each comparison whose
# verdict changed (holds, not shown, or no verdict and why), under the seed-paired t-test and the paired
# bootstrap.
#
#   scripts/regenerate_reports.sh                 # every study that has a report.json, with build/relpos
#   scripts/regenerate_reports.sh --all           # also the studies without one (run stores such as
#                                                 # results/lm_converged, whose tables another study shows)
#   RELPOS=build-x/relpos scripts/regenerate_reports.sh results/lm results/ruoss   # some studies, another binary
#
# Run from anywhere inside the checkout; the studies are read from its root (report.compare paths start
# there). Exit status 1 when a study's report failed (the others are still rendered; its files are left as
# they were, as `relpos report` writes all or nothing).
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
RELPOS=${RELPOS:-build/relpos}
case "$RELPOS" in /*) ;; */*) RELPOS="$root/$RELPOS" ;; esac
if [ ! -x "$RELPOS" ] && ! command -v "$RELPOS" >/dev/null 2>&1; then
  echo "regenerate_reports: no relpos binary at $RELPOS (build it, or set RELPOS=path)" >&2
  exit 2
fi

all=0
if [ "${1:-}" = --all ]; then all=1; shift; fi
studies=()
skipped=()
if [ $# -gt 0 ]; then
  for d in "$@"; do studies+=("${d%/}"); done
else
  for d in results/*/; do
    d=${d%/}
    [ -f "$d/experiment.yaml" ] || continue
    if [ -f "$d/report.json" ] || [ $all = 1 ]; then studies+=("$d"); else skipped+=("$d"); fi
  done
fi
if [ ${#skipped[@]} -gt 0 ]; then
  echo "skipped (an experiment.yaml but no report.json; --all renders them too): ${skipped[*]}"
fi

before=$(mktemp -d)
trap 'rm -rf "$before"' EXIT
failed=()
for d in "${studies[@]}"; do
  mkdir -p "$before/$d"
  [ -f "$d/report.json" ] && cp "$d/report.json" "$before/$d/report.json"
  if "$RELPOS" report "$d" > "$before/$d/log" 2>&1; then
    echo "rendered: $d"
  else
    echo "FAILED:   $d (relpos report exit $?; its files are as they were):" >&2
    tail -n 5 "$before/$d/log" | sed 's/^/    /' >&2
    failed+=("$d")
  fi
done

python3 - "$before" "${studies[@]}" <<'EOF'
import json, os, sys

before_dir, studies = sys.argv[1], sys.argv[2:]

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def verdicts(doc, test):
    """(row, minus, metric) -> 'holds' / 'not shown' / 'no verdict (why)' for one test ('t' or 'bootstrap')."""
    out = {}
    if not doc:
        return out
    for c in doc.get(f"family_{test}", []):
        out[(c["row"], c["minus"], c["metric"])] = "holds" if c.get("holds") else "not shown"
    for c in doc.get(f"no_verdict_{test}", []):
        out[(c["row"], c["minus"], c["metric"])] = f"no verdict ({c.get('no_verdict', '?')})"
    return out

def family(doc, test):
    fam = (doc or {}).get(f"family_{test}", [])
    return len(fam), sum(1 for c in fam if c.get("holds"))

changed_files, new_files, rows, moves_total = [], [], [], {}
for study in studies:
    old = load(os.path.join(before_dir, study, "report.json"))
    path = os.path.join(study, "report.json")
    new = load(path)
    new_bytes = open(path, "rb").read() if os.path.exists(path) else b""
    old_path = os.path.join(before_dir, study, "report.json")
    old_bytes = open(old_path, "rb").read() if os.path.exists(old_path) else b""
    if not old_bytes and new_bytes:
        new_files.append(path)
    elif new_bytes != old_bytes:
        changed_files.append(path)
    for test in ("t", "bootstrap"):
        (m0, h0), (m1, h1) = family(old, test), family(new, test)
        vo, vn = verdicts(old, test), verdicts(new, test)
        moves = {}
        for key in sorted(set(vo) | set(vn)):
            a, b = vo.get(key, "absent"), vn.get(key, "absent")
            if a != b:
                moves.setdefault(f"{a} -> {b}", []).append(key)
                if old is not None:
                    moves_total[(test, f"{a} -> {b}")] = moves_total.get((test, f"{a} -> {b}"), 0) + 1
        if m0 or m1 or moves:
            rows.append((study, test, m0, m1, h0, h1, moves, old is None))

print()
print(f"report.json changed: {len(changed_files)} of {len(studies)}")
for p in changed_files:
    print(f"  {p}")
if new_files:
    print(f"report.json new (none before): {len(new_files)}")
    for p in new_files:
        print(f"  {p}")
print()
print("| study | test | family size (m) before -> after | holds before -> after | verdicts changed |")
print("|---|---|---|---|---|")
for study, test, m0, m1, h0, h1, moves, new in rows:
    n = sum(len(v) for v in moves.values())
    print(f"| {study}{' (new report)' if new else ''} | {test} | {m0} -> {m1} | {h0} -> {h1} | {n} |")
print()
print("Verdict changes by kind (studies that had a report.json):")
for (test, kind), n in sorted(moves_total.items()):
    print(f"  {test}: {kind}: {n}")
print()
print("Each test-split comparison whose verdict moved between holds and not shown, or that lost its verdict")
print("(validation-split comparisons, which all leave the families, are counted above only):")
for study, test, m0, m1, h0, h1, moves, new in rows:
    for kind, keys in moves.items():
        if new or kind.startswith("absent") or "validation split" in kind:
            continue
        if kind in ("holds -> not shown", "not shown -> holds") or "no verdict" in kind or kind.endswith("absent"):
            for row, minus, metric in keys:
                print(f"  {study} [{test}] {row} − {minus} on {metric}: {kind}")
EOF

if git rev-parse --git-dir >/dev/null 2>&1; then
  echo
  echo "Files under results/ that differ from the last commit now (report.md, report.csv, plots included; \`git status -- results/\`): $(git status --porcelain -- "${studies[@]}" | wc -l)"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "regenerate_reports: ${#failed[@]} report(s) failed: ${failed[*]}" >&2
  exit 1
fi

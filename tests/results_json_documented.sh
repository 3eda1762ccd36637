#!/usr/bin/env bash
# Every top-level key of the committed runs' results.json files is
# in docs/studies.md's table "A finished run's results.json": a key the runner starts writing fails this until
# it is documented. (< 1 s)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import glob, json, re, sys
doc = open("docs/studies.md", encoding="utf-8").read()
start = doc.index("## A finished run's results.json")
table = doc[start:doc.index("\n## ", start + 1)]
documented = set(re.findall(r"`([a-z_]+)`", "\n".join(l for l in table.splitlines() if l.startswith("| `"))))
keys = {}
for f in glob.glob("results/**/results.json", recursive=True):
    try:
        j = json.load(open(f, encoding="utf-8"))
    except ValueError:
        continue
    for k in j:
        keys.setdefault(k, f)
missing = sorted(k for k in keys if k not in documented)
if len(keys) < 15:
    sys.exit(f"FAIL: only {len(keys)} distinct keys in the committed results.json files: is results/ there?")
if missing:
    sys.exit("FAIL: results.json keys not in docs/studies.md's table: " +
             ", ".join(f"{k} (e.g. {keys[k]})" for k in missing))
print(f"results.json keys documented: {len(keys)} of {len(keys)}")
PY

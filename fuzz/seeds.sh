#!/usr/bin/env bash
# Seed inputs of a fuzz target (make fuzz): seeds.sh TARGET OUT_DIR
set -euo pipefail
target=$1 out=$2
case "$target" in
  config)
    for f in configs/*.yaml tests/fixtures/*.yaml tests/fixtures/configs/*.yaml tests/fixtures/broken/*.yaml \
             tests/fixtures/broken/configs/*.yaml; do
      [ -f "$f" ] && cp "$f" "$out/$(echo "$f" | tr / _)"
    done ;;
  checkpoint)
    python3 fuzz/make_seeds.py "$out" ;;
  report)
    # every committed run of a few experiments: its results.json, a NUL byte, the head of its metrics.jsonl
    i=0
    for r in results/*/runs/*/results.json; do
      d=$(dirname "$r")
      { cat "$r"; printf '\0'; [ -f "$d/metrics.jsonl" ] && head -c 20000 "$d/metrics.jsonl"; } > "$out/run$i"
      i=$((i + 1))
      [ $i -ge 200 ] && break
    done ;;
  *) echo "seeds.sh: unknown target $target" >&2; exit 2 ;;
esac

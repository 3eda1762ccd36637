#!/usr/bin/env python3
"""bench/compare_torch.sh's summary: the medians over its rounds (printed when there are several) and, with
JSON=FILE, the record a README cites (bench/results/README.md): the machine, the versions, every round, the
medians and the ratio ranges.

Usage (compare_torch.sh calls it): compare_torch_record.py ROUNDS_FILE OUT_JSON_OR_EMPTY NROUNDS FACTS_JSON
ROUNDS_FILE has one line per (round, threads, shape, pe): round threads shape pe relpos_tok_s relpos_of_peak_pct
relpos_mib relpos_loss0 torch_tok_s torch_mib torch_loss0 ('-' for a missing value)."""
import json, statistics, sys
rounds_file, out, nrounds, facts = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
num = lambda v: None if v in ("-", "") else float(v)
rows = {}
for line in open(rounds_file):
    r, t, shape, pe, ot, op, om, ol, tt, tm, tl = line.split()
    rows.setdefault((int(t), shape, pe), []).append(dict(round=int(r), relpos_tok_s=num(ot), relpos_of_peak_pct=num(op),
        relpos_mib=num(om), relpos_loss0=num(ol), torch_tok_s=num(tt), torch_mib=num(tm), torch_loss0=num(tl)))
def med(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return statistics.median(xs) if xs else None
table = []
for (t, shape, pe), rs in rows.items():
    row = dict(threads=t, shape=shape, pe=pe, rounds=rs)
    for k in ("relpos_tok_s", "torch_tok_s", "relpos_mib", "torch_mib", "relpos_of_peak_pct"):
        row[k] = med([x[k] for x in rs])
    ok = row["relpos_tok_s"] and row["torch_tok_s"]
    row["speed_ratio"] = row["relpos_tok_s"] / row["torch_tok_s"] if ok else None
    row["memory_ratio"] = row["relpos_mib"] / row["torch_mib"] if row["relpos_mib"] and row["torch_mib"] else None
    table.append(row)
if nrounds > 1:
    print()
    print(f"medians over {nrounds} rounds:")
    for row in table:
        sr = "n/a" if row["speed_ratio"] is None else f"{row['speed_ratio']:.2f}x"
        print(f"threads {row['threads']} {row['shape']:<10} {row['pe']}  relpos {row['relpos_tok_s'] or 0:8.0f} tok/s | "
              f"torch {row['torch_tok_s'] or 0:8.0f} tok/s | speed ratio {sr}")
if out:
    summary = {}
    for t in sorted({r["threads"] for r in table}):
        mine = [r for r in table if r["threads"] == t]
        sp = [r["speed_ratio"] for r in mine if r["speed_ratio"] is not None]
        mem = [r["memory_ratio"] for r in mine if r["memory_ratio"] is not None]
        summary[str(t)] = dict(speed_ratio_min=min(sp) if sp else None, speed_ratio_max=max(sp) if sp else None,
                               memory_ratio_min=min(mem) if mem else None, memory_ratio_max=max(mem) if mem else None)
    record = dict(
        command=facts["command"], date=facts["date"], machine=facts["machine"], cores=int(facts["cores"]),
        vector_extensions={k: facts[k] == "yes" for k in ("avx512f", "avx512_bf16", "avx2", "fma")},
        kernel=facts["kernel"], openblas_coretype=facts["openblas_coretype"], torch=facts["torch"],
        relpos_commit=facts["relpos_commit"], reference=facts["reference"], warmup=int(facts["warmup"]),
        steps=facts["steps"], rounds=nrounds, rows=table, summary_by_threads=summary)
    with open(out, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print(f"wrote {out}")

#!/usr/bin/python3
"""How far training moved each row of Shaw et al.'s relative-position tables, against how often the
training data shows that distance. Tests the explanation results/README.md gives for Table 2 (large k
loses BLEU because long distances are rare and their embeddings barely train).

  scripts/shaw_distance_use.py RUN_DIR...      # runs of type shaw with checkpoints/best
  scripts/shaw_distance_use.py --retrain --json out.json RUN_DIR...

For each run it rebuilds the run's initial parameters exactly (`relpos run` of the run's own config with
train.epochs=0 into a temporary run store: the same seed draws the same initial tables), then, per band
of distances |j - i| (the last band is the clipping row, shared by every distance >= k), prints the
mean change ||w_r - w_r(init)|| of the rows of
a^K and a^V over the encoder's and the decoder's self-attention layers, next to the share of
(query, key) pairs of the training data at those distances (subword lengths from the run's own
SentencePiece model; the encoder sees the source, both directions; the decoder the target plus its start
symbol, only j <= i). Rows the data never uses must come back unchanged; the script checks that they do
(it exits non-zero otherwise: the rebuilt initial tables would not be the run's).

Checkpoints are not committed: a run trained on this machine has them; with --retrain, a run without
them (e.g. the 1,000-update tables' runs) is trained again at 1 thread into the scratch store first, and
its validation loss printed beside the committed run's (another machine or thread count rounds
differently, so the copy is an equivalent run, not the same one).

Needs Debian's python3-numpy and python3-sentencepiece (not relpos dependencies: an analysis tool) and a
built relpos (--relpos, default build/relpos). Run from the repository root.
"""
import argparse
import functools
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import sentencepiece as spm
except ImportError as e:
    sys.exit(f"shaw_distance_use: {e.name} is missing: apt-get install python3-numpy python3-sentencepiece "
             "(and run the script with Debian's /usr/bin/python3)")

BANDS = [(0, 0), (1, 2), (3, 4), (5, 8), (9, 16), (17, 32), (33, 64), (65, 128), (129, 256)]


def load_npy(path):
    return np.load(path).astype(np.float64)


def top_level_blocks(text):
    """Splits a YAML file into its top-level keys' blocks (the run configs relpos writes are plain)."""
    blocks, key = {}, None
    order = []
    for line in text.splitlines(keepends=True):
        m = re.match(r"^([A-Za-z_]\w*):", line)
        if m:
            key = m.group(1)
            order.append(key)
            blocks[key] = ""
        if key is None:
            continue
        blocks[key] += line
    return order, blocks


def probe_run(run_dir, relpos, work, overrides):
    """Runs the run's own config (no sweep) with the given overrides into a scratch store under `work`;
    returns the probe's run directory."""
    order, blocks = top_level_blocks(open(os.path.join(run_dir, "config.yaml")).read())
    keep = [k for k in order if k not in ("sweep", "report", "name", "results_dir", "run_store")]
    cfg = "name: probe\nresults_dir: {0}/results\nrun_store: {0}/runs\n".format(work)
    cfg += "".join(blocks[k] for k in keep)
    path = os.path.join(work, "probe.yaml")
    with open(path, "w") as f:
        f.write(cfg)
    subprocess.run([relpos, "run", path, "-q", "eval.splits=[val]", "eval.metrics=[loss]"] + overrides,
                   check=True, stdout=subprocess.DEVNULL)
    runs = os.listdir(os.path.join(work, "runs"))
    if len(runs) != 1:
        sys.exit(f"shaw_distance_use: expected one probe run in {work}/runs, found {runs}")
    return os.path.join(work, "runs", runs[0])


def last_validation(run_dir):
    last = None
    for line in open(os.path.join(run_dir, "metrics.jsonl")):
        m = json.loads(line)
        if "valid_loss" in m:
            last = m
    return last


@functools.lru_cache(maxsize=None)
def config_text(run_dir):
    with open(os.path.join(run_dir, "config.yaml")) as f:
        return f.read()


def config_value(run_dir, key):
    m = re.search(r"^\s*" + key + r":\s*(\S+)", config_text(run_dir), re.M)
    return m.group(1) if m else None


def pair_counts(lengths, k, causal):
    """Pairs (i, j) at each clipped offset j - i, index r + k, over sequences of the given lengths."""
    counts = np.zeros(2 * k + 1)
    hist = np.bincount(lengths)
    for L, n in enumerate(hist):
        if n == 0:
            continue
        for r in range(-(L - 1), 1 if causal else L):
            counts[min(max(r, -k), k) + k] += n * (L - abs(r))
    return counts


def data_lengths(run_dir):
    """Subword lengths of the training pairs; runs with the same subword model and data share them."""
    with open(os.path.join(run_dir, "subword.model"), "rb") as f:
        model = f.read()
    return encoded_lengths(model, config_value(run_dir, "dir") or "data/multi30k", config_value(run_dir, "src"),
                           config_value(run_dir, "tgt"), int(config_value(run_dir, "max_len") or 100))


@functools.lru_cache(maxsize=None)
def encoded_lengths(model, d, src, tgt, max_len):
    sp = spm.SentencePieceProcessor(model_proto=model)
    read = lambda lang: [l.rstrip("\n") for l in gzip.open(f"{d}/tok/train.lc.norm.tok.{lang}.gz", "rt", encoding="utf-8")]
    s = [len(x) for x in sp.encode(read(src))]
    t = [len(x) for x in sp.encode(read(tgt))]
    keep = [(a, b) for a, b in zip(s, t) if 0 < a <= max_len and 0 < b <= max_len]
    return np.array([a for a, _ in keep]), np.array([b + 1 for _, b in keep])  # the decoder's start symbol


def analyse(run_dir, relpos, retrain):
    k = int(config_value(run_dir, "k"))
    seed = config_value(run_dir, "seed")
    with tempfile.TemporaryDirectory(prefix="shaw_probe_") as work:
        out = {"run": run_dir, "k": k, "seed": seed, "tables": {}}
        trained = run_dir
        if retrain:
            # threads=1: the run's numbers are not reproduced bit for bit on another machine or thread count
            # anyway; its validation loss is printed next to the committed one.
            os.makedirs(os.path.join(work, "retrain"))
            trained = probe_run(run_dir, relpos, os.path.join(work, "retrain"), ["threads=1"])
            mine, theirs = last_validation(trained), last_validation(run_dir)
            out["retrained"] = {"step": mine["step"], "valid_loss": mine["valid_loss"],
                                "committed_step": theirs["step"], "committed_valid_loss": theirs["valid_loss"]}
        os.makedirs(os.path.join(work, "init"))
        init_dir = os.path.join(probe_run(run_dir, relpos, os.path.join(work, "init"), ["train.epochs=0"]),
                                "checkpoints", "best", "params")
        best_dir = os.path.join(trained, "checkpoints", "best", "params")
        src_len, tgt_len = data_lengths(run_dir)
        enc_pairs, dec_pairs = pair_counts(src_len, k, False), pair_counts(tgt_len, k, True)
        for name in sorted(os.listdir(best_dir)):
            m = re.match(r"(encoder|decoder)\.layers\.(\d+)\.self_attn\.(rel_[kv])\.npy$", name)
            if not m:
                continue
            w, w0 = load_npy(os.path.join(best_dir, name)), load_npy(os.path.join(init_dir, name))
            pairs = enc_pairs if m.group(1) == "encoder" else dec_pairs
            unused = pairs == 0
            if unused.any() and not np.array_equal(w[unused], w0[unused]):
                sys.exit(f"shaw_distance_use: {run_dir}: {name}: rows the data never uses changed in training, so the "
                         "rebuilt initial tables are not this run's (a resumed run trained by another binary?)")
            change = np.linalg.norm(w - w0, axis=1)
            out["tables"][name[:-4]] = {"change": change.tolist(), "init_row_norm": float(np.linalg.norm(w0, axis=1).mean()),
                                        "pairs": pairs.tolist()}
        return out


def band_rows(res):
    """Mean change of the rows in each band of |j - i| below k, then the clipping row |j - i| = k, which
    every pair at k or more shares."""
    k = res["k"]
    bands = [(lo, min(hi, k - 1)) for lo, hi in BANDS if lo <= k - 1] + [(k, k)]
    rows = []
    for lo, hi in bands:
        label = f"{lo}" if lo == hi else f"{lo}-{hi}"
        row = {"band": label + (" (clip: all >= k)" if lo == k and k > 0 else "")}
        for side in ("encoder", "decoder"):
            for kind in ("rel_k", "rel_v"):
                change, used, total = [], 0.0, 0.0
                for name, t in res["tables"].items():
                    if not name.startswith(side) or not name.endswith(kind):
                        continue
                    p = np.array(t["pairs"])
                    total = p.sum()
                    idx = [r + k for r in range(-hi, hi + 1) if lo <= abs(r) <= hi and p[r + k] > 0]
                    used = p[idx].sum() if idx else 0.0
                    change += [t["change"][i] for i in idx]
                if total:
                    row[f"{side}.{kind}"] = float(np.mean(change)) if change else None
                    row[f"{side}.pairs"] = used / total
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--relpos", default="build/relpos")
    ap.add_argument("--json")
    ap.add_argument("--retrain", action="store_true",
                    help="train a copy of each run (1 thread, scratch store) when it has no checkpoints/best")
    a = ap.parse_args()
    if not (os.path.isfile(a.relpos) and os.access(a.relpos, os.X_OK)):
        sys.exit(f"shaw_distance_use: no relpos binary at {a.relpos} (make build, or --relpos PATH)")
    results = []
    for run in a.runs:
        if not os.path.isfile(os.path.join(run, "config.yaml")):
            sys.exit(f"shaw_distance_use: {run} is not a run directory (no config.yaml)")
        has_best = os.path.isdir(os.path.join(run, "checkpoints", "best", "params"))
        if not has_best and not a.retrain:
            sys.exit(f"shaw_distance_use: {run}: no checkpoints/best/params (checkpoints are not committed: a run "
                     "trained on this machine has them; --retrain trains a copy)")
        if config_value(run, "type") != "shaw":
            sys.exit(f"shaw_distance_use: {run}: model.position.type is {config_value(run, 'type')}, not shaw")
        res = analyse(run, a.relpos, not has_best)
        res["bands"] = band_rows(res)
        results.append(res)
        print(f"\n{run}: Shaw k = {res['k']}, seed {res['seed']}; initial row norm "
              + ", ".join(f"{n.split('.')[0][:3]} {n.split('.')[2]} {n.split('.')[4][-1].upper()} {t['init_row_norm']:.2f}"
                             for n, t in res["tables"].items()))
        if "retrained" in res:
            t = res["retrained"]
            print(f"(retrained here, 1 thread: validation loss {t['valid_loss']:.4f} at step {t['step']}; "
                  f"the committed run: {t['committed_valid_loss']:.4f} at step {t['committed_step']})")
        print("| distance |j-i| | source pairs | enc a^K change | enc a^V change | target pairs | dec a^K change | dec a^V change |")
        print("|---|---|---|---|---|---|---|---|")
        f = lambda v, pct=False: "–" if v is None else (f"{100 * v:.3g}%" if pct else f"{v:.2f}")
        for r in res["bands"]:
            print(f"| {r['band']} | {f(r.get('encoder.pairs'), True)} | {f(r.get('encoder.rel_k'))} | {f(r.get('encoder.rel_v'))} | "
                  f"{f(r.get('decoder.pairs'), True)} | {f(r.get('decoder.rel_k'))} | {f(r.get('decoder.rel_v'))} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, separators=(",", ":"))


if __name__ == "__main__":
    main()

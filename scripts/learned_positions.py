#!/usr/bin/env python3
"""What a learned position encoding ended at: the encoding's own parameters in each run's best checkpoint.

    scripts/learned_positions.py --out results/lm_converged/learned_positions.json RUN_DIR [RUN_DIR ...]
    scripts/learned_positions.py --write-run-files RUN_DIR [RUN_DIR ...]
    scripts/learned_positions.py --self-test

A parameter belongs to the encoding when it is not one of the model's standard weights (embeddings, the
attention projections, the feed-forward layers, the norms): FIRE's `decoder.position.log_L` / `log_c` and
its MLP, KERPLE's `self_attn.kerple_log_r1` / `kerple_log_r2` per layer, T5's `relative_attention_bias`.
Each is written in full when it has at most 256 values (and, for a `log_` parameter, its exponential: the
value the encoding uses, e.g. FIRE's threshold L), otherwise as its shape, mean and largest magnitude, and a
table of at most 1,024 rows also as the Euclidean norm of each row (`row_norms`): for Shaw's relative
embeddings (rel_k / rel_v, 2k + 1 rows, row k + j - i for key j and query i, clipped to [0, 2k]) and learned
absolute positions (a row per position), which rows training moved from their initialisation and which it
never reached (a causal model never uses the rows of keys after the query; a window of N tokens never uses
positions, or distances, from N on).
The checkpoints it reads are the runs' own (`checkpoints/best`, the checkpoint the run was evaluated from).
Committed runs keep no checkpoint (git ignores them), so `--write-run-files` writes the same entry into the
finished run's directory as position_parameters.json, which is committed with it (scripts/commit_finished_runs.sh
writes it before it commits a run); a run without a checkpoint is then read from that file, so the output is
the same in any clone. Runs with neither, or without such parameters, are listed as such. The output is the
source that README figures about learned encodings cite (check markers, docs/claims.md). Reads .npy files
without numpy (float32, C order).
"""
import argparse
import ast
import datetime
import json
import math
import os
import re
import struct
import subprocess
import sys

STANDARD = re.compile(r"(^|\.)(embed|ffn|norm\d*|q_proj|k_proj|v_proj|out_proj|output)(\.|$)")
FULL_LIMIT = 256
ROW_NORMS_LIMIT = 1024


def read_npy(path):
    """(shape, values) of a little-endian float32 .npy file in C order."""
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            raise ValueError(f"{path}: not a .npy file")
        major = f.read(2)[0]
        (hlen,) = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))
        header = ast.literal_eval(f.read(hlen).decode("latin1"))
        if header["descr"] != "<f4" or header["fortran_order"]:
            raise ValueError(f"{path}: {header['descr']}, fortran_order {header['fortran_order']}: only C-order float32 is read")
        shape = tuple(header["shape"])
        n = math.prod(shape) if shape else 1
        data = f.read(4 * n)
        if len(data) != 4 * n:
            raise ValueError(f"{path}: {len(data)} bytes of data for shape {shape}")
        return shape, list(struct.unpack(f"<{n}f", data))


def nested(values, shape):
    if len(shape) <= 1:
        return values
    step = len(values) // shape[0]
    return [nested(values[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def run_entry(run_dir):
    entry = {"run": os.path.basename(os.path.normpath(run_dir)), "id": os.path.basename(os.path.realpath(run_dir))}
    try:
        with open(os.path.join(run_dir, "results.json")) as f:
            r = json.load(f)
        entry.update({k: r[k] for k in ("labels", "steps", "best_step") if k in r})
    except FileNotFoundError:
        entry["finished"] = False
    entry.update(from_checkpoint(run_dir) or from_run_file(run_dir) or
                 {"parameters": None, "note": "no checkpoint in this checkout"})
    return entry


RUN_FILE = "position_parameters.json"


def from_run_file(run_dir):
    """What --write-run-files kept of the checkpoint in the run's directory (None without the file)."""
    path = os.path.join(run_dir, RUN_FILE)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        kept = json.load(f)
    return {"checkpoint_step": kept.get("checkpoint_step"), "parameters": kept["parameters"]}


def from_checkpoint(run_dir):
    """checkpoint_step and the encoding's parameters from checkpoints/best (None without a checkpoint)."""
    entry = {}
    ckpt = os.path.join(run_dir, "checkpoints", "best")
    manifest = os.path.join(ckpt, "manifest.json")
    if not os.path.exists(manifest):
        return None
    with open(os.path.join(ckpt, "state.json")) as f:
        entry["checkpoint_step"] = json.load(f).get("step")
    with open(manifest) as f:
        params = json.load(f)["parameters"]
    out = {}
    for p in params:
        if STANDARD.search(p["name"]):
            continue
        shape, values = read_npy(os.path.join(ckpt, p["file"]))
        item = {"shape": list(shape)}
        if len(values) <= FULL_LIMIT:
            item["values"] = nested([round(v, 6) for v in values], shape)
            if "log_" in p["name"].rsplit(".", 1)[-1]:  # log_L, kerple_log_r1: the value used is its exp
                item["exp"] = nested([round(math.exp(v), 6) for v in values], shape)
        else:
            item["mean"] = round(sum(values) / len(values), 6)
            item["max_abs"] = round(max(abs(v) for v in values), 6)
            if len(shape) == 2 and shape[0] <= ROW_NORMS_LIMIT:
                width = shape[1]
                item["row_norms"] = [round(math.sqrt(sum(v * v for v in values[r * width:(r + 1) * width])), 4)
                                     for r in range(shape[0])]
        out[p["name"]] = item
    entry["parameters"] = out
    return entry


def write_run_file(run_dir):
    """position_parameters.json in a finished run's directory, from its checkpoint (parameters {} for an
    encoding without any: that too is what the checkpoint says); False without results.json or checkpoint."""
    if not os.path.exists(os.path.join(run_dir, "results.json")):
        return False
    entry = from_checkpoint(run_dir)
    if entry is None:
        return False
    record = {"written_by": "scripts/learned_positions.py --write-run-files, from the run's checkpoints/best",
              "checkpoint_step": entry["checkpoint_step"], "parameters": entry["parameters"]}
    path = os.path.join(run_dir, RUN_FILE)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    return True


def write_npy(path, shape, values):
    header = repr({"descr": "<f4", "fortran_order": False, "shape": tuple(shape)}).encode("latin1")
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + struct.pack(f"<{len(values)}f", *values))


def self_test():
    """A fake run with a checkpoint: the encoding's parameters kept (exp of the log ones), the standard
    weights left out, a large one summarised; a run without a checkpoint listed as such."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "runs", "fire")
        os.makedirs(os.path.join(run, "checkpoints", "best", "params"))
        params = [("decoder.position.log_L", [1], [math.log(59.0)]), ("decoder.position.fc1.weight", [300], [0.5] * 299 + [-2.0]),
                  ("decoder.layers.0.self_attn.kerple_log_r1", [2], [0.0, math.log(2.0)]),
                  ("decoder.layers.0.self_attn.q_proj.weight", [2, 2], [1, 2, 3, 4]), ("embed.weight", [2, 2], [1, 2, 3, 4]),
                  ("decoder.layers.0.norm1.weight", [2], [1, 1]), ("decoder.position.relative_attention_bias", [2, 2], [1, 2, 3, 4]),
                  ("decoder.layers.0.self_attn.rel_k", [3, 100], [0.0] * 100 + [0.3] * 100 + [-0.4] * 100)]
        for name, shape, values in params:
            write_npy(os.path.join(run, "checkpoints", "best", "params", name + ".npy"), shape, values)
        with open(os.path.join(run, "checkpoints", "best", "manifest.json"), "w") as f:
            json.dump({"format": "relpos-checkpoint-1", "parameters": [
                {"name": n, "file": f"params/{n}.npy", "shape": s, "dtype": "float32"} for n, s, _ in params]}, f)
        with open(os.path.join(run, "checkpoints", "best", "state.json"), "w") as f:
            json.dump({"step": 700}, f)
        with open(os.path.join(run, "results.json"), "w") as f:
            json.dump({"labels": {"seed": "1"}, "steps": 900, "best_step": 700}, f)
        bare = os.path.join(d, "runs", "bare")
        os.makedirs(bare)
        e, b = run_entry(run), run_entry(bare)
        # the run file: written from the checkpoint, then read in place of it (a clone has no checkpoint)
        wrote = write_run_file(run)
        os.rename(os.path.join(run, "checkpoints"), os.path.join(d, "moved_checkpoints"))
        from_file = run_entry(run)
        no_file_for_bare = not write_run_file(bare) and not os.path.exists(os.path.join(bare, RUN_FILE))
        # an encoding without parameters (ALiBi): the file says so, and reads back as the checkpoint did
        plain = os.path.join(d, "runs", "alibi")
        os.makedirs(os.path.join(plain, "checkpoints", "best", "params"))
        write_npy(os.path.join(plain, "checkpoints", "best", "params", "embed.weight.npy"), [2, 2], [1, 2, 3, 4])
        with open(os.path.join(plain, "checkpoints", "best", "manifest.json"), "w") as f:
            json.dump({"parameters": [{"name": "embed.weight", "file": "params/embed.weight.npy"}]}, f)
        with open(os.path.join(plain, "checkpoints", "best", "state.json"), "w") as f:
            json.dump({"step": 300}, f)
        with open(os.path.join(plain, "results.json"), "w") as f:
            json.dump({"steps": 400, "best_step": 300}, f)
        plain_before = run_entry(plain)
        plain_wrote = write_run_file(plain)
        os.rename(os.path.join(plain, "checkpoints"), os.path.join(d, "moved_plain_checkpoints"))
        plain_after = run_entry(plain)
        p = e["parameters"]
        checks = [
            (sorted(p) == ["decoder.layers.0.self_attn.kerple_log_r1", "decoder.layers.0.self_attn.rel_k", "decoder.position.fc1.weight",
                           "decoder.position.log_L", "decoder.position.relative_attention_bias"], f"kept {sorted(p)}"),
            (p["decoder.layers.0.self_attn.rel_k"].get("row_norms") == [0.0, 3.0, 4.0], "a table's row norms, row by row"),
            ("row_norms" not in p["decoder.position.fc1.weight"], "no row norms of a vector"),
            (abs(p["decoder.position.log_L"]["exp"][0] - 59.0) < 1e-4, "exp of log_L"),
            (p["decoder.layers.0.self_attn.kerple_log_r1"]["exp"] == [1.0, 2.0], "exp of kerple_log_r1"),
            (p["decoder.position.relative_attention_bias"]["values"] == [[1, 2], [3, 4]], "a (2, 2) table in C order"),
            ("exp" not in p["decoder.position.relative_attention_bias"], "no exp of a parameter that is not a log"),
            (p["decoder.position.fc1.weight"].get("max_abs") == 2.0 and "values" not in p["decoder.position.fc1.weight"], "summarised"),
            (e["checkpoint_step"] == 700 and e["best_step"] == 700 and e["steps"] == 900, "steps"),
            (b["parameters"] is None and b.get("finished") is False, "a run without checkpoint or results"),
            (wrote and from_file == e, "the run file gives the entry the checkpoint gave"),
            (no_file_for_bare, "no run file for a run without checkpoint or results"),
            (plain_wrote and plain_before["parameters"] == {} and plain_after == plain_before,
             "a run whose encoding has no parameters: {} from the checkpoint and from the run file"),
        ]
    bad = [what for ok, what in checks if not ok]
    for what in bad:
        print(f"self-test: FAILED: {what}")
    print(f"self-test: {len(checks) - len(bad)} of {len(checks)} checks right")
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if sys.argv[1:2] == ["--write-run-files"]:
        for r in sys.argv[2:]:
            if write_run_file(r):
                print(f"learned_positions: {os.path.join(r, RUN_FILE)}")
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="run directories (runs/<name> links are followed)")
    ap.add_argument("--out", required=True, help="the JSON file to write")
    a = ap.parse_args()
    for r in a.runs:
        if not os.path.isdir(r):
            sys.exit(f"learned_positions: {r} is not a run directory")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    record = {
        "command": "scripts/learned_positions.py --out " + a.out + " " + " ".join(a.runs),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit or "unknown",
        "runs": [run_entry(r) for r in a.runs],
    }
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    os.replace(tmp, a.out)
    kept = sum(1 for r in record["runs"] if r.get("parameters"))
    print(f"learned_positions: {a.out}: {len(record['runs'])} run(s), {kept} with learned position parameters")


if __name__ == "__main__":
    main()

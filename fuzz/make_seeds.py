#!/usr/bin/env python3
"""Writes the seed inputs of the checkpoint fuzzer (fuzz/fuzz_checkpoint.cpp): a valid checkpoint of its
two-parameter model (w: 2 x 3, b: 3) in the fuzzer's input format, files joined by "@RELPOS@".
Usage: fuzz/make_seeds.py OUT_DIR   (make fuzz FUZZ_TARGET=checkpoint calls it)."""
import json, os, struct, sys


def npy(descr, shape, values):
    dims = f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(str(n) for n in shape) + ")"
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = {"<f4": "f", "<u8": "Q"}[descr]
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<" + fmt * len(values), *values)


state = {"step": 3, "epoch": 0, "batch_in_epoch": 3, "tokens": 60, "best_valid_loss": 2.5, "elapsed_seconds": 1.0,
         "adam_steps": 3, "config_hash": "0123456789abcdef", "best_step": 3, "bad_validations": 0}
files = [json.dumps(state).encode() + b"\n",
         npy("<f4", (2, 3), [0.1 * i for i in range(6)]), npy("<f4", (3,), [1.0, 2.0, 3.0]),
         npy("<f4", (2, 3), [0.01] * 6), npy("<f4", (2, 3), [0.001] * 6),
         npy("<f4", (3,), [0.02] * 3), npy("<f4", (3,), [0.002] * 3),
         npy("<u8", (6,), [1, 2, 3, 4, 5, 6])]
os.makedirs(sys.argv[1], exist_ok=True)
with open(os.path.join(sys.argv[1], "valid_checkpoint"), "wb") as f:
    f.write(b"@RELPOS@".join(files))

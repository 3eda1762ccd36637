#!/usr/bin/env python3
"""Mutation score of the test suite (`make mutants`; docs/reliability.md).

Applies each mutant below -- a flipped sign in a backward pass, an off-by-one in an index range or a
clip, a dropped term, a swapped transpose, a wrong constant -- one at a time to a copy of the source
tree, rebuilds incrementally, runs the tests and reports whether they noticed (killed) or not
(survived). The working tree is never modified: the tracked files (with their uncommitted changes) are
copied to <dir>/src and built in <dir>/build (default dir: build-mutants/).

    python3 scripts/mutants/run.py                 # every mutant (about a minute each on 2 cores)
    python3 scripts/mutants/run.py --only 3,17     # some of them
    python3 scripts/mutants/run.py --list

Tests: first the fast whole-model and op checks ("[reference],[gradcheck]", a few seconds), then, if
they pass, the whole Catch2 suite; both with --abort, so a killed mutant costs little. Each verdict
names the stage that killed it. A mutant that
does not compile counts as neither (reported "invalid"); one whose tests time out counts as killed.
Every snippet must occur exactly once in its file: a mutant that no longer applies is reported "stale"
and makes the script exit non-zero, so the list is kept in step with the code.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

# (file, original snippet, mutated snippet, what it breaks)
MUTANTS = [
    # ---- autodiff/ops_elementwise.cpp
    ("autodiff/ops_elementwise.cpp", "case BinOp::Sub: pd[o] = wrt_a ? go : -go; break;",
     "case BinOp::Sub: pd[o] = wrt_a ? go : go; break;", "sub backward (broadcast path): sign of d/db"),
    ("autodiff/ops_elementwise.cpp", "case BinOp::Mul: pd[o] = wrt_a ? go * y : go * x; break;",
     "case BinOp::Mul: pd[o] = wrt_a ? go * x : go * y; break;", "mul backward (broadcast path): operands swapped"),
    ("autodiff/ops_elementwise.cpp", "return -g[i] * pa[i] / (pb[i] * pb[i]);",
     "return g[i] * pa[i] / (pb[i] * pb[i]);", "div backward: sign of d/db"),
    ("autodiff/ops_elementwise.cpp", "case BinOp::Mul: run(B, [&](std::size_t i) { return g[i] * pa[i]; }); break;",
     "case BinOp::Mul: run(B, [&](std::size_t i) { return g[i] * pb[i]; }); break;", "mul backward: d/db uses b"),
    ("autodiff/ops_elementwise.cpp", "[](T x) { return std::exp(x); }, [](T, T y) { return y; }",
     "[](T x) { return std::exp(x); }, [](T, T y) { return -y; }", "exp backward: sign"),
    ("autodiff/ops_elementwise.cpp", "[](T, T y) { return T(1) - y * y; }",
     "[](T, T y) { return T(1) + y * y; }", "tanh backward: sign of y^2"),
    ("autodiff/ops_elementwise.cpp", "[](T x, T) { return T(1) / x; }",
     "[](T x, T) { return T(-1) / x; }", "log backward: sign"),
    ("autodiff/ops_elementwise.cpp", "[](T x, T) { return x > T(0) ? T(1) : T(0); }",
     "[](T x, T) { return x > T(0) ? T(1) : T(1); }", "relu backward: gradient through negative inputs"),
    ("autodiff/ops_elementwise.cpp", "for (std::size_t i = i0; i < i1; ++i) d[i] += g[i] * df(x[i], y[i]);",
     "for (std::size_t i = i0; i < i1; ++i) d[i] = g[i] * df(x[i], y[i]);",
     "unary backward: overwrites instead of accumulating"),
    # ---- autodiff/ops_matmul.cpp
    ("autodiff/ops_matmul.cpp", "blas::gemm(false, !tb, rows, p.k, p.n, T(1), Gp, p.n, Bp, ldb, beta_a, dAp, p.k);",
     "blas::gemm(false, tb, rows, p.k, p.n, T(1), Gp, p.n, Bp, ldb, beta_a, dAp, p.k);", "matmul dA: transpose swapped"),
    ("autodiff/ops_matmul.cpp", "blas::gemm(!ta, false, p.k, p.n, rows, T(1), Ap, lda, Gp, p.n, beta_b, dBp, p.n);",
     "blas::gemm(ta, false, p.k, p.n, rows, T(1), Ap, lda, Gp, p.n, beta_b, dBp, p.n);", "matmul dB: transpose swapped"),
    ("autodiff/ops_matmul.cpp", "for (std::size_t j = 0; j < out; ++j) db[j] += g[r * out + j];",
     "for (std::size_t j = 0; j < out; ++j) db[j] += g[j];", "linear bias backward: row index dropped"),
    ("autodiff/ops_matmul.cpp", "T(1), X.value.data(), in, g, out, T(1), grad_ptr(W), out);",
     "T(-1), X.value.data(), in, g, out, T(1), grad_ptr(W), out);", "linear weight backward: sign"),
    # ---- autodiff/ops_softmax.cpp
    ("autodiff/ops_softmax.cpp", "dr[j] = yr[j] * (gr[j] - dot);", "dr[j] = yr[j] * (gr[j] + dot);",
     "attention softmax backward: sign"),
    ("autodiff/ops_softmax.cpp", "const std::size_t n = causal ? std::min(Lk, q_offset + i + 1) : Lk;",
     "const std::size_t n = causal ? std::min(Lk, q_offset + i + 2) : Lk;", "causal mask off by one (sees one future key)"),
    ("autodiff/ops_softmax.cpp", "if (kp) v += kp[j];", "if (false) v += kp[j];", "key padding mask ignored"),
    ("autodiff/ops_softmax.cpp", "d[idx] += y[idx] * (g[idx] - acc);", "d[idx] += y[idx] * g[idx];",
     "softmax backward: term dropped"),
    ("autodiff/ops_softmax.cpp", "d[idx] += g[idx] - std::exp(y[idx]) * acc;", "d[idx] += g[idx];",
     "log_softmax backward: term dropped"),
    ("autodiff/ops_softmax.cpp", "const T on = T(1) - eps, off = eps / T(V);",
     "const T on = T(1) - eps, off = eps / T(V - 1);", "label smoothing spread over V - 1 classes"),
    ("autodiff/ops_softmax.cpp", "dr[targets[r]] -= g * on;", "dr[targets[r]] -= g;",
     "cross-entropy backward: smoothing ignored on the target"),
    ("autodiff/ops_softmax.cpp", "const T scale = opt.mean ? (count ? T(1) / T(count) : T(0)) : T(1);",
     "const T scale = opt.mean ? (count ? T(1) / T(N) : T(0)) : T(1);", "cross-entropy mean counts padding"),
    ("autodiff/ops_softmax.cpp",
     "row_loss[r] = double(on) * double(lse[r] - xr[t]) + double(off) * (double(V) * double(lse[r]) - double(sx));",
     "row_loss[r] = double(on) * double(lse[r] - xr[t]);", "cross-entropy: smoothing term dropped from the loss"),
    ("autodiff/ops_softmax.cpp", "vec::row_affine_exp(x + r * V, V, lse[r], g, -g * off, dr, acc);",
     "vec::row_affine_exp(x + r * V, V, lse[r], g, g * off, dr, acc);", "cross-entropy backward: sign of the smoothing term"),
    # ---- autodiff/ops_nn.cpp
    ("autodiff/ops_nn.cpp", "for (std::size_t j = 0; j < D; ++j) row[j] += gi[j];",
     "for (std::size_t j = 0; j < D; ++j) row[j] = gi[j];", "embedding backward: overwrites repeated ids"),
    ("autodiff/ops_nn.cpp", "v /= T(D);", "v /= T(D - 1);", "layer norm: unbiased variance"),
    ("autodiff/ops_nn.cpp", "const T rs = T(1) / std::sqrt(v + T(eps));",
     "const T rs = T(1) / std::sqrt(v + T(eps) * T(10));", "layer norm: eps ten times too large"),
    ("autodiff/ops_nn.cpp", "if (dg) dg[j] += gr[j] * (xr[j] - m) * rs;", "if (dg) dg[j] += gr[j] * (xr[j] - m);",
     "layer norm dgamma: rstd dropped"),
    ("autodiff/ops_nn.cpp", "for (std::size_t j = 0; j < D; ++j) dr[j] = rs * (gr[j] * pg[j] - s1 - (xr[j] - m) * rs * s2);",
     "for (std::size_t j = 0; j < D; ++j) dr[j] = rs * (gr[j] * pg[j] - s1);", "layer norm dx: term dropped"),
    ("autodiff/ops_nn.cpp", "const T scale = T(1) / T(1 - p);", "const T scale = T(1);", "dropout: no 1/(1-p) rescaling"),
    # ---- autodiff/ops_relative.cpp
    ("autodiff/ops_relative.cpp", "return {static_cast<std::size_t>(a), static_cast<std::size_t>(c), K - p};",
     "return {static_cast<std::size_t>(a), static_cast<std::size_t>(c), K - p - 1};", "Shaw bucket index off by one"),
    ("autodiff/ops_relative.cpp", "blas::gemm(true, false, r.R, r.d, r.B * r.H * r.Lq, T(1), A, r.R, Bm, r.d, T(1), dtable, r.d);",
     "blas::gemm(true, false, r.R, r.d, r.B * r.H * r.Lq, T(-1), A, r.R, Bm, r.d, T(1), dtable, r.d);",
     "relative table gradient (shared): sign"),
    ("autodiff/ops_relative.cpp", "table_gemm(r, false, r.R, r.d, dR.data(), W.value.data(), grad_ptr(Q), T(1));",
     "table_gemm(r, false, r.R, r.d, dR.data(), W.value.data(), grad_ptr(Q), T(0));",
     "rel_logits backward: overwrites the query gradient"),
    ("autodiff/ops_relative.cpp", "table + h * r.R * r.d, trans_table ? in_cols : out_cols",
     "table, trans_table ? in_cols : out_cols", "per-head tables: every head reads head 0's"),
    # ---- autodiff/ops_reduce.cpp, ops_shape.cpp, var.cpp
    ("autodiff/ops_reduce.cpp", "if (x[idx] > x[best]) best = idx;", "if (x[idx] < x[best]) best = idx;",
     "max computes the min"),
    ("autodiff/ops_reduce.cpp", "return sum_scaled(a, axes, keepdims, T(1) / T(count), \"mean\");",
     "return sum_scaled(a, axes, keepdims, T(1), \"mean\");", "mean is a sum"),
    ("autodiff/ops_shape.cpp", "T* dst = d + (o * sp.n + start) * sp.inner;", "T* dst = d + (o * sp.n) * sp.inner;",
     "slice backward: start offset dropped"),
    ("autodiff/ops_shape.cpp", "const T* src = g + (o * so.n + offsets[t]) * so.inner;",
     "const T* src = g + (o * so.n + offsets[0]) * so.inner;", "concat backward: every input reads the first's slot"),
    ("autodiff/var.cpp", "for (std::size_t j = 0; j < inner; ++j) out[j] += src[j];",
     "for (std::size_t j = 0; j < inner; ++j) out[j] = src[j];", "broadcast gradient reduction keeps only the last row"),
    # ---- nn/
    ("nn/attention.cpp", "const T scale = T(1.0 / std::sqrt(double(head_dim_)));",
     "const T scale = T(1.0 / double(head_dim_));", "attention scaled by 1/d instead of 1/sqrt(d)"),
    ("nn/attention.cpp", "(cache && site_.kind != AttentionSite::Cross) ? cache->length() : 0;", "0;",
     "incremental decoding: new keys at position 0"),
    ("nn/attention.cpp", "k = concat<T>({cache->k, k}, 2);", "k = concat<T>({k, cache->k}, 2);",
     "incremental decoding: cached keys appended in the wrong order"),
    ("nn/transformer.cpp", "    if (dec_norm) y = dec_norm->forward(y);\n    return project(y);  // (B, Lt, V)",
     "    return project(y);  // (B, Lt, V)", "pre-norm: the decoder's final norm dropped (full decode)"),
    ("nn/transformer.cpp", "Var<T> y = embed_target(tokens, B, 1, state.step);",
     "Var<T> y = embed_target(tokens, B, 1, 0);", "incremental decoding: every step at position 0"),
    ("nn/transformer.cpp", "return enc_norm ? enc_norm->forward(x) : x;", "return x;",
     "pre-norm: the encoder's final norm dropped"),
    ("nn/position_sinusoidal.cpp", "pe(p, i) = T(std::sin(angle));", "pe(p, i) = T(std::cos(angle));",
     "sinusoidal: cos in the even dimensions"),
    ("nn/position_alibi.cpp", "std::pow(2.0, -8.0 * double(h) / double(p))", "std::pow(2.0, -8.0 * double(h - 1) / double(p))",
     "ALiBi slopes off by one head"),
    ("nn/rotary.hpp", "std::pow(base, -double(i) / double(d_))", "std::pow(base, -double(i + 2) / double(d_))",
     "RoPE frequencies off by one pair"),
    ("nn/rotary.hpp", "r(i + 1, i) = T(-1);", "r(i + 1, i) = T(1);", "RoPE rotation: sign"),
    ("nn/position_t5.cpp", "if (relative_position > 0) bucket += num_buckets;",
     "if (relative_position >= 0) bucket += num_buckets;", "T5 buckets: offset 0 in the upper half"),
    ("nn/position_t5.cpp", "const long max_exact = num_buckets / 2;", "const long max_exact = num_buckets / 4;",
     "T5 buckets: fewer exact buckets"),
    ("nn/position_learned.cpp", "slice(weight, 0, offset, offset + L)", "slice(weight, 0, 0, L)",
     "learned positions ignore the decoding offset"),
    ("nn/position_shaw.cpp", "if (site.kind == AttentionSite::Cross && !o_.cross) return nullptr;",
     "if (site.kind == AttentionSite::Cross && o_.cross) return nullptr;",
     "Shaw terms in encoder-decoder attention by default"),
    ("nn/optim.cpp", "const double bc2 = 1.0 - std::pow(opt_.beta2, double(t_));", "const double bc2 = 1.0;",
     "Adam: no second-moment bias correction"),
    ("nn/optim.cpp", "m[i] = b1 * m[i] + (T(1) - b1) * g[i];", "m[i] = b1 * m[i] + g[i];",
     "Adam: first moment not averaged"),
    ("nn/optim.cpp", "s * std::pow(w, -1.5)", "s * std::pow(w, -0.5)", "warmup: wrong exponent"),
    ("nn/optim.cpp", "const T scale = T(max_norm / (norm + 1e-6));", "const T scale = T(norm / max_norm);",
     "gradient clipping scales the wrong way"),
    # ---- experiments/eval/decode.cpp
    ("experiments/eval/decode.cpp", "return std::pow((5.0 + double(length)) / 6.0, alpha);",
     "return std::pow((5.0 + double(length)) / 5.0, alpha);", "GNMT length penalty constant"),
    ("experiments/eval/decode.cpp", "if (result[b].size() >= limit[b]) continue;", "if (result[b].size() > limit[b]) continue;",
     "greedy decoding one token past the length limit"),
]


def sh(cmd, cwd, timeout=None, log=None):
    try:
        r = subprocess.run(cmd, cwd=cwd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True)
        if log is not None:
            log.write(r.stdout)
        return r.returncode
    except subprocess.TimeoutExpired:
        return "timeout"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--dir", default=os.path.join(root, "build-mutants"))
    ap.add_argument("--only", default="", help="comma-separated mutant numbers (1-based)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=900, help="seconds for one mutant's tests")
    args = ap.parse_args()
    picked = [int(x) for x in args.only.split(",") if x] or list(range(1, len(MUTANTS) + 1))
    if args.list:
        for i, (f, _, _, what) in enumerate(MUTANTS, 1):
            print(f"{i:3d}  {f:32s} {what}")
        return 0

    src, build = os.path.join(args.dir, "src"), os.path.join(args.dir, "build")
    # A copy of the tracked files (uncommitted edits included); unchanged files keep their timestamps so
    # the incremental build in <dir>/build only recompiles what a mutant touches.
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, stdout=subprocess.PIPE, check=True).stdout
    for rel in files.decode().split("\0"):
        if not rel or not os.path.isfile(os.path.join(root, rel)):
            continue
        s, d = os.path.join(root, rel), os.path.join(src, rel)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if not os.path.exists(d) or not filecmp_same(s, d):
            shutil.copy2(s, d)
    log = open(os.path.join(args.dir, "mutants.log"), "w")
    build_cmd = f"nice -n 5 cmake --build {build} -j{args.jobs} --target relpos_tests relpos"
    fast_cmd = f"{build}/relpos_tests --abort '[reference],[gradcheck]' >/dev/null 2>&1"
    suite_cmd = f"{build}/relpos_tests --abort >/dev/null 2>&1"
    test_cmd = f"{fast_cmd} && {suite_cmd}"
    if sh(f"cmake -S {src} -B {build} -DCMAKE_BUILD_TYPE=Release >/dev/null", src, log=log) != 0:
        print("configure failed; see", log.name)
        return 2
    print("building the unmutated copy and running the suite once ...", flush=True)
    if sh(build_cmd, src, log=log) != 0 or sh(test_cmd, src, timeout=args.timeout) != 0:
        print("the unmutated tree does not build or pass its tests; see", log.name)
        return 2

    killed = survived = invalid = stale = killed_fast = 0
    survivors = []
    for i in picked:
        f, old, new, what = MUTANTS[i - 1]
        path = os.path.join(src, f)
        text = open(path).read()
        if text.count(old) != 1:
            print(f"{i:3d}  STALE     {f}: {what} (snippet found {text.count(old)} times)", flush=True)
            stale += 1
            continue
        t0 = time.time()
        try:
            with open(path, "w") as fh:
                fh.write(text.replace(old, new))
            log.write(f"\n==== mutant {i}: {f}: {what}\n")
            if sh(build_cmd, src, log=log) != 0:
                verdict = "invalid"
                invalid += 1
            else:
                # which stage kills it tells whether the fast whole-model and op checks see the fault
                rc, stage = sh(fast_cmd, src, timeout=args.timeout), "fast"
                if rc == 0:
                    rc, stage = sh(suite_cmd, src, timeout=args.timeout), "suite"
                if rc == 0:
                    verdict = "SURVIVED"
                    survived += 1
                    survivors.append(f"{i}: {f}: {what}")
                else:
                    verdict = f"killed ({stage}{', timeout' if rc == 'timeout' else ''})"
                    killed += 1
                    killed_fast += stage == "fast"
        finally:
            with open(path, "w") as fh:  # restore; the next build recompiles it
                fh.write(text)
        print(f"{i:3d}  {verdict:15s} {f}: {what} ({time.time() - t0:.0f} s)", flush=True)
    sh(build_cmd, src, log=log)  # leave the copy's build unmutated
    valid = killed + survived
    print(f"\nmutation score: {killed}/{valid} killed ({100.0 * killed / max(valid, 1):.1f}%), "
          f"{invalid} invalid, {stale} stale; {killed_fast} killed by the fast stage ([reference],[gradcheck])")
    for s in survivors:
        print("  survived:", s)
    return 1 if stale else 0


def filecmp_same(a, b):
    import filecmp
    return filecmp.cmp(a, b, shallow=False)


if __name__ == "__main__":
    sys.exit(main())

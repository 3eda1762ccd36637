#!/usr/bin/python3
"""Reference fixtures for tests/test_reference_model.cpp: tiny encoder-decoder Transformers written
here from the papers' formulas in PyTorch (float64), one per position encoding and norm order.

Run by hand, never by the build (the C++ test needs no PyTorch):

    /usr/bin/python3 scripts/reference/make_fixtures.py            # rewrites tests/fixtures/reference/
    /usr/bin/python3 scripts/reference/make_fixtures.py --check    # regenerates into a temp dir, compares
                                                                   # (float64 within RTOL: other BLAS and torch builds)
    /usr/bin/python3 scripts/reference/make_fixtures.py --only post_alibi pre_alibi   # just these cases

For each case it writes, under tests/fixtures/reference/<case>/:
    checkpoint/      the weights in relpos's checkpoint layout: params/<name>.npy (float64), manifest.json,
                     state.json, rng.npy -- what experiments/train/checkpoint.cpp reads
    grads.npy           dLoss/dparam at the initial weights, every parameter flattened and concatenated
                        in the order of fixture.json's "parameters" (one file instead of one per parameter)
    adam2.npy           the parameters after two Adam steps on the same batch (gradient recomputed), same layout
    logits.npy          (B, Lt, V) decoder logits at the initial weights (to localise a forward error)
    decode_logits.npy   (B, T, V) the logits of every greedy step (rows padded with zeros after their last step)
    fixture.json        model config, position options, the padded batch and its mask, label smoothing,
                        the two losses, learning rates, Adam options, the greedy decode

The model is written from the formulas (Vaswani et al. 2017; Shaw et al. 2018; Su et al. 2021; Press et
al. 2022; Raffel et al. 2020; Chi et al. 2022; Li et al. 2023; Dai et al. 2019; Sun et al. 2022; Golovneva et
al. 2024), not translated from relpos's code; where relpos has a convention of its
own (Linear weights stored (in, out), q scaled before the relative terms, a fully masked row giving
zeros, ...), the README next to the fixtures says which and the code below follows relpos.
"""
import argparse
import filecmp
import json
import math
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

torch.set_default_dtype(torch.float64)

PAD, BOS, EOS = 0, 2, 3
LN_EPS = 1e-5


# ----------------------------------------------------------------------------- position encodings

def sinusoidal_table(length, d, base=10000.0, offset=0):
    # Vaswani et al. 3.5: PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos(pos / base^(2i/d))
    pe = torch.zeros(length, d)
    pos = torch.arange(offset, offset + length, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d, 2, dtype=torch.float64)
    angle = pos / base ** (two_i / d)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return pe


def rope_rotate(x, positions, base=10000.0):
    # Su et al. eq. 34: pairs (x_2i, x_2i+1) at position m rotated by m*theta_i, theta_i = base^(-2i/d).
    # x (B, H, L, d), positions (L,)
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    ang = positions.to(torch.float64)[:, None] * theta[None, :]      # (L, d/2)
    cos, sin = torch.cos(ang), torch.sin(ang)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def alibi_slopes(n):
    # Press et al., the reference get_slopes: a geometric sequence starting at 2^(-8/n) for n a power of
    # two; otherwise the closest lower power of two's slopes, then every other slope of twice that.
    def pow2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return pow2(n)
    p = 2 ** math.floor(math.log2(n))
    return pow2(p) + alibi_slopes(2 * p)[0::2][: n - p]


def t5_bucket_hf(rel, bidirectional, num_buckets, max_distance):
    # transformers' T5Attention._relative_position_bucket, verbatim in torch (float32 log as there).
    relative_buckets = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (rel > 0).to(torch.long) * num_buckets
        rel = torch.abs(rel)
    else:
        rel = -torch.min(rel, torch.zeros_like(rel))
    max_exact = num_buckets // 2
    is_small = rel < max_exact
    if_large = max_exact + (
        torch.log(rel.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, rel, if_large)
    return relative_buckets


def t5_bucket_f64(rel, bidirectional, num_buckets, max_distance):
    # The same formula in float64 (what relpos computes); the script checks both agree on every offset used.
    out = []
    for r in rel.flatten().tolist():
        b, nb = 0, num_buckets
        if bidirectional:
            nb //= 2
            if r > 0:
                b += nb
            r = abs(r)
        else:
            r = -min(r, 0)
        me = nb // 2
        if r < me:
            out.append(b + r)
        else:
            large = me + int(math.log(r / me) / math.log(max_distance / me) * (nb - me))
            out.append(b + min(large, nb - 1))
    return torch.tensor(out, dtype=torch.long).reshape(rel.shape)


def kerple_log_bias(log_r1, log_r2, Lq, Lk, causal):
    # Chi et al. 2022, KERPLE-log: b_h(i, j) = -r1_h log(1 + r2_h |i - j|), r = exp(log r) (relpos's
    # parameterisation); future keys of the causal decoder (masked anyway) get distance 0, as ALiBi here.
    i, j = torch.arange(Lq)[:, None], torch.arange(Lk)[None, :]
    dist = (i - j).abs().to(torch.float64)
    if causal:
        dist = torch.where(j > i, 0.0, dist)
    r1, r2 = torch.exp(log_r1)[:, None, None], torch.exp(log_r2)[:, None, None]
    return -r1 * torch.log1p(r2 * dist[None])  # (H, Lq, Lk)


def fire_bias(p, Lq, Lk):
    # Li et al. 2023, FIRE (the paper's listing, with c = exp(log_c), L = exp(log_L)):
    # b(i, j) = f(psi(i - j) / psi(max(L, i))), psi(x) = log(c x + 1), f: Linear(1, hidden), ReLU,
    # Linear(hidden, H). relpos's bidirectional extension: sign(i - j) psi(|i - j|) for keys after the query.
    i = torch.arange(Lq, dtype=torch.float64)[:, None]
    j = torch.arange(Lk, dtype=torch.float64)[None, :]
    rel = i - j
    c, L = torch.exp(p["log_c"]), torch.exp(p["log_L"])
    psi = torch.sign(rel) * torch.log(c * rel.abs() + 1)
    x = psi / torch.log(c * torch.maximum(i, L) + 1)  # (Lq, Lk)
    h = torch.relu(x[..., None] @ p["fc1.weight"] + p["fc1.bias"])  # (Lq, Lk, hidden); weights (in, out)
    return (h @ p["fc2.weight"] + p["fc2.bias"]).permute(2, 0, 1)  # (H, Lq, Lk)


def txl_sinusoids(rel, D, max_time):
    # Transformer-XL's r_t for relative distances t (any shape), laid out as Ruoss et al. 2023's reference
    # (sinusoid_position_encoding): r_t[m] = sin(t w_m), r_t[D/2 + m] = cos(t w_m), w_m = max_time^(-2m/D).
    w = max_time ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)  # (D/2,)
    a = rel.to(torch.float64)[..., None] * w
    return torch.cat([torch.sin(a), torch.cos(a)], dim=-1)  # (..., D)


def xpos_rotate(x, positions, base=10000.0, scale_base=512.0, downscale=False):
    # Sun et al. 2022 as torchscale's XPOS (xpos_relative_position.py): rotary embeddings whose sin/cos are
    # multiplied by scale^(pos / scale_base), scale_i = (2i + 0.4 d) / (1.4 d); keys take the inverse
    # (downscale). torchscale centres the positions (pos - L/2), which cancels in q·k; relpos keeps them
    # absolute, so a key scaled when it entered the decoding cache stays valid. x (B, H, L, d), positions (L,)
    d = x.shape[-1]
    pos = positions.to(torch.float64)
    scale = ((torch.arange(0, d, 2, dtype=torch.float64) + 0.4 * d) / (1.4 * d)) ** (pos[:, None] / scale_base)
    inv_freq = 1.0 / (base ** (torch.arange(0, d // 2, dtype=torch.float64) / (d // 2)))  # fixed_pos_embedding
    ang = pos[:, None] * inv_freq[None, :]  # (L, d/2)
    if downscale:
        scale = 1 / scale

    def duplicate_interleave(m):  # (L, d/2) -> (L, d): each column twice
        return m[:, :, None].repeat(1, 1, 2).reshape(m.shape[0], -1)

    def rotate_every_two(t):  # (x0, x1, ...) -> (-x1, x0, ...)
        return torch.stack((-t[..., 1::2], t[..., 0::2]), dim=-1).flatten(-2)

    sin, cos = duplicate_interleave(torch.sin(ang) * scale), duplicate_interleave(torch.cos(ang) * scale)
    return x * cos + rotate_every_two(x) * sin


def cope_interpolate(query, pos_emb, pos, npos_max):
    # Golovneva et al. 2024, the reference's CoPE.forward (facebookresearch/RAM, projects/cope) after the
    # positions: clamped, the logits q·e of the integer positions interpolated between floor and ceil.
    pos = pos.clamp(max=npos_max - 1)
    pos_ceil = pos.ceil().long()
    pos_floor = pos.floor().long()
    logits_int = torch.matmul(query, pos_emb)  # (B, H, Lq, npos_max)
    logits_ceil = logits_int.gather(-1, pos_ceil)
    logits_floor = logits_int.gather(-1, pos_floor)
    w = pos - pos_floor
    return logits_ceil * w + logits_floor * (1 - w)


def cope_term(query, attn_logits, blocked, npos_max, pos_emb, pos_emb_right=None):
    # The reference's gates sigmoid(q·k) of the masked logits (a blocked key counts 0) and positions
    # p_ij = sum_{t=j..i} g_it (cumulative sum from the right). With pos_emb_right (relpos's bidirectional
    # form): keys after the query count to the right, p_ij = sum_{t=i..j} g_it, and read pos_emb_right.
    Lq, Lk = attn_logits.shape[-2:]
    gates = torch.sigmoid(attn_logits.masked_fill(blocked, float("-inf")))
    i, j = torch.arange(Lq)[:, None], torch.arange(Lk)[None, :]
    left = gates.masked_fill(j > i, 0.0).flip(-1).cumsum(dim=-1).flip(-1)
    term = cope_interpolate(query, pos_emb, left, npos_max)
    if pos_emb_right is None:
        return term
    right = gates.masked_fill(j < i, 0.0).cumsum(dim=-1)
    return torch.where(j <= i, term, cope_interpolate(query, pos_emb_right, right, npos_max))


# ----------------------------------------------------------------------------- the model

class Reference:
    """A seq2seq Transformer over a dict of named float64 parameters (relpos's names and layouts)."""

    def __init__(self, spec, params):
        self.s = spec
        self.p = params
        self.D = spec["d_model"]
        self.H = spec["heads"]
        self.dh = self.D // self.H
        self.pos = spec["position"]
        self.type = self.pos["type"]
        o = self.pos.get("options", {})
        self.opt = o

    # ---- pieces
    def linear(self, x, name):
        # relpos stores Linear weights as (in, out): y = x W + b
        return x @ self.p[name + ".weight"] + self.p[name + ".bias"]

    def layer_norm(self, x, name):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)  # biased variance, as torch.nn.LayerNorm
        return (x - mu) / torch.sqrt(var + LN_EPS) * self.p[name + ".weight"] + self.p[name + ".bias"]

    def embed(self, ids, side, offset=0):
        table = self.p["src_embed.weight"] if side == "encoder" or self.s["share_embeddings"] == "all" \
            else self.p["tgt_embed.weight"]
        x = table[ids]  # (B, L, D)
        if self.s["scale_embeddings"]:
            x = x * math.sqrt(self.D)
        L = ids.shape[1]
        if self.type == "sinusoidal":
            x = x + sinusoidal_table(L, self.D, float(self.opt.get("base", 10000.0)), offset)
        elif self.type == "learned":
            x = x + self.p[f"{side}.position.weight"][offset:offset + L]
        return x

    def shaw_bucket(self, Lq, Lk, q_offset=0):
        k = int(self.opt.get("k", 16))
        i = torch.arange(Lq)[:, None] + q_offset
        j = torch.arange(Lk)[None, :]
        return torch.clamp(j - i, -k, k) + k  # (Lq, Lk): clip(j - i, k) + k

    def attention(self, x, kv, prefix, kind, key_blocked=None):
        """kind: enc_self | dec_self | cross. key_blocked (B, Lk) bool, True = padding."""
        B, Lq, _ = x.shape
        Lk = kv.shape[1]
        H, dh = self.H, self.dh

        def heads(t):
            return t.reshape(B, -1, H, dh).permute(0, 2, 1, 3)  # (B, H, L, dh)

        q = heads(self.linear(x, prefix + ".q_proj")) / math.sqrt(dh)
        k = heads(self.linear(kv, prefix + ".k_proj"))
        v = heads(self.linear(kv, prefix + ".v_proj"))
        self_attn = kind != "cross"
        txl = self.type == "txl" and (self_attn or self.opt.get("cross_attention", False))
        if self.type == "rope" and self_attn:
            base = float(self.opt.get("base", 10000.0))
            q = rope_rotate(q, torch.arange(Lq), base)
            k = rope_rotate(k, torch.arange(Lk), base)
        if self.type == "xpos" and self_attn:
            base, sb = float(self.opt.get("base", 10000.0)), float(self.opt.get("scale_base", 512.0))
            if kind == "dec_self":
                q = xpos_rotate(q, torch.arange(Lq), base, sb)
                k = xpos_rotate(k, torch.arange(Lk), base, sb, downscale=True)
            else:  # relpos: the decay is causal; bidirectional attention is rotated only (rope)
                q = rope_rotate(q, torch.arange(Lq), base)
                k = rope_rotate(k, torch.arange(Lk), base)
        e = q @ k.transpose(-1, -2)  # (B, H, Lq, Lk)
        if txl:
            # Dai et al. 2019 sec. 3.3 as Ruoss et al. 2023's compute_attention_with_relative_encodings:
            # e_ij = [(q_i + u)·k_j + (q_i + v)·(W_R r_{j-i})] / sqrt(d) with the unscaled query q_i; the distance
            # is key minus query (the reference's bidirectional relative shift); in the causal decoder the later
            # keys are masked below, whatever their term. The whole (Lq, Lk, D) tensor of encodings, brute force.
            qr = heads(self.linear(x, prefix + ".q_proj"))  # (B, H, Lq, dh), not scaled
            u, vb = self.p[prefix + ".txl_u"], self.p[prefix + ".txl_v"]  # (H, dh) each
            rel = torch.arange(Lk)[None, :] - torch.arange(Lq)[:, None]  # j - i, (Lq, Lk)
            r = txl_sinusoids(rel, self.D, float(self.opt.get("max_time", 10000.0)))  # (Lq, Lk, D)
            wr = (r @ self.p[prefix + ".txl_w_r"]).reshape(Lq, Lk, H, dh)  # W_R r, weights (in, out)
            content = torch.einsum("bhid,bhjd->bhij", qr + u[None, :, None, :], k)
            position = torch.einsum("bhid,ijhd->bhij", qr + vb[None, :, None, :], wr)
            e = (content + position) / math.sqrt(dh)

        shaw = self.type == "shaw" and self_attn
        if shaw:
            keys = self.opt.get("keys", True)
            values = self.opt.get("values", True)
            tie = self.opt.get("tie", False)
            bucket = self.shaw_bucket(Lq, Lk)
            wk = self.p.get(prefix + ".rel_k")
            wv = wk if tie else self.p.get(prefix + ".rel_v")
            if keys:
                # Shaw eq. 4: e_ij = q_i (k_j + a^K_ij)^T / sqrt(d), a^K_ij = w^K[clip(j - i, k)]
                ak = wk[..., bucket, :]  # (Lq, Lk, dh) or (H, Lq, Lk, dh)
                if ak.dim() == 3:
                    e = e + torch.einsum("bhid,ijd->bhij", q, ak)
                else:
                    e = e + torch.einsum("bhid,hijd->bhij", q, ak)
        if self.type == "t5" and self_attn:
            nb = int(self.opt.get("num_buckets", 32))
            md = int(self.opt.get("max_distance", 128))
            rel = torch.arange(Lk)[None, :] - torch.arange(Lq)[:, None]  # key - query
            bidir = kind == "enc_self"
            b64 = t5_bucket_f64(rel, bidir, nb, md)
            assert torch.equal(b64, t5_bucket_hf(rel, bidir, nb, md)), "t5 buckets: float32 and float64 differ"
            side = "encoder" if kind == "enc_self" else "decoder"
            table = self.p[f"{side}.position.relative_attention_bias"]  # (num_buckets, H)
            e = e + table[b64].permute(2, 0, 1)[None]  # (1, H, Lq, Lk)
        if self.type == "alibi" and self_attn:
            m = torch.tensor(alibi_slopes(H))
            dist = (torch.arange(Lq)[:, None] - torch.arange(Lk)[None, :]).abs().to(torch.float64)
            if kind == "dec_self":
                dist = torch.where(torch.arange(Lk)[None, :] > torch.arange(Lq)[:, None], 0.0, dist)
            elif self.opt.get("bidirectional", "offset") == "offset":
                # Ruoss et al. 2023's reference: + 0.5 on the lower triangle (keys left of the query),
                # "to break the symmetry"
                dist = dist - 0.5 * torch.tril(torch.ones(Lq, Lk), diagonal=-1)
            e = e - m[:, None, None] * dist[None]
        if self.type == "kerple" and (self_attn or self.opt.get("cross_attention", False)):
            e = e + kerple_log_bias(self.p[prefix + ".kerple_log_r1"], self.p[prefix + ".kerple_log_r2"], Lq, Lk,
                                    kind == "dec_self")[None]
        if self.type == "fire" and self_attn:
            if self.opt.get("per_layer", False):
                owner = prefix + ".fire."
            else:
                owner = ("encoder" if kind == "enc_self" else "decoder") + ".position."
            fp = {n: self.p[owner + n] for n in ("log_c", "log_L", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")}
            e = e + fire_bias(fp, Lq, Lk)[None]

        blocked = torch.zeros(B, 1, Lq, Lk, dtype=torch.bool)
        if key_blocked is not None:
            blocked = blocked | key_blocked[:, None, None, :]
        if kind == "dec_self":
            blocked = blocked | (torch.arange(Lk)[None, :] > torch.arange(Lq)[:, None])[None, None]
        if self.type == "cope" and self_attn:
            e = e + cope_term(q, e, blocked, int(self.opt.get("npos_max", 64)), self.p[prefix + ".cope_emb"],
                              self.p.get(prefix + ".cope_emb_right"))
        e = e.masked_fill(blocked, float("-inf"))
        a = torch.softmax(e, dim=-1)
        # relpos: a fully blocked row gives weights 0 (PyTorch gives NaN). No fixture batch has one.
        assert not torch.isnan(a).any()
        z = a @ v  # (B, H, Lq, dh)
        if shaw and self.opt.get("values", True):
            # Shaw eq. 3: z_i = sum_j a_ij (v_j + a^V_ij)
            av = wv[..., bucket, :]
            if av.dim() == 3:
                z = z + torch.einsum("bhij,ijd->bhid", a, av)
            else:
                z = z + torch.einsum("bhij,hijd->bhid", a, av)
        z = z.permute(0, 2, 1, 3).reshape(B, Lq, self.D)
        return self.linear(z, prefix + ".out_proj")

    def ffn(self, x, prefix):
        return self.linear(torch.relu(self.linear(x, prefix + ".fc1")), prefix + ".fc2")

    def sublayer(self, x, norm, f):
        if self.s["norm"] == "post":
            return self.layer_norm(x + f(x), norm)  # x = LN(x + f(x))
        return x + f(self.layer_norm(x, norm))      # x = x + f(LN(x))

    # ---- the model
    def encode(self, src):
        blocked = src == PAD
        x = self.embed(src, "encoder")
        for i in range(self.s["encoder_layers"]):
            pre = f"encoder.layers.{i}"
            x = self.sublayer(x, pre + ".norm1", lambda y: self.attention(y, y, pre + ".self_attn", "enc_self", blocked))
            x = self.sublayer(x, pre + ".norm2", lambda y: self.ffn(y, pre + ".ffn"))
        if self.s["norm"] == "pre":
            x = self.layer_norm(x, "encoder.norm")
        return x, blocked

    def decode(self, tgt_in, memory, blocked):
        y = self.embed(tgt_in, "decoder")
        for i in range(self.s["decoder_layers"]):
            pre = f"decoder.layers.{i}"
            y = self.sublayer(y, pre + ".norm1", lambda t: self.attention(t, t, pre + ".self_attn", "dec_self"))
            y = self.sublayer(y, pre + ".norm2",
                              lambda t: self.attention(t, memory, pre + ".cross_attn", "cross", blocked))
            y = self.sublayer(y, pre + ".norm3", lambda t: self.ffn(t, pre + ".ffn"))
        if self.s["norm"] == "pre":
            y = self.layer_norm(y, "decoder.norm")
        if self.s["share_embeddings"] == "none":
            return self.linear(y, "out_proj")
        table = self.p["src_embed.weight"] if self.s["share_embeddings"] == "all" else self.p["tgt_embed.weight"]
        return y @ table.T  # tied output projection, no bias

    def loss(self, src, tgt_in, tgt_out, eps):
        memory, blocked = self.encode(src)
        logits = self.decode(tgt_in, memory, blocked)
        V = logits.shape[-1]
        logp = torch.log_softmax(logits, -1)
        # target distribution (1 - eps) onehot + eps / V, rows with target PAD ignored, mean over the rest
        keep = tgt_out != PAD
        nll = -logp.gather(-1, tgt_out.clamp(min=0)[..., None])[..., 0]
        smooth = -logp.sum(-1) / V
        rows = (1 - eps) * nll + eps * smooth
        loss = rows[keep].sum() / keep.sum()
        ref = torch.nn.functional.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD,
                                                label_smoothing=eps)
        assert abs(loss.item() - ref.item()) <= 1e-13 * abs(ref.item()), (loss.item(), ref.item())
        return loss, logits

    def greedy(self, src_row, limit):
        """Full recomputation of the prefix at every step (no cache): relpos decodes incrementally."""
        with torch.no_grad():
            memory, blocked = self.encode(src_row[None])
            out, margins, steps = [], [], []
            while True:
                tgt = torch.tensor([[BOS] + out])
                logits = self.decode(tgt, memory, blocked)[0, -1]
                steps.append(logits)
                top = torch.topk(logits, 2).values
                margins.append((top[0] - top[1]).item())
                best = int(torch.argmax(logits))
                if best == EOS:
                    break
                out.append(best)
                if len(out) >= limit:
                    break
            return out, min(margins), torch.stack(steps)


# ----------------------------------------------------------------------------- parameters

def fire_shapes(owner, hidden, H):
    return [(owner + "log_c", (1,)), (owner + "log_L", (1,)), (owner + "fc1.weight", (1, hidden)),
            (owner + "fc1.bias", (hidden,)), (owner + "fc2.weight", (hidden, H)), (owner + "fc2.bias", (H,))]


def parameter_shapes(s):
    """relpos's parameter names and shapes, in registration order (nn/transformer.cpp)."""
    D, F, V, H = s["d_model"], s["d_ff"], s["vocab"], s["heads"]
    dh = D // H
    t, o = s["position"]["type"], s["position"].get("options", {})
    out = [("src_embed.weight", (V, D))]
    if s["share_embeddings"] != "all":
        out.append(("tgt_embed.weight", (V, D)))
    if s["share_embeddings"] == "none":
        out += [("out_proj.weight", (D, V)), ("out_proj.bias", (V,))]
    for side in ("encoder", "decoder"):
        if t == "learned":
            out.append((f"{side}.position.weight", (int(o.get("max_len", 256)), D)))
        if t == "t5":
            out.append((f"{side}.position.relative_attention_bias", (int(o.get("num_buckets", 32)), H)))
        if t == "fire" and not o.get("per_layer", False):
            out += fire_shapes(f"{side}.position.", int(o.get("hidden", 32)), H)

    def attn(prefix, relative):
        r = [(f"{prefix}.{p}.{w}", (D, D) if w == "weight" else (D,))
             for p in ("q_proj", "k_proj", "v_proj", "out_proj") for w in ("weight", "bias")]
        if relative and t == "shaw":
            k = int(o.get("k", 16))
            shape = (H, 2 * k + 1, dh) if o.get("per_head", False) else (2 * k + 1, dh)
            if o.get("keys", True):
                r.append((prefix + ".rel_k", shape))
            if o.get("values", True) and not o.get("tie", False):
                r.append((prefix + ".rel_v", shape))
        if t == "kerple" and (relative or o.get("cross_attention", False)):
            r += [(prefix + ".kerple_log_r1", (H,)), (prefix + ".kerple_log_r2", (H,))]
        if t == "fire" and relative and o.get("per_layer", False):
            r += fire_shapes(prefix + ".fire.", int(o.get("hidden", 32)), H)
        if t == "txl" and (relative or o.get("cross_attention", False)):
            r += [(prefix + ".txl_u", (H, dh)), (prefix + ".txl_v", (H, dh)), (prefix + ".txl_w_r", (D, D))]
        if t == "cope" and relative:
            r.append((prefix + ".cope_emb", (dh, int(o.get("npos_max", 64)))))
            if prefix.startswith("encoder."):
                r.append((prefix + ".cope_emb_right", (dh, int(o.get("npos_max", 64)))))
        return r

    def ffn(prefix):
        return [(prefix + ".fc1.weight", (D, F)), (prefix + ".fc1.bias", (F,)),
                (prefix + ".fc2.weight", (F, D)), (prefix + ".fc2.bias", (D,))]

    def norm(prefix):
        return [(prefix + ".weight", (D,)), (prefix + ".bias", (D,))]

    for i in range(s["encoder_layers"]):
        p = f"encoder.layers.{i}"
        out += attn(p + ".self_attn", True) + ffn(p + ".ffn") + norm(p + ".norm1") + norm(p + ".norm2")
    for i in range(s["decoder_layers"]):
        p = f"decoder.layers.{i}"
        out += attn(p + ".self_attn", True) + attn(p + ".cross_attn", False) + ffn(p + ".ffn")
        out += norm(p + ".norm1") + norm(p + ".norm2") + norm(p + ".norm3")
    if s["norm"] == "pre":
        out += norm("encoder.norm") + norm("decoder.norm")
    return out


def init_parameters(s, gen):
    """Random, deliberately non-trivial values: LayerNorm gains away from 1, non-zero biases, relative
    tables large enough to matter, so that a swapped gain/bias or a dropped term changes the loss."""
    D = s["d_model"]
    params = {}
    for name, shape in parameter_shapes(s):
        def randn(scale):
            return torch.randn(shape, generator=gen) * scale
        if name.endswith("kerple_log_r1") or name.endswith("kerple_log_r2"):
            v = randn(0.5)  # r = exp(.) around 1: both the scale and the curvature matter
        elif name.endswith("txl_u") or name.endswith("txl_v"):
            v = randn(0.5)  # the reference's N(0, 0.02²) would hide a swapped or dropped bias
        elif name.endswith("log_c"):
            v = math.log(0.5) + randn(0.2)
        elif name.endswith("log_L"):
            v = math.log(3.5) + randn(0.1)  # L between query positions 0..6: both sides of max(L, i) occur
        elif name.endswith("embed.weight"):
            v = randn(1 / math.sqrt(D))
        elif ".norm" in name and name.endswith(".weight"):
            v = 1 + randn(0.3)
        elif name.endswith(".bias") or name.endswith("relative_attention_bias"):
            v = randn(0.3)
        elif name.endswith("cope_emb") or name.endswith("cope_emb_right"):
            v = randn(1.0)  # q·e of the positions must matter next to q·k (the reference starts at zeros)
        elif name.endswith("rel_k") or name.endswith("rel_v") or name.endswith("position.weight"):
            v = randn(0.5)
        else:  # (in, out) projections
            v = randn(1.0 / math.sqrt(shape[0]))
        params[name] = v.clone().requires_grad_(True)
    return params


# ----------------------------------------------------------------------------- npy / checkpoint

def write_npy(path, a, dtype=np.float64):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.ascontiguousarray(np.asarray(a, dtype=dtype)), allow_pickle=False)


def write_checkpoint(d, names, params):
    """relpos's checkpoint layout (experiments/train/checkpoint.cpp): params/<name>.npy, manifest.json,
    state.json (marks a complete checkpoint), rng.npy. Weights in float64: read_npy converts."""
    man = []
    for n in names:
        write_npy(os.path.join(d, "params", n + ".npy"), params[n].detach().numpy())
        man.append({"name": n, "file": f"params/{n}.npy", "shape": list(params[n].shape), "dtype": "float64"})
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump({"format": "relpos-checkpoint-1", "parameters": man}, f, indent=1)
        f.write("\n")
    np.save(os.path.join(d, "rng.npy"), np.zeros(6, dtype="<u8"), allow_pickle=False)
    with open(os.path.join(d, "state.json"), "w") as f:
        json.dump({"step": 0, "epoch": 0, "batch_in_epoch": 0, "tokens": 0, "best_valid_loss": 1e300,
                   "elapsed_seconds": 0.0, "adam_steps": 0, "config_hash": "reference-fixture"}, f)
        f.write("\n")


# ----------------------------------------------------------------------------- cases

def inverse_sqrt_lr(step, d_model, warmup, scale):
    # Vaswani et al. 5.3: lr = d^-0.5 * min(step^-0.5, step * warmup^-1.5)
    return scale * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


POSITIONS = [
    ("none", {"type": "none"}),
    ("sinusoidal", {"type": "sinusoidal"}),
    ("learned", {"type": "learned", "options": {"max_len": 12}}),
    ("shaw", {"type": "shaw", "options": {"k": 2}}),
    ("shaw_keys", {"type": "shaw", "options": {"k": 2, "values": False}}),
    ("shaw_values", {"type": "shaw", "options": {"k": 2, "keys": False}}),
    ("shaw_tied", {"type": "shaw", "options": {"k": 2, "tie": True}}),
    ("shaw_per_head", {"type": "shaw", "options": {"k": 2, "per_head": True}}),
    ("shaw_k0", {"type": "shaw", "options": {"k": 0}}),
    ("rope", {"type": "rope"}),
    ("alibi", {"type": "alibi"}),
    ("t5", {"type": "t5", "options": {"num_buckets": 8, "max_distance": 16}}),
    ("kerple", {"type": "kerple"}),
    ("fire", {"type": "fire", "options": {"hidden": 6, "c_init": 0.5, "L_init": 3.5}}),
    # max_time 1000: with D = 8 the default 10000's lowest frequency (10^-3) gives a cos row of r_t that is
    # nearly constant over distances 0..7, whose W_R gradients (1e-8 of the largest) leave Adam's second step
    # with rounding differences of 3e-11; the default is checked by tests/test_position_plugins.cpp
    ("txl", {"type": "txl", "options": {"max_time": 1000}}),
    ("xpos", {"type": "xpos"}),
    # npos_max 4: counts above 3 are clamped (7 source tokens whose gates are around 0.5 count to 3.5)
    ("cope", {"type": "cope", "options": {"npos_max": 4}}),
]


def cases():
    out = []
    for seed, (pname, pos) in enumerate(POSITIONS):
        for norm in ("post", "pre"):
            spec = {
                "name": f"{norm}_{pname}",
                "seed": 1000 + 2 * seed + (norm == "pre"),
                "vocab": 12, "d_model": 8, "heads": 2, "d_ff": 16,
                "encoder_layers": 1, "decoder_layers": 1,
                "norm": norm,
                "share_embeddings": "all", "scale_embeddings": True,
                "position": pos,
            }
            # Breadth without a cross product: two layers where stacking matters (Shaw's per-layer tables,
            # T5's one table shared by a side's layers), the other embedding-sharing modes on pre-norm cases.
            if pname in ("shaw", "t5", "fire", "txl"):
                spec["encoder_layers"] = spec["decoder_layers"] = 2
            if norm == "pre" and pname in ("none", "learned", "rope"):
                spec["share_embeddings"] = "none"
            if norm == "pre" and pname in ("sinusoidal", "alibi", "shaw_per_head"):
                spec["share_embeddings"] = "decoder"
            if norm == "pre" and pname == "none":
                spec["scale_embeddings"] = False
            # The new encodings' variants on their pre-norm cases: kerple also in encoder-decoder attention,
            # fire with a function per layer instead of one per side.
            if norm == "pre" and pname == "kerple":
                spec["position"] = {"type": "kerple", "options": {"cross_attention": True}}
            # alibi: the post-norm case has the default bidirectional form (offset), the pre-norm case the
            # symmetric one
            if norm == "pre" and pname == "alibi":
                spec["position"] = {"type": "alibi", "options": {"bidirectional": "symmetric"}}
            if norm == "pre" and pname == "fire":
                spec["position"] = {"type": "fire", "options": dict(pos["options"], per_layer=True)}
            # txl: the pre-norm case also in encoder-decoder attention, and a max_time of its own
            if norm == "pre" and pname == "txl":
                spec["position"] = {"type": "txl", "options": {"cross_attention": True, "max_time": 100}}
            # xpos: the pre-norm case with a strong decay (scale_base 4: zeta_0^(7/4) = 0.11 at distance 7)
            if norm == "pre" and pname == "xpos":
                spec["position"] = {"type": "xpos", "options": {"scale_base": 4}}
            # cope: the pre-norm case at the default npos_max (64: no clamping) and with two layers
            if norm == "pre" and pname == "cope":
                spec["position"] = {"type": "cope"}
                spec["encoder_layers"] = spec["decoder_layers"] = 2
            out.append(spec)
    return out


# One padded batch: sources x (no BOS/EOS) then PAD; decoder input BOS y then PAD; targets y EOS then PAD
# (experiments/data/batching.hpp). Lengths differ so both masks and clipping (|j - i| > k = 2) matter.
SRC = [[5, 9, 4, 11, 7, 6, 10], [8, 4, 4, 10, 6, 0, 0], [11, 5, 7, 0, 0, 0, 0]]
TGT = [[6, 4, 9, 10, 5, 8], [7, 11, 4, 5, 9, 6], [10, 8, 5]]


def batch():
    Lt = max(len(t) for t in TGT) + 1
    tin = [[BOS] + t + [PAD] * (Lt - 1 - len(t)) for t in TGT]
    tout = [t + [EOS] + [PAD] * (Lt - 1 - len(t)) for t in TGT]
    return torch.tensor(SRC), torch.tensor(tin), torch.tensor(tout)


LABEL_SMOOTHING = 0.1
ADAM = {"beta1": 0.9, "beta2": 0.98, "eps": 1e-9}
WARMUP, LR_SCALE = 4, 1.0
DECODE = {"max_len_a": 1.0, "max_len_b": 2}


def make_case(spec, root):
    gen = torch.Generator().manual_seed(spec["seed"])
    params = init_parameters(spec, gen)
    names = [n for n, _ in parameter_shapes(spec)]
    model = Reference(spec, params)
    src, tin, tout = batch()
    d = os.path.join(root, spec["name"])
    os.makedirs(d, exist_ok=True)
    write_checkpoint(os.path.join(d, "checkpoint"), names, params)

    # Greedy decode from the initial weights (before any optimiser step changes them).
    src_len = [int((r != PAD).sum()) for r in src]
    decoded, margin, step_logits = [], float("inf"), []
    for b in range(src.shape[0]):
        limit = int(DECODE["max_len_a"] * src_len[b]) + DECODE["max_len_b"]
        if spec["position"]["type"] == "learned":
            limit = min(limit, int(spec["position"]["options"]["max_len"]) - 1)
        toks, m, lg = model.greedy(src[b], max(1, limit))
        decoded.append(toks)
        step_logits.append(lg)
        margin = min(margin, m)
    T = max(len(x) for x in step_logits)
    dl = torch.zeros(src.shape[0], T, spec["vocab"])
    for b, lg in enumerate(step_logits):
        dl[b, : len(lg)] = lg
    write_npy(os.path.join(d, "decode_logits.npy"), dl.numpy())
    # The float32 run in the test must pick the same tokens: the top two logits must not nearly tie.
    assert margin > 1e-3, f"{spec['name']}: greedy top-2 margin {margin} too small"

    # Step 1: loss and gradients at the initial weights.
    opt = torch.optim.Adam([params[n] for n in names], lr=1.0, betas=(ADAM["beta1"], ADAM["beta2"]),
                           eps=ADAM["eps"], foreach=False)
    lrs, losses = [], []
    for step in (1, 2):
        opt.zero_grad(set_to_none=False)
        loss, logits = model.loss(src, tin, tout, LABEL_SMOOTHING)
        loss.backward()
        losses.append(loss.item())
        if step == 1:
            write_npy(os.path.join(d, "logits.npy"), logits.detach().numpy())
            for n in names:
                assert params[n].grad is not None, n
            write_npy(os.path.join(d, "grads.npy"), torch.cat([params[n].grad.flatten() for n in names]).numpy())
            grad_norm = math.sqrt(sum(float((params[n].grad ** 2).sum()) for n in names))
        lr = inverse_sqrt_lr(step, spec["d_model"], WARMUP, LR_SCALE)
        lrs.append(lr)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.step()
    write_npy(os.path.join(d, "adam2.npy"), torch.cat([params[n].detach().flatten() for n in names]).numpy())

    fixture = {
        "format": "relpos-reference-1",
        "name": spec["name"],
        "model": {k: spec[k] for k in ("vocab", "d_model", "heads", "d_ff", "encoder_layers", "decoder_layers",
                                       "norm", "share_embeddings", "scale_embeddings")},
        "position": {"type": spec["position"]["type"],
                     "options": {k: (json.dumps(v) if isinstance(v, bool) else str(v))
                                 for k, v in spec["position"].get("options", {}).items()}},
        "parameters": names,
        "batch": {
            "B": src.shape[0], "Ls": src.shape[1], "Lt": tin.shape[1],
            "src": src.flatten().tolist(), "tgt_in": tin.flatten().tolist(), "tgt_out": tout.flatten().tolist(),
            "src_len": src_len,
            # key padding of the source, 1 = blocked (encoder self- and encoder-decoder attention);
            # decoder self-attention is causal only, padded target rows are ignored by the loss
            "src_key_padding": (src == PAD).to(torch.long).flatten().tolist(),
            "pad": PAD, "bos": BOS, "eos": EOS,
        },
        "label_smoothing": LABEL_SMOOTHING,
        "loss": losses[0],
        "loss_after_step1": losses[1],
        "grad_norm": grad_norm,
        "adam": dict(ADAM, warmup=WARMUP, lr_scale=LR_SCALE, lr=lrs),
        "decode": dict(DECODE, tokens=decoded, steps=[len(x) for x in step_logits], min_top2_margin=margin),
        "torch_version": torch.__version__,
    }
    with open(os.path.join(d, "fixture.json"), "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    return fixture


# --check: how far a regenerated fixture may differ from the committed one. Both are float64, but another
# machine's BLAS kernels (summation order, FMA) and another torch build round differently in the last bits
# (1e-16 relative per operation). Through a tiny model's forward and backward that stays near 1e-13; Adam's
# second step divides by the square root of a second moment that may be small, and its parameters moved by
# the step then differ most: 8e-10 relative was measured for post_alibi/adam2.npy between two machines. 1e-8 is
# that with a margin, and still far below what a changed formula moves (1e-3 and more). An element is
# compared relative to its own size, or to 1e-6 of its array's largest value when it is near zero (a
# gradient that cancels to 1e-17 has no relative digits). Integers (tokens, shapes, steps) and text must
# match exactly.
RTOL = 1e-8


def relative_difference(a_path, b_path):
    """The largest relative difference of two fixture files, or None when they differ in anything but float
    values (shape, dtype, integers, text)."""
    if a_path.endswith(".npy"):
        a, b = np.load(a_path), np.load(b_path)
        if a.shape != b.shape or a.dtype != b.dtype:
            return None
        if not np.issubdtype(a.dtype, np.floating):
            return 0.0 if np.array_equal(a, b) else None
        return float_difference(a.ravel().tolist(), b.ravel().tolist())
    if a_path.endswith(".json"):
        with open(a_path) as fa, open(b_path) as fb:
            a, b = json.load(fa), json.load(fb)
        floats_a, floats_b = [], []
        if not same_but_floats(a, b, floats_a, floats_b):
            return None
        return float_difference(floats_a, floats_b)
    return None


def same_but_floats(a, b, fa, fb):
    """Whether two JSON values are equal except for their floats, which are collected into fa and fb."""
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        fa.append(a)
        fb.append(float(b))
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_but_floats(a[k], b[k], fa, fb) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_but_floats(x, y, fa, fb) for x, y in zip(a, b))
    return a == b


def float_difference(a, b):
    if not a:
        return 0.0
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if not (np.isfinite(a) == np.isfinite(b)).all() or (a[~np.isfinite(a)] != b[~np.isfinite(b)]).any():
        return float("inf")
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if not a.size:
        return 0.0
    floor = 1e-6 * max(float(np.abs(b).max()), 1e-300)
    return float((np.abs(a - b) / np.maximum(np.abs(b), floor)).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.normpath(os.path.join(here, "..", "..", "tests", "fixtures", "reference")))
    ap.add_argument("--check", action="store_true", help="regenerate into a temporary directory and compare")
    ap.add_argument("--only", nargs="+", metavar="CASE",
                    help="write (or check) only these cases, e.g. post_alibi pre_alibi; the others' files are left "
                         "as they are (regenerating a case on another machine may change its last bits)")
    args = ap.parse_args()
    known = [s["name"] for s in cases()]
    for name in args.only or []:
        if name not in known:
            ap.error(f"--only: no case '{name}'; the cases are {', '.join(known)}")
    chosen = [s for s in cases() if not args.only or s["name"] in args.only]
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    if args.check:
        tmp = tempfile.mkdtemp()
        for s in chosen:
            make_case(s, tmp)
        diffs, largest = [], [0.0, ""]
        for s in chosen:
            if not os.path.isdir(os.path.join(args.out, s["name"])):
                diffs.append(os.path.join(args.out, s["name"]) + " (missing: a new case; write it with --only " +
                             s["name"] + ")")
                continue
            cmp = filecmp.dircmp(os.path.join(tmp, s["name"]), os.path.join(args.out, s["name"]))
            stack = [cmp]
            while stack:
                c = stack.pop()
                diffs += [os.path.join(c.right, f) + " (only in one of the two)" for f in c.left_only + c.right_only]
                for f in c.diff_files:  # differing bytes: within the tolerance, or not
                    d = relative_difference(os.path.join(c.left, f), os.path.join(c.right, f))
                    where = os.path.relpath(os.path.join(c.right, f), args.out)
                    if d is None or d > RTOL:
                        diffs.append(f"{where} (differs by {d:.3g} relative, more than {RTOL:g})" if d is not None else
                                     f"{where} (differs in something other than a float64 value: shape, type, text)")
                    elif d > largest[0]:
                        largest[:] = [d, where]
                stack += c.subdirs.values()
        shutil.rmtree(tmp)
        index = os.path.join(args.out, "index.json")
        listed = json.load(open(index))["cases"] if os.path.isfile(index) else []
        if listed != known:  # the test reads the cases from it
            diffs.append(index + " (lists " + ", ".join(sorted(set(listed) ^ set(known)) or ["the cases in another order"]) +
                         " differently from the script; --only rewrites it)")
        if diffs:
            print(f"{len(diffs)} fixture file(s) differ beyond {RTOL:g} relative (float64 across BLAS kernels and torch "
                  "builds; see RTOL in this script):\n" + "\n".join(diffs))
            return 1
        print(f"fixtures up to date: {len(chosen)} case(s) equal within {RTOL:g} relative" +
              (f" (largest difference: {largest[1]}, {largest[0]:.2g})" if largest[1] else ", byte for byte"))
        return 0
    for s in chosen:
        shutil.rmtree(os.path.join(args.out, s["name"]), ignore_errors=True)
    for s in chosen:
        f = make_case(s, args.out)
        print(f"{s['name']:24s} loss {f['loss']:.6f} -> {f['loss_after_step1']:.6f}  decode {f['decode']['tokens']}")
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump({"cases": known}, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

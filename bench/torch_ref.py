#!/usr/bin/python3
"""PyTorch yardstick for relpos_bench: one training step of the same Transformer.

Same model, loss, optimizer and shapes as `relpos_bench` (bench/bench_main.cpp, train_step_bench):
post-norm encoder-decoder Transformer, embeddings N(0, d^-1/2) scaled by sqrt(d), sinusoidal absolute
positions (--pe abs) or Shaw et al. (2018) relative positions with clipping distance k, one (2k+1, d_head)
table pair shared across heads, in encoder and decoder self-attention (--pe rel), dropout 0.1 (embeddings,
attention weights, FFN inner, residual), label smoothing 0.1, Adam (0.9, 0.98, 1e-9) at lr 1e-4, random
tokens in [4, vocab), fixed lengths, no padding. --tie all shares one table between source, target and
output layer (relpos's share_embeddings).

The relative terms use the bucketed formulation, as relpos does: logits += gather(q a^K^T) over the
(Lq, Lk) bucket index clip(j - i, -k, k) + k, and out += scatter(attention weights into 2k+1 buckets) a^V;
never an (L, L, d) tensor.

Prints one line `RESULT tgt_tok_per_s=... ms_per_step=... peak_rss_mib=... gflops=... loss0=...`: medians
over the timed steps (after the untimed warm-up steps), peak RSS of this process, matmul FLOPs counted as
relpos_bench's step_flops() counts them, and the loss of the first (untimed) step, ~ln(vocab).

--family encoder_only / decoder_only: the shapes the studies train (relpos_bench's kStudyShapes: ruoss,
kazemnejad, lm), pre-norm, tied embeddings without an output bias, a final LayerNorm, dropout --dropout on the
embeddings, residuals and FFN inner layer and --attn-dropout on the attention weights, mean cross-entropy
without label smoothing, the gradient norm every update (clipped at --clip-norm when > 0), the encodings
relpos's registry names: rope (pairwise rotation of q and k), rand-rope (the same at a sorted random subset
of [0, 1024) drawn every batch, Ruoss et al. 2023), alibi (bidirectional: Ruoss et al.'s offset form), txl
(Transformer-XL's u, v and W_R per layer, sinusoidal distances j - i, gathered from an (Lq, 2L-1) product),
t5 (32 log-spaced buckets up to 128, one (32, H) table for the stack) and none.

PyTorch is only a yardstick (Debian: apt-get install python3-torch python3-numpy, run with /usr/bin/python3);
relpos never depends on it. Threads: OPENBLAS_NUM_THREADS (--threads) and OMP_NUM_THREADS (--omp-threads)
are set before torch is imported. The OpenBLAS core type is left to the caller (bench/compare_torch.sh
sets OPENBLAS_CORETYPE only where OpenBLAS falls back to an older kernel family than the CPU runs,
as relpos does).
"""
import argparse
import math
import os
import resource
import sys
import time

PAD, BOS = 0, 2


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    a = ap.add_argument
    a("--d-model", type=int, default=64)
    a("--heads", type=int, default=4)
    a("--d-ff", type=int, default=256)
    a("--enc-layers", type=int, default=2)
    a("--dec-layers", type=int, default=2)
    a("--vocab", type=int, default=1000)
    a("--batch", type=int, default=32)
    a("--src-len", type=int, default=20)
    a("--tgt-len", type=int, default=20)
    a("--family", choices=["seq2seq", "encoder_only", "decoder_only"], default="seq2seq",
      help="seq2seq: the translation shapes; encoder_only / decoder_only: the study shapes (pre-norm, tied)")
    a("--pe", choices=["abs", "rel", "rope", "rand-rope", "alibi", "txl", "t5", "none"], default="abs",
      help="seq2seq: sinusoidal absolute or Shaw relative; the study families: the encoding of relpos's registry")
    a("--attn-dropout", type=float, default=0.1, help="attention-weight dropout (study families)")
    a("--clip-norm", type=float, default=0.0, help="gradient clipping (study families; the norm is computed anyway)")
    a("--k", type=int, default=16, help="Shaw clipping distance (--pe rel)")
    a("--tie", choices=["none", "decoder", "all"], default="none",
      help="share_embeddings: none, decoder (target embedding = output layer), all (one table)")
    a("--dropout", type=float, default=0.1)
    a("--label-smoothing", type=float, default=0.1)
    a("--lr", type=float, default=1e-4)
    a("--steps", type=int, default=10, help="timed training steps")
    a("--warmup", type=int, default=3, help="untimed warm-up steps")
    a("--threads", type=int, default=1, help="OpenBLAS threads (OPENBLAS_NUM_THREADS)")
    a("--omp-threads", type=int, default=1, help="ATen/OpenMP threads (OMP_NUM_THREADS, torch.set_num_threads)")
    a("--seed", type=int, default=1)
    a("--quiet", action="store_true", help="print only the RESULT line")
    args = ap.parse_args(argv)
    if args.d_model % args.heads != 0:
        ap.error(f"--d-model {args.d_model} is not divisible by --heads {args.heads}")
    if args.d_model % 2 != 0 and args.pe == "abs":
        ap.error("--pe abs needs an even --d-model")
    study = args.family != "seq2seq"
    if study != (args.pe not in ("abs", "rel")):
        ap.error(f"--pe {args.pe} does not go with --family {args.family}")
    if args.vocab <= 4 or args.warmup < 1 or args.steps < 1:
        ap.error("need --vocab > 4, --warmup >= 1 and --steps >= 1")
    return args


ARGS = parse_args() if __name__ == "__main__" else None
if ARGS is not None:
    # Before torch is imported: both pools read these once, at load time.
    os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)
    os.environ["OMP_NUM_THREADS"] = str(ARGS.omp_threads)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402


# ----------------------------------------------------------------------------- model

def sinusoidal_table(length, d):
    # Vaswani et al. 3.5: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    angle = pos / 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(length, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return pe.to(torch.float32)


def xavier_linear(d_in, d_out, bias=True):
    lin = nn.Linear(d_in, d_out, bias=bias)
    nn.init.xavier_uniform_(lin.weight)
    if bias:
        nn.init.zeros_(lin.bias)
    return lin


class Attention(nn.Module):
    """Multi-head attention; with k >= 0, Shaw relative keys and values shared across heads (bucketed)."""

    def __init__(self, d, heads, dropout, rel_k=-1):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (xavier_linear(d, d) for _ in range(4))
        self.dropout = dropout
        self.rel = rel_k
        if rel_k >= 0:
            R = 2 * rel_k + 1
            self.rel_k = nn.Parameter(nn.init.xavier_uniform_(torch.empty(R, self.dh)))
            self.rel_v = nn.Parameter(nn.init.xavier_uniform_(torch.empty(R, self.dh)))

    def split(self, t):
        B, L, _ = t.shape
        return t.view(B, L, self.h, self.dh).transpose(1, 2)  # (B, H, L, dh)

    def forward(self, x, kv, mask=None, bucket=None):
        """mask: additive (Lq, Lk) float or None; bucket: (Lq, Lk) int64 index into 2k+1 (relative only)."""
        B, Lq, D = x.shape
        q = self.split(self.q_proj(x)) * (1.0 / math.sqrt(self.dh))  # scaled before the relative term
        k = self.split(self.k_proj(kv))
        v = self.split(self.v_proj(kv))
        logits = torch.matmul(q, k.transpose(-1, -2))  # (B, H, Lq, Lk)
        if self.rel >= 0:
            idx = bucket.expand(B, self.h, -1, -1)
            # Shaw eq. 4: e_ij += q_i . a^K[bucket(i, j)], through the (Lq, 2k+1) product
            logits = logits + torch.matmul(q, self.rel_k.t()).gather(-1, idx)
        if mask is not None:
            logits = logits + mask
        attn = F.dropout(torch.softmax(logits, dim=-1), self.dropout, self.training)
        out = torch.matmul(attn, v)  # (B, H, Lq, dh)
        if self.rel >= 0:
            # Shaw eq. 3: z_i += sum_j a_ij a^V[bucket(i, j)] = (weights summed per bucket) a^V
            R = self.rel_v.shape[0]
            per_bucket = attn.new_zeros(B, self.h, Lq, R).scatter_add_(-1, idx, attn)
            out = out + torch.matmul(per_bucket, self.rel_v)
        out = out.transpose(1, 2).reshape(B, Lq, D)
        return self.out_proj(out)


class FeedForward(nn.Module):
    def __init__(self, d, ff, dropout):
        super().__init__()
        self.fc1, self.fc2 = xavier_linear(d, ff), xavier_linear(ff, d)
        self.dropout = dropout

    def forward(self, x):
        return self.fc2(F.dropout(F.relu(self.fc1(x)), self.dropout, self.training))


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, ff, dropout, rel_k):
        super().__init__()
        self.self_attn = Attention(d, heads, dropout, rel_k)
        self.ffn = FeedForward(d, ff, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d, eps=1e-5), nn.LayerNorm(d, eps=1e-5)
        self.dropout = dropout

    def forward(self, x, bucket):
        drop = lambda t: F.dropout(t, self.dropout, self.training)  # noqa: E731
        x = self.norm1(x + drop(self.self_attn(x, x, None, bucket)))  # post-norm: LN(x + f(x))
        return self.norm2(x + drop(self.ffn(x)))


class DecoderLayer(nn.Module):
    def __init__(self, d, heads, ff, dropout, rel_k):
        super().__init__()
        self.self_attn = Attention(d, heads, dropout, rel_k)
        self.cross_attn = Attention(d, heads, dropout)
        self.ffn = FeedForward(d, ff, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d, eps=1e-5) for _ in range(3))
        self.dropout = dropout

    def forward(self, y, memory, causal, bucket):
        drop = lambda t: F.dropout(t, self.dropout, self.training)  # noqa: E731
        y = self.norm1(y + drop(self.self_attn(y, y, causal, bucket)))
        y = self.norm2(y + drop(self.cross_attn(y, memory)))
        return self.norm3(y + drop(self.ffn(y)))


class Seq2Seq(nn.Module):
    def __init__(self, a):
        super().__init__()
        d, V = a.d_model, a.vocab
        self.d, self.a = d, a
        rel_k = a.k if a.pe == "rel" else -1
        self.rel_k = rel_k
        self.src_embed = nn.Parameter(torch.randn(V, d) / math.sqrt(d))
        self.tgt_embed = self.src_embed if a.tie == "all" else nn.Parameter(torch.randn(V, d) / math.sqrt(d))
        self.out_proj = xavier_linear(d, V) if a.tie == "none" else None
        self.encoder = nn.ModuleList(EncoderLayer(d, a.heads, a.d_ff, a.dropout, rel_k) for _ in range(a.enc_layers))
        self.decoder = nn.ModuleList(DecoderLayer(d, a.heads, a.d_ff, a.dropout, rel_k) for _ in range(a.dec_layers))
        L = max(a.src_len, a.tgt_len)
        self.register_buffer("pe", sinusoidal_table(L, d) if a.pe == "abs" else torch.zeros(L, d), persistent=False)
        Lt = a.tgt_len
        causal = torch.triu(torch.full((Lt, Lt), float("-inf")), diagonal=1)
        self.register_buffer("causal", causal, persistent=False)
        self.register_buffer("src_bucket", self.bucket(a.src_len), persistent=False)
        self.register_buffer("tgt_bucket", self.bucket(a.tgt_len), persistent=False)

    def bucket(self, L):
        k = max(self.rel_k, 0)
        i = torch.arange(L)[:, None]
        j = torch.arange(L)[None, :]
        return (torch.clamp(j - i, -k, k) + k).contiguous()  # (L, L) in [0, 2k]

    def embed(self, table, ids):
        x = F.embedding(ids, table) * math.sqrt(self.d)
        if self.rel_k < 0:
            x = x + self.pe[: ids.shape[1]]
        return F.dropout(x, self.a.dropout, self.training)

    def forward(self, src, tgt_in):
        x = self.embed(self.src_embed, src)
        for layer in self.encoder:
            x = layer(x, self.src_bucket)
        y = self.embed(self.tgt_embed, tgt_in)
        for layer in self.decoder:
            y = layer(y, x, self.causal, self.tgt_bucket)
        if self.out_proj is not None:
            return self.out_proj(y)
        return F.linear(y, self.tgt_embed)  # tied output layer: y E^T, no bias


# ----------------------------------------------------------------------------- the study families

def rope_tables(pos, dh):
    # RoFormer eq. 34 on interleaved pairs (x_2i, x_2i+1), angle m theta_i, theta_i = 10000^(-2i/dh)
    theta = 10000.0 ** (-torch.arange(0, dh, 2, dtype=torch.float64) / dh)
    ang = pos.to(torch.float64)[:, None] * theta[None, :]
    return torch.cos(ang).to(torch.float32), torch.sin(ang).to(torch.float32)  # (L, dh/2)


def rope(x, cos, sin):
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


def alibi_bias(heads, L, causal):
    p = 1
    while 2 * p <= heads:
        p *= 2
    slopes = [2.0 ** (-8.0 * h / p) for h in range(1, p + 1)]
    twice = [2.0 ** (-8.0 * h / (2 * p)) for h in range(1, 2 * p + 1)]
    slopes += twice[0::2][: heads - p]
    m = torch.tensor(slopes)[:, None, None]
    i = torch.arange(L)[:, None]
    j = torch.arange(L)[None, :]
    dist = (i - j).abs().float()
    if causal:
        return -m * dist  # future keys are masked anyway
    return -m * dist + 0.5 * m * (j < i).float()  # Ruoss et al.'s offset form


def t5_buckets(L, bidirectional, nb=32, max_distance=128):
    rel = torch.arange(L)[None, :] - torch.arange(L)[:, None]  # key - query
    bucket = torch.zeros_like(rel)
    if bidirectional:
        nb //= 2
        bucket += (rel > 0).long() * nb
        n = rel.abs()
    else:
        n = (-rel).clamp(min=0)
    max_exact = nb // 2
    large = max_exact + (torch.log(n.float().clamp(min=1) / max_exact) / math.log(max_distance / max_exact)
                         * (nb - max_exact)).long()
    large = large.clamp(max=nb - 1)
    return bucket + torch.where(n < max_exact, n, large)


class StudyAttention(nn.Module):
    def __init__(self, a, causal):
        super().__init__()
        d, H = a.d_model, a.heads
        self.h, self.dh, self.pe, self.causal = H, d // H, a.pe, causal
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (xavier_linear(d, d) for _ in range(4))
        self.dropout = a.attn_dropout
        if a.pe == "txl":
            self.u = nn.Parameter(torch.randn(H, self.dh) * 0.02)
            self.v = nn.Parameter(torch.randn(H, self.dh) * 0.02)
            self.w_r = xavier_linear(d, d, bias=False)

    def split(self, t):
        B, L, _ = t.shape
        return t.view(B, L, self.h, self.dh).transpose(1, 2)  # (B, H, L, dh)

    def forward(self, x, ctx):
        B, L, D = x.shape
        scale = 1.0 / math.sqrt(self.dh)
        q = self.split(self.q_proj(x)) * scale
        k = self.split(self.k_proj(x))
        v = self.split(self.v_proj(x))
        if self.pe in ("rope", "rand-rope"):
            q, k = rope(q, *ctx["rope"]), rope(k, *ctx["rope"])
        if self.pe == "txl":
            q = q + self.u[:, None, :] * scale
        logits = torch.matmul(q, k.transpose(-1, -2))  # (B, H, L, L)
        if self.pe == "txl":
            # (q + v) . (W_R r_{j-i})_h / sqrt(d): distances -(L-1) .. L-1 projected once, gathered per (i, j)
            P = self.w_r(ctx["txl_r"]).view(-1, self.h, self.dh).transpose(0, 1)  # (H, 2L-1, dh)
            qv = q + (self.v - self.u)[:, None, :] * scale
            rel = torch.matmul(qv, P.transpose(-1, -2).unsqueeze(0))  # (B, H, L, 2L-1)
            logits = logits + rel.gather(-1, ctx["txl_idx"].expand(B, self.h, -1, -1))
        if self.pe == "alibi":
            logits = logits + ctx["alibi"]
        if self.pe == "t5":
            logits = logits + ctx["t5_table"][ctx["t5"]].permute(2, 0, 1)
        if self.causal:
            logits = logits + ctx["causal"]
        attn = F.dropout(torch.softmax(logits, dim=-1), self.dropout, self.training)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(B, L, D)
        return self.out_proj(out)


class StudyLayer(nn.Module):
    def __init__(self, a, causal):
        super().__init__()
        self.attn = StudyAttention(a, causal)
        self.ffn = FeedForward(a.d_model, a.d_ff, a.dropout)
        self.norm1, self.norm2 = nn.LayerNorm(a.d_model, eps=1e-5), nn.LayerNorm(a.d_model, eps=1e-5)
        self.dropout = a.dropout

    def forward(self, x, ctx):
        drop = lambda t: F.dropout(t, self.dropout, self.training)  # noqa: E731
        x = x + drop(self.attn(self.norm1(x), ctx))  # pre-norm: x + f(LN(x))
        return x + drop(self.ffn(self.norm2(x)))


class StudyModel(nn.Module):
    """Encoder-only (every position sees every other) or decoder-only (causal), pre-norm, tied embeddings."""

    def __init__(self, a):
        super().__init__()
        d, V, L = a.d_model, a.vocab, a.tgt_len
        self.a, self.d = a, d
        causal = a.family == "decoder_only"
        self.embed = nn.Parameter(torch.randn(V, d) / math.sqrt(d))
        self.layers = nn.ModuleList(StudyLayer(a, causal) for _ in range(a.dec_layers))
        self.norm = nn.LayerNorm(d, eps=1e-5)
        ctx = {}
        if causal:
            ctx["causal"] = torch.triu(torch.full((L, L), float("-inf")), diagonal=1)
        if a.pe == "alibi":
            ctx["alibi"] = alibi_bias(a.heads, L, causal)
        if a.pe == "t5":  # one (32, H) table shared by the layers of the stack, as relpos's t5
            ctx["t5"] = t5_buckets(L, not causal)
            self.t5_table = nn.Parameter(torch.randn(32, a.heads) / math.sqrt(d))
        if a.pe == "txl":
            t = torch.arange(-(L - 1), L, dtype=torch.float64)[:, None]
            inv = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
            ctx["txl_r"] = torch.cat([torch.sin(t * inv), torch.cos(t * inv)], dim=1).float()  # (2L-1, D)
            ctx["txl_idx"] = (torch.arange(L)[None, :] - torch.arange(L)[:, None] + L - 1).contiguous()
        self.ctx = ctx

    def forward(self, ids):
        L = ids.shape[1]
        ctx = dict(self.ctx)
        if self.a.pe == "t5":
            ctx["t5_table"] = self.t5_table
        if self.a.pe == "rope":
            ctx["rope"] = rope_tables(torch.arange(L), self.d // self.a.heads)
        if self.a.pe == "rand-rope":  # a sorted random subset of [0, 1024) per batch
            ctx["rope"] = rope_tables(torch.randperm(1024)[:L].sort().values, self.d // self.a.heads)
        x = F.dropout(F.embedding(ids, self.embed) * math.sqrt(self.d), self.a.dropout, self.training)
        for layer in self.layers:
            x = layer(x, ctx)
        return F.linear(self.norm(x), self.embed)  # tied output layer, no bias


def study_flops(a):
    """relpos_bench's study_flops(): projections, q k^T and a v over the full L x L, FFN, output layer."""
    B, L, d, ff, V = float(a.batch), float(a.tgt_len), float(a.d_model), float(a.d_ff), float(a.vocab)
    N = B * L
    layer = 4 * 2 * N * d * d + 2 * 2 * B * L * L * d + 2 * 2 * N * d * ff
    return 3 * (a.dec_layers * layer + 2 * N * d * V)


def step_flops(a):
    """Matmul FLOPs of one training step (forward x 3), as relpos_bench's step_flops() counts them: dense
    projections, attention products, FFN and output layer; relative terms, layer norm, softmax and the
    loss excluded. relpos_bench's shapes have one length and one layer count; with --src-len = --tgt-len
    and --enc-layers = --dec-layers this is its formula term for term."""
    B, d, ff, V = float(a.batch), float(a.d_model), float(a.d_ff), float(a.vocab)
    Ls, Lt = float(a.src_len), float(a.tgt_len)
    proj_s, proj_t = 2 * B * Ls * d * d, 2 * B * Lt * d * d      # one d x d projection
    enc = 4 * proj_s + 2 * 2 * B * Ls * Ls * d + 2 * 2 * B * Ls * d * ff  # q k v o, q k^T + a v, FFN
    dec = (4 * proj_t + 2 * 2 * B * Lt * Lt * d                     # self-attention
           + 2 * proj_t + 2 * proj_s + 2 * 2 * B * Lt * Ls * d      # cross: q, o on the target; k, v on the memory
           + 2 * 2 * B * Lt * d * ff)                               # FFN
    out = 2 * B * Lt * d * V
    return 3 * (a.enc_layers * enc + a.dec_layers * dec + out)


def openblas_core():
    try:
        import ctypes
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "unknown"


def main(a):
    torch.set_num_threads(a.omp_threads)
    torch.manual_seed(a.seed)
    study = a.family != "seq2seq"
    model = StudyModel(a) if study else Seq2Seq(a)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(0.9, 0.98), eps=1e-9)
    g = torch.Generator().manual_seed(7)
    B = a.batch
    src = torch.randint(4, a.vocab, (B, a.src_len), generator=g)
    tgt_out = torch.randint(4, a.vocab, (B, a.tgt_len), generator=g)
    tgt_in = torch.cat([torch.full((B, 1), BOS, dtype=torch.long), tgt_out[:, :-1]], dim=1)
    nparams = sum(p.numel() for p in model.parameters())

    times, loss0 = [], float("nan")
    for it in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if study:
            logits = model(src[:, : a.tgt_len] if a.src_len >= a.tgt_len else tgt_in)
            loss = F.cross_entropy(logits.reshape(-1, a.vocab), tgt_out.reshape(-1))
        else:
            logits = model(src, tgt_in)
            loss = F.cross_entropy(logits.reshape(-1, a.vocab), tgt_out.reshape(-1), ignore_index=PAD,
                                   label_smoothing=a.label_smoothing)
        loss.backward()
        if study:  # relpos's trainer computes the norm every update, and clips where the config says
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip_norm if a.clip_norm > 0 else float("inf"))
        opt.step()
        dt = time.perf_counter() - t0
        if it == 0:
            loss0 = loss.item()
        if it >= a.warmup:
            times.append(dt)
        if not a.quiet:
            print(f"step {it:3d} loss {loss.item():.4f} {dt * 1e3:8.1f} ms{'' if it >= a.warmup else ' (warm-up)'}",
                  file=sys.stderr)
    times.sort()
    med = times[len(times) // 2]  # the upper median, as relpos_bench's median()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux
    flops = study_flops(a) if study else step_flops(a)
    if not a.quiet:
        print(f"torch {torch.__version__}, OpenBLAS kernels {openblas_core()}, OpenBLAS threads {a.threads}, "
              f"ATen threads {torch.get_num_threads()}; {nparams} parameters, "
              f"{flops / 1e9:.2f} GFLOP per step (matmuls)", file=sys.stderr)
    print(f"RESULT tgt_tok_per_s={B * a.tgt_len / med:.1f} ms_per_step={med * 1e3:.2f} peak_rss_mib={rss:.0f} "
          f"gflops={flops / med / 1e9:.2f} loss0={loss0:.4f} params={nparams}")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))

// relpos benchmarks (`make bench`): training-step throughput and peak memory for the translation shapes
// (tiny, small, base-short, and the Multi30k tables' model), absolute and Shaw relative; the shapes the
// studies train (the Ruoss encoder, the Kazemnejad decoder, the Brown LM), each with the encodings its
// campaigns use; one relative attention layer against plain attention across lengths; and achieved GFLOP/s
// against this machine's measured sgemm peak.
//
// Each measurement runs in a forked child so its peak RSS is its own; warm-up steps are not timed;
// medians are reported. The PyTorch yardstick (bench/torch_ref.py, run side by side by
// bench/compare_torch.sh) trains the same model and prints the same figures.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "autodiff/blas.hpp"
#include "nn/optim.hpp"
#include "nn/options.hpp"
#include "nn/transformer.hpp"

using namespace relpos;
using Clock = std::chrono::steady_clock;

namespace {

int g_threads = 1;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double peak_rss_mib() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_maxrss) / 1024.0;
}

// Runs f in a child process; f writes up to a few numbers, returned to the parent.
std::vector<double> in_child(const std::function<std::vector<double>()>& f) {
    int fd[2];
    if (pipe(fd) != 0) return {};
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        blas::set_num_threads(g_threads);  // the pool's workers do not survive fork()
        std::vector<double> r = f();
        r.push_back(peak_rss_mib());
        const std::size_t n = r.size();
        if (write(fd[1], &n, sizeof n) < 0 || write(fd[1], r.data(), n * sizeof(double)) < 0) _exit(1);
        _exit(0);
    }
    close(fd[1]);
    std::size_t n = 0;
    std::vector<double> r;
    if (read(fd[0], &n, sizeof n) == sizeof n) {
        r.resize(n);
        if (read(fd[0], r.data(), n * sizeof(double)) != ssize_t(n * sizeof(double))) r.clear();
    }
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return r;
}

struct BenchShape {
    const char* name;
    std::size_t d, heads, ff, layers, vocab, batch, len;
    const char* tie = "none";  // share_embeddings: none (the shapes) or all (the tables' model)
};
const BenchShape kShapes[] = {
    {"tiny", 64, 4, 256, 2, 1000, 32, 20},
    {"small", 256, 8, 1024, 3, 8000, 64, 30},
    {"base-short", 512, 8, 2048, 6, 8000, 16, 32},
    // the Multi30k tables' model (2+2, d 128, 4 heads, d_ff 512, 4000 pieces) on ~2,000-token batches
    {"tables", 128, 4, 512, 2, 4000, 64, 32, "all"},
};

// Matmul FLOPs of one training step (forward x 3), counted as bench/torch_ref.py counts them: dense
// gemms of the projections, attention products, FFN and output layer; relative terms excluded.
double step_flops(const BenchShape& s) {
    const double B = double(s.batch), L = double(s.len), d = double(s.d), ff = double(s.ff), V = double(s.vocab);
    const double N = B * L;
    const double proj = 2 * N * d * d;          // one d x d projection
    const double attn = 2 * 2 * B * L * L * d;  // q k^T and a v over all heads
    const double ffn = 2 * 2 * N * d * ff;
    const double enc = 4 * proj + attn + ffn;
    const double dec = 8 * proj + 2 * attn + ffn;  // self + cross
    const double out = 2 * N * d * V;
    return 3 * (double(s.layers) * (enc + dec) + out);
}

std::vector<double> train_step_bench(const BenchShape& s, bool rel, int steps, int warmup) {
    nn::TransformerConfig c;
    c.src_vocab = c.tgt_vocab = s.vocab;
    c.dims.d_model = s.d;
    c.dims.heads = s.heads;
    c.dims.d_ff = s.ff;
    c.encoder_layers = c.decoder_layers = s.layers;
    c.share_embeddings = s.tie;  // torch_ref.py's --tie
    c.seed = 1;
    auto pf = [&](const nn::PositionContext& ctx) {
        std::vector<std::shared_ptr<nn::PositionEncoding<float>>> v;
        nn::MapOptions o(rel ? std::map<std::string, std::string>{{"k", "16"}} : std::map<std::string, std::string>{});
        v.push_back(nn::make_position<float>(rel ? "shaw" : "sinusoidal", o, ctx));
        return v;
    };
    nn::Transformer<float> model(c, pf);
    nn::Adam<float> opt(model.named_parameters());
    Rng rng(7);
    const std::size_t B = s.batch, L = s.len;
    std::vector<std::int32_t> src(B * L), tin(B * L), tout(B * L);
    for (auto& x : src) x = 4 + std::int32_t(rng.below(s.vocab - 4));
    for (auto& x : tout) x = 4 + std::int32_t(rng.below(s.vocab - 4));
    for (std::size_t b = 0; b < B; ++b) {
        tin[b * L] = 2;
        for (std::size_t t = 1; t < L; ++t) tin[b * L + t] = tout[b * L + t - 1];
    }
    std::vector<double> times;
    double loss0 = 0;  // the first step's loss, ~ln(vocab): a sanity check against torch_ref.py's loss0
    for (int it = 0; it < warmup + steps; ++it) {
        const auto t0 = Clock::now();
        opt.zero_grad();
        auto m = model.padding_mask(src, B, L);
        auto mem = model.encode(src, B, L, m);
        auto logits = model.decode(tin, B, L, mem, m);
        CrossEntropyOptions o;
        o.label_smoothing = 0.1;
        auto loss = cross_entropy(logits, tout, o);
        logits = Var<float>();
        mem = Var<float>();
        if (it == 0) loss0 = loss.item();
        loss.backward();
        opt.step(1e-4);
        if (it >= warmup) times.push_back(seconds_since(t0));
    }
    const double med = median(times);
    return {double(B * L) / med, med * 1e3, double(model.num_parameters()), step_flops(s) / med / 1e9, loss0};
}

// The shapes the studies train, as their configs set them (model, batch budget, clipping), on fixed-length
// batches of random tokens: B rows of L tokens, every position scored.
//   ruoss: configs/ruoss (encoder-only, pre-norm, 5 x d 64, 8 heads, d_ff 256, vocabulary 8 tied, dropout 0.1,
//          no attention dropout, 4,096-token batches: 64 rows of 64, the token-weighted mean of its 3-81);
//   kazemnejad: configs/kazemnejad (decoder-only, pre-norm, 4 x d 128, 4 heads, d_ff 512, vocabulary 106 tied,
//          dropout and attention dropout 0.1, clip_norm 1, 1,536-token batches: 64 rows of 24);
//   lm: configs/lm_converged (decoder-only, pre-norm, 2 x d 128, 4 heads, d_ff 512, vocabulary 4,000 tied,
//          dropout and attention dropout 0.1, 64 rows of the 64-token context);
//   ruoss-lengths: the ruoss model on batches of one length each, as its trainer makes them: the lengths
//          2l + 1 for l = 1 .. 40 in turn (3 to 81 tokens), each batch 4,096 / L rows; the figures are over
//          whole passes through the 40 lengths (tokens over seconds, not a median), so the tiles of a few
//          dozen rows that the 64 x 64 batch never makes are in them. Not in bench/torch_ref.py.
// One update is what the trainer does: forward, mean cross-entropy (no label smoothing), backward, the
// gradient norm (clipped where the config clips), Adam.
struct StudyPe {
    const char* name;  // the pe column of the output
    const char* type;  // the registry's name
    std::vector<std::pair<std::string, std::string>> options;
};
struct StudyShape {
    const char* name;
    nn::Family family;
    std::size_t d, heads, ff, layers, vocab, batch, len;  // len 0: Ruoss et al.'s lengths in turn (above)
    double attention_dropout, clip_norm;
    std::vector<StudyPe> pes;
};
constexpr std::size_t kRuossLengths = 40, kRuossTokens = 4096;
const StudyShape kStudyShapes[] = {
    {"ruoss", nn::Family::EncoderOnly, 64, 8, 256, 5, 8, 64, 64, 0.0, 0.0,
     {{"rope", "rope", {}}, {"alibi", "alibi", {}}, {"txl", "txl", {}}, {"rand-rope", "rope", {{"randomized", "1024"}}}}},
    {"kazemnejad", nn::Family::DecoderOnly, 128, 4, 512, 4, 106, 64, 24, 0.1, 1.0,
     {{"rope", "rope", {}}, {"alibi", "alibi", {}}, {"t5", "t5", {}}, {"none", "none", {}}}},
    {"lm", nn::Family::DecoderOnly, 128, 4, 512, 2, 4000, 64, 64, 0.1, 0.0,
     {{"rope", "rope", {}}, {"alibi", "alibi", {}}}},
    {"ruoss-lengths", nn::Family::EncoderOnly, 64, 8, 256, 5, 8, 0, 0, 0.0, 0.0,
     {{"rope", "rope", {}}, {"alibi", "alibi", {}}, {"txl", "txl", {}}, {"rand-rope", "rope", {{"randomized", "1024"}}}}},
};

// The batch of update `it` of a shape: (rows, length).
std::pair<std::size_t, std::size_t> study_batch(const StudyShape& s, int it) {
    if (s.len > 0) return {s.batch, s.len};
    const std::size_t L = 2 * (std::size_t(it) % kRuossLengths + 1) + 1;
    return {kRuossTokens / L, L};
}

// Matmul FLOPs of one update (forward x 3), as bench/torch_ref.py counts them for these shapes: the four
// projections, q k^T and a v over the full L x L (causal or not), the FFN, the output layer; position terms
// excluded.
double study_flops(const StudyShape& s, int it) {
    const auto [rows, len] = study_batch(s, it);
    const double B = double(rows), L = double(len), d = double(s.d), ff = double(s.ff), V = double(s.vocab);
    const double N = B * L;
    const double layer = 4 * 2 * N * d * d + 2 * 2 * B * L * L * d + 2 * 2 * N * d * ff;
    return 3 * (double(s.layers) * layer + 2 * N * d * V);
}

std::vector<double> study_step_bench(const StudyShape& s, const StudyPe& pe, int steps, int warmup) {
    nn::TransformerConfig c;
    c.family = s.family;
    c.src_vocab = c.tgt_vocab = s.vocab;
    c.dims.d_model = s.d;
    c.dims.heads = s.heads;
    c.dims.d_ff = s.ff;
    c.dims.dropout = 0.1;
    c.dims.attention_dropout = s.attention_dropout;
    c.dims.norm = nn::NormOrder::Pre;
    c.encoder_layers = c.decoder_layers = s.layers;
    c.share_embeddings = "all";
    c.seed = 1;
    auto pf = [&](const nn::PositionContext& ctx) {
        std::vector<std::shared_ptr<nn::PositionEncoding<float>>> v;
        nn::MapOptions o(std::map<std::string, std::string>(pe.options.begin(), pe.options.end()));
        v.push_back(nn::make_position<float>(pe.type, o, ctx));
        return v;
    };
    nn::Transformer<float> model(c, pf);
    auto named = model.named_parameters();
    nn::Adam<float> opt(named);
    Rng rng(7);
    // one batch per length the shape cycles through (a fixed-length shape has one)
    const int n_batches = s.len > 0 ? 1 : int(kRuossLengths);
    if (s.len == 0) steps = (steps + n_batches - 1) / n_batches * n_batches;  // whole passes over the lengths
    std::vector<std::vector<std::int32_t>> ins(n_batches), outs(n_batches);
    for (int i = 0; i < n_batches; ++i) {
        const auto [B, L] = study_batch(s, i);
        ins[i].resize(B * L);
        outs[i].resize(B * L);
        for (auto& x : ins[i]) x = 4 + std::int32_t(rng.below(s.vocab - 4));
        for (auto& x : outs[i]) x = 4 + std::int32_t(rng.below(s.vocab - 4));
    }
    std::vector<double> times;
    double loss0 = 0, tokens = 0, flops = 0;
    for (int it = 0; it < warmup + steps; ++it) {
        const auto [B, L] = study_batch(s, it);
        const auto& in = ins[it % n_batches];
        const auto& out = outs[it % n_batches];
        const auto t0 = Clock::now();
        opt.zero_grad();
        Var<float> logits = s.family == nn::Family::EncoderOnly ? model.forward_bidirectional(in, B, L)
                                                                : model.forward_causal(in, B, L);
        auto loss = cross_entropy(logits, out, CrossEntropyOptions{});
        logits = Var<float>();
        if (it == 0) loss0 = loss.item();
        loss.backward();
        const double gnorm = s.clip_norm > 0 ? nn::clip_grad_norm(named, s.clip_norm) : nn::grad_norm(named);
        if (!std::isfinite(gnorm)) return {};
        opt.step(1e-4);
        if (it >= warmup) {
            times.push_back(seconds_since(t0));
            tokens += double(B * L);
            flops += study_flops(s, it);
        }
    }
    if (s.len == 0) {  // over whole passes: every length weighs as the trainer weighs it
        double total = 0;
        for (double t : times) total += t;
        return {tokens / total, total / double(times.size()) * 1e3, double(model.num_parameters()), flops / total / 1e9, loss0};
    }
    const double med = median(times);
    return {double(s.batch * s.len) / med, med * 1e3, double(model.num_parameters()), study_flops(s, 0) / med / 1e9, loss0};
}

// One self-attention layer (B=4, d=256, h=8) forward + backward: plain or Shaw k = 16.
std::vector<double> attention_bench(std::size_t L, bool rel, int reps) {
    const std::size_t B = 4, d = 256, H = 8;
    Rng init(3), drop(4);
    std::vector<std::shared_ptr<nn::PositionEncoding<float>>> pos;
    if (rel) {
        nn::MapOptions o(std::map<std::string, std::string>{{"k", "16"}});
        pos.push_back(nn::make_position<float>("shaw", o, {d, H, nn::Side::Encoder, &init}));
    }
    nn::AttentionSite site{nn::AttentionSite::EncoderSelf, 0, H, d / H};
    nn::MultiHeadAttention<float> mha(d, H, 0.0, site, pos, init, drop);
    Array<float> xv = uninit<float>({B, L, d});
    for (auto& v : xv) v = float(init.normal());
    std::vector<double> times;
    for (int it = 0; it < reps + 1; ++it) {
        Var<float> x(xv, true);
        const auto t0 = Clock::now();
        Var<float> y = mha.forward(x, x, nullptr);
        y.backward(full<float>(y.shape(), 1.f));
        if (it > 0) times.push_back(seconds_since(t0));
        mha.zero_grad();
    }
    return {median(times) * 1e3};
}

// sgemm peak: large square products, best of several.
double gemm_peak_gflops() {
    const std::size_t n = 2048;
    std::vector<float> a(n * n, 1.f), b(n * n, 0.5f), c(n * n);
    double best = 0;
    for (int i = 0; i < 5; ++i) {
        const auto t0 = Clock::now();
        blas::gemm(false, false, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
        best = std::max(best, 2.0 * double(n) * n * n / seconds_since(t0) / 1e9);
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    blas::tune_process(argv);
    CLI::App app{"relpos benchmarks: training steps, relative attention, gemm peak (medians)"};
    int threads = 1, steps = 10, warmup = 3, reps = 5;
    std::vector<std::string> only;
    bool no_attention = false;
    std::vector<std::size_t> lengths{32, 128, 512, 1024};
    app.add_option("--threads", threads, "threads of relpos's pool (gemms are split over it; OpenBLAS itself runs single-threaded)");
    app.add_option("--steps", steps, "timed training steps per shape");
    app.add_option("--warmup", warmup, "untimed warm-up steps");
    app.add_option("--reps", reps, "timed repetitions of the attention layer");
    app.add_option("--only", only,
                   "shapes to run: tiny, small, base-short, tables, ruoss, kazemnejad, lm, ruoss-lengths (default all)");
    std::vector<std::string> pes;
    app.add_option("--pe", pes, "encodings to run (default each shape's all): abs rel for the translation shapes; "
                                "the study shapes' names listed below");
    app.add_flag("--no-attention", no_attention, "skip the attention-layer sweep");
    app.add_option("--lengths", lengths, "sequence lengths of the attention-layer sweep (default 32 128 512 1024)");
    std::string shapes = "Shapes (--only), each trained with --pe abs and rel (Shaw k = 16):";
    for (const BenchShape& s : kShapes)
        shapes += fmt::format("\n  {:<11} d_model {}, {} heads, d_ff {}, {}+{} layers, vocab {}, batch {} x {} tokens, tie {}",
                              s.name, s.d, s.heads, s.ff, s.layers, s.layers, s.vocab, s.batch, s.len, s.tie);
    shapes += "\nStudy shapes (pre-norm, tied embeddings, every position scored):";
    for (const StudyShape& s : kStudyShapes) {
        std::string names;
        for (const StudyPe& p : s.pes) names += std::string(names.empty() ? "" : " ") + p.name;
        const std::string batch = s.len > 0 ? fmt::format("batch {} x {} tokens", s.batch, s.len)
                                            : fmt::format("batches of {} tokens at lengths 3, 5 .. 81 in turn", kRuossTokens);
        shapes += fmt::format("\n  {:<11} {}, d_model {}, {} heads, d_ff {}, {} layers, vocab {}, {}, clip_norm {}; pe {}",
                              s.name, nn::family_name(s.family), s.d, s.heads, s.ff, s.layers, s.vocab, batch,
                              s.clip_norm, names);
    }
    app.footer(shapes + "\nPyTorch side by side: bench/compare_torch.sh (bench/torch_ref.py).");
    CLI11_PARSE(app, argc, argv);
    g_threads = threads;

    fmt::print("relpos bench: {} thread(s) (relpos's pool; OpenBLAS single-threaded), OpenBLAS kernels {}\n", threads,
               blas::core_name());
    auto peak = in_child([] { return std::vector<double>{gemm_peak_gflops()}; });
    const double gpeak = peak.empty() ? 0 : peak[0];
    fmt::print("sgemm peak (2048^3, best of 5): {:.1f} GFLOP/s\n\n", gpeak);

    fmt::print("{:<11} {:<4} {:>10} {:>12} {:>10} {:>9} {:>8} {:>10} {:>8}\n", "shape", "pe", "params", "tgt tok/s",
               "ms/step", "GFLOP/s", "of peak", "peak MiB", "loss0");
    for (const BenchShape& s : kShapes) {
        if (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end()) continue;
        for (bool rel : {false, true}) {
            if (!pes.empty() && std::find(pes.begin(), pes.end(), rel ? "rel" : "abs") == pes.end()) continue;
            auto r = in_child([&] { return train_step_bench(s, rel, steps, warmup); });
            if (r.size() < 6) {
                fmt::print("{:<11} {:<4} failed\n", s.name, rel ? "rel" : "abs");
                continue;
            }
            fmt::print("{:<11} {:<4} {:>10.0f} {:>12.0f} {:>10.1f} {:>9.1f} {:>7.0f}% {:>10.0f} {:>8.4f}\n", s.name,
                       rel ? "rel" : "abs", r[2], r[0], r[1], r[3], gpeak > 0 ? 100 * r[3] / gpeak : 0, r[5], r[4]);
            std::fflush(stdout);
        }
    }
    for (const StudyShape& s : kStudyShapes) {
        if (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end()) continue;
        for (const StudyPe& pe : s.pes) {
            if (!pes.empty() && std::find(pes.begin(), pes.end(), pe.name) == pes.end()) continue;
            auto r = in_child([&] { return study_step_bench(s, pe, steps, warmup); });
            if (r.size() < 6) {
                fmt::print("{:<11} {:<4} failed\n", s.name, pe.name);
                continue;
            }
            fmt::print("{:<11} {:<4} {:>10.0f} {:>12.0f} {:>10.1f} {:>9.1f} {:>7.0f}% {:>10.0f} {:>8.4f}\n", s.name, pe.name,
                       r[2], r[0], r[1], r[3], gpeak > 0 ? 100 * r[3] / gpeak : 0, r[5], r[4]);
            std::fflush(stdout);
        }
    }
    if (!no_attention) {
        fmt::print("\none self-attention layer, B=4 d=256 h=8, forward+backward (median of {}):\n", reps);
        fmt::print("{:>6} {:>12} {:>12} {:>8} {:>14} {:>14}\n", "L", "plain ms", "shaw k=16 ms", "ratio", "plain MiB",
                   "shaw MiB");
        for (std::size_t L : lengths) {
            auto p = in_child([&] { return attention_bench(L, false, reps); });
            auto r = in_child([&] { return attention_bench(L, true, reps); });
            if (p.size() < 2 || r.size() < 2) continue;
            fmt::print("{:>6} {:>12.1f} {:>12.1f} {:>7.2f}x {:>14.0f} {:>14.0f}\n", L, p[0], r[0], r[0] / p[0], p[1], r[1]);
            std::fflush(stdout);
        }
    }
    return 0;
}

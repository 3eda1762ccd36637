#include "experiments/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autodiff/blas.hpp"
#include "experiments/batching.hpp"
#include "experiments/bleu.hpp"
#include "experiments/corpus.hpp"
#include "experiments/progress.hpp"
#include "experiments/synthetic.hpp"
#include "experiments/trainer.hpp"

namespace relpos {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- provenance

std::string source_commit() {
    std::string out;
    if (FILE* p = popen("git rev-parse --short=12 HEAD 2>/dev/null", "r")) {
        char buf[64];
        while (fgets(buf, sizeof buf, p)) out += buf;
        pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    if (out.empty()) return "unknown";
    if (FILE* p = popen("git status --porcelain --untracked-files=no 2>/dev/null | head -1", "r")) {
        char buf[256];
        if (fgets(buf, sizeof buf, p)) out += "+dirty";
        pclose(p);
    }
    return out;
}

std::string machine_description() {
    std::string model = "unknown CPU";
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            model = line.substr(line.find(':') + 2);
            break;
        }
    return fmt::format("{}, {} cores, OpenBLAS kernels {}", model, std::thread::hardware_concurrency(), blas::core_name());
}

namespace {

std::string now_iso() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

void write_atomic(const fs::path& path, const std::string& text) {
    const fs::path tmp = path.string() + ".tmp";
    {
        std::ofstream f(tmp);
        f << text;
        if (!f) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
    }
    fs::rename(tmp, path);
}

constexpr std::uint64_t SYNTHETIC_DATA_SEED = 20180306;  // data stays fixed across model seeds

double physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? double(pages) * double(page) : 1e12;
}

// Synthetic sizes that cannot fit in memory are config errors, found before generating anything.
void check_synthetic_fits(const ExperimentConfig& cfg) {
    const auto& s = cfg.data.synthetic;
    // an example: two vectors of int32 ids (source, target) plus their headers
    auto bytes = [](long n, const LengthRange& r) { return double(n) * (2.0 * 4.0 * double(r.max) + 64.0); };
    const double need = bytes(s.train_size, s.train_len) + bytes(s.valid_size, s.train_len) + bytes(s.test_size, s.test_len);
    const double have = physical_memory_bytes();
    if (need <= have / 2) return;
    const char* key = bytes(s.train_size, s.train_len) >= bytes(s.test_size, s.test_len) ? "train_size" : "test_size";
    throw ConfigError(fmt::format("{}: data.synthetic.{}: the synthetic examples would need about {:.3g} GiB, more than "
                                  "half of this machine's {:.0f} GiB; use fewer or shorter examples",
                                  cfg.source, key, need / (1 << 30), have / (1 << 30)));
}

}  // namespace

// ---------------------------------------------------------------- data

std::string Dataset::detokenize(const std::vector<std::int32_t>& ids) const {
    if (subword) return subword->decode(ids);
    return format_ids(ids);
}

Dataset load_dataset(const ExperimentConfig& cfg, const std::string& cache_dir,
                     const std::function<void(const std::string&)>& log) {
    auto say = [&](const std::string& s) {
        if (log) log(s);
    };
    Dataset d;
    const auto& dc = cfg.data;
    d.valid_split = dc.valid_split;
    std::set<std::string> wanted(cfg.eval.splits.begin(), cfg.eval.splits.end());
    wanted.insert(dc.valid_split);
    const auto tasks = synthetic_task_names();
    if (std::find(tasks.begin(), tasks.end(), dc.task) != tasks.end()) {
        d.synthetic = true;
        check_synthetic_fits(cfg);
        const auto& s = dc.synthetic;
        const std::size_t ns = static_cast<std::size_t>(s.n_symbols);
        // The generator's own limits (e.g. n_symbols) are reported against the config that set them.
        auto located = [&](auto&& f) {
            try {
                return f();
            } catch (const DataError& e) {
                throw DataError(fmt::format("{}: data.synthetic: {}", cfg.source, e.what()));
            }
        };
        d.vocab = synthetic_vocab_size(ns);
        d.train = located([&] { return generate(dc.task, s.train_size, s.train_len.min, s.train_len.max, ns, SYNTHETIC_DATA_SEED); });
        auto make_split = [&](std::size_t n, const LengthRange& r, std::uint64_t seed) {
            EvalSplit e;
            e.examples = located([&] { return generate(dc.task, n, r.min, r.max, ns, seed); });
            for (auto& ex : e.examples) {
                e.sources.push_back(format_ids(ex.src));
                e.refs.push_back(format_ids(ex.tgt));
            }
            e.refs_raw = e.refs;
            return e;
        };
        // "val": held-out examples of the training lengths; "test": the longer test lengths.
        d.splits[dc.valid_split] = make_split(s.valid_size, s.train_len, SYNTHETIC_DATA_SEED + 1);
        for (const auto& name : wanted)
            if (name != dc.valid_split && name != "train") d.splits[name] = make_split(s.test_size, s.test_len, SYNTHETIC_DATA_SEED + 2);
        say(fmt::format("synthetic task {}: {} training examples (lengths {}-{}), vocabulary {}", dc.task,
                        d.train.size(), s.train_len.min, s.train_len.max, d.vocab));
    } else if (dc.task == "multi30k") {
        const std::string ctx = fmt::format("key data.dir = {} in {}", dc.dir, cfg.source);
        // Every file is read and checked (present, UTF-8, line-aligned) before the subword model is
        // trained and cached, so that a bad file is reported before anything is written.
        ParallelCorpus train = load_multi30k(dc.dir, "train", dc.src, dc.tgt, dc.tokenized, ctx);
        std::map<std::string, ParallelCorpus> corpora;
        std::map<std::string, std::vector<std::string>> raw_refs;
        for (const auto& name : wanted) {
            corpora[name] = name == "train" ? train : load_multi30k(dc.dir, name, dc.src, dc.tgt, dc.tokenized, ctx);
            raw_refs[name] = dc.tokenized ? load_multi30k(dc.dir, name, dc.src, dc.tgt, false, ctx).tgt : corpora[name].tgt;
        }
        SubwordOptions so;
        so.vocab_size = static_cast<std::size_t>(dc.vocab_size);
        so.model_type = dc.subword_model;
        try {
            d.subword = std::make_shared<Subword>(Subword::train_or_load(joint_sentences(train), so, cache_dir));
        } catch (const DataError& e) {
            const bool training = std::string(e.what()).rfind("SentencePiece training failed", 0) == 0;
            throw DataError(fmt::format("{}: {}{}", cfg.source, training ? "data.vocab_size: " : "", e.what()));
        }
        say(fmt::format("subword vocabulary: {} pieces ({} {})", d.subword->vocab_size(),
                        d.subword->trained() ? "trained, cached at" : "reused from", d.subword->model_path()));
        d.vocab = d.subword->vocab_size();
        auto all = encode_corpus(*d.subword, train);
        std::size_t dropped = 0;
        d.train = filter_by_length(all, static_cast<std::size_t>(dc.max_len), &dropped);
        if (dc.max_train_examples > 0 && d.train.size() > static_cast<std::size_t>(dc.max_train_examples))
            d.train.resize(static_cast<std::size_t>(dc.max_train_examples));
        say(fmt::format("multi30k {}->{}{}: {} training pairs ({} longer than {} subwords dropped)", dc.src, dc.tgt,
                        dc.tokenized ? " (tokenized, lowercased)" : "", d.train.size(), dropped, dc.max_len));
        for (const auto& name : wanted) {
            ParallelCorpus& c = corpora.at(name);
            EvalSplit e;
            e.examples = encode_corpus(*d.subword, c);
            e.sources = std::move(c.src);
            e.refs = std::move(c.tgt);
            e.refs_raw = std::move(raw_refs.at(name));
            d.splits[name] = std::move(e);
        }
    } else {
        std::string list = "multi30k";
        for (auto& t : tasks) list += ", " + t;
        throw ConfigError(fmt::format("{}: data.task: '{}' is not a known task; known: {}", cfg.source, dc.task, list));
    }
    auto longest = [&](const std::vector<Example>& ex) {
        for (auto& e : ex) {
            d.longest_source = std::max(d.longest_source, e.src.size());
            d.longest_target = std::max(d.longest_target, e.tgt.size() + 1);
        }
    };
    longest(d.train);
    for (auto& [n, s] : d.splits) longest(s.examples);
    return d;
}

// ---------------------------------------------------------------- model

namespace {

// A model that cannot fit in memory is a config error, reported before any allocation (an absurd
// d_model would otherwise end in std::bad_alloc, an OOM kill, or a size_t overflow inside xtensor).
void check_model_fits(const ExperimentConfig& cfg, std::size_t vocab) {
    const auto& m = cfg.model;
    const double d = double(m.d_model), ff = double(m.d_ff), V = double(vocab);
    const double E = double(m.encoder_layers), D = double(m.decoder_layers);
    // embeddings + output projection, then per layer: attention (4 d^2) and feed-forward (2 d d_ff);
    // a decoder layer has a second (cross) attention.
    const double params = 2 * V * d + E * (4 * d * d + 2 * d * ff) + D * (8 * d * d + 2 * d * ff);
    const double need = params * sizeof(float) * 4;  // weights, gradients, Adam's two moments
    const double have = physical_memory_bytes();
    if (need <= have) return;
    throw ConfigError(fmt::format(
        "{}: model.d_model: a model with d_model {}, d_ff {} and {} + {} layers has at least {:.3g} parameters and "
        "needs at least {:.3g} GiB to train, more than this machine's {:.0f} GiB; make it smaller",
        cfg.source, m.d_model, m.d_ff, m.encoder_layers, m.decoder_layers, params, need / (1 << 30), have / (1 << 30)));
}

}  // namespace

std::unique_ptr<nn::Transformer<float>> build_model(const ExperimentConfig& cfg, std::size_t vocab,
                                                    std::size_t longest_source, std::size_t longest_target) {
    check_model_fits(cfg, vocab);
    const auto& m = cfg.model;
    nn::TransformerConfig tc;
    tc.src_vocab = tc.tgt_vocab = vocab;
    tc.dims.d_model = static_cast<std::size_t>(m.d_model);
    tc.dims.heads = static_cast<std::size_t>(m.heads);
    tc.dims.d_ff = static_cast<std::size_t>(m.d_ff);
    tc.dims.dropout = m.dropout;
    tc.dims.attention_dropout = m.attention_dropout;
    tc.dims.norm = m.norm == "pre" ? nn::NormOrder::Pre : nn::NormOrder::Post;
    tc.encoder_layers = static_cast<std::size_t>(m.encoder_layers);
    tc.decoder_layers = static_cast<std::size_t>(m.decoder_layers);
    tc.share_embeddings = m.share_embeddings;
    tc.scale_embeddings = m.scale_embeddings;
    tc.pad_id = PAD_ID;
    tc.seed = static_cast<std::uint64_t>(cfg.seed);
    const auto specs = m.position;
    auto factory = [specs](const nn::PositionContext& ctx) {
        std::vector<std::shared_ptr<nn::PositionEncoding<float>>> out;
        for (const auto& s : specs) {
            YamlOptions opts = s.options();
            try {
                out.push_back(nn::make_position<float>(s.type, opts, ctx));
            } catch (const nn::OptionError& e) {
                throw ConfigError(e.what());
            }
        }
        return out;
    };
    auto model = std::make_unique<nn::Transformer<float>>(tc, factory);
    auto check = [&](std::size_t limit, std::size_t need, const char* side) {
        if (need <= limit) return;
        const std::string what = fmt::format(
            "the learned position table holds {} positions but the longest {} in the data needs {}; raise max_len to at least {}",
            limit, side, need, need);
        for (const auto& s : specs)
            if (s.type == "learned") {
                try {
                    s.options().fail("max_len", what);  // names the file, line and key (or the override)
                } catch (const nn::OptionError& e) {
                    throw ConfigError(e.what());
                }
            }
        throw ConfigError(fmt::format("{}: model.position: {}", cfg.source, what));
    };
    if (longest_source) check(model->max_source_length(), longest_source, "source sequence");
    if (longest_target) check(model->max_target_length(), longest_target + 1, "target sequence (with BOS/EOS)");
    return model;
}

DecodeOptions decode_options(const EvalConfig& e, std::size_t beam_override) {
    DecodeOptions o;
    o.beam = beam_override ? beam_override : static_cast<std::size_t>(e.beam);
    o.alpha = e.alpha;
    o.max_len_a = e.max_len_a;
    o.max_len_b = static_cast<std::size_t>(e.max_len_b);
    o.bos = BOS_ID;
    o.eos = EOS_ID;
    o.pad = PAD_ID;
    return o;
}

std::vector<std::string> translate_split(const nn::Transformer<float>& model, const Dataset& data,
                                         const std::vector<Example>& examples, const DecodeOptions& opt,
                                         std::size_t batch_tokens) {
    std::vector<std::string> hyps(examples.size());
    BatchOptions bo;
    bo.max_tokens = batch_tokens;
    for (const Batch& b : eval_batches(examples, bo)) {
        auto out = translate_batch(model, b.src, b.B, b.Ls, b.src_len, opt);
        for (std::size_t i = 0; i < b.B; ++i) hyps[b.index[i]] = data.detokenize(out[i]);
    }
    return hyps;
}

std::map<std::string, double> score_split(const nn::Transformer<float>& model, const Dataset& data,
                                          const EvalSplit& split, const std::vector<std::string>& hyps,
                                          const ExperimentConfig& cfg, std::map<std::string, std::string>* sigs) {
    std::map<std::string, double> m;
    std::optional<EvalLoss> el;
    for (const auto& name : cfg.eval.metrics) {
        if (name == "bleu_tok") {
            BleuOptions bo;
            bo.tokenize = "none";
            auto r = corpus_bleu(hyps, split.refs, bo);
            m[name] = r.score;
            if (sigs) (*sigs)[name] = r.signature;
        } else if (name == "bleu") {
            // sacreBLEU's 13a against the raw references. A model trained on the lowercased Moses-tokenized
            // text is scored after undoing the Moses escapes and apostrophe splits, case-insensitively
            // (signature case:lc); without a full Moses detokenizer this is close to, not equal to, the
            // number a detokenizing pipeline would get. bleu_tok is the figure the Multi30k literature reports.
            BleuOptions bo;
            std::vector<std::string> h = hyps;
            if (cfg.data.tokenized && !data.synthetic) {
                bo.lowercase = true;
                for (auto& x : h) x = moses_untokenize(x);
            }
            auto r = corpus_bleu(h, split.refs_raw, bo);
            m[name] = r.score;
            if (sigs) (*sigs)[name] = r.signature;
        } else if (name == "loss" || name == "ppl") {
            if (!el) el = evaluate_loss(model, split.examples, static_cast<std::size_t>(cfg.eval.batch_tokens));
            m[name] = name == "loss" ? el->loss : el->ppl;
        } else if (name == "accuracy") {  // exact match of whole output sequences
            std::size_t ok = 0;
            for (std::size_t i = 0; i < hyps.size(); ++i) ok += hyps[i] == split.refs[i];
            m[name] = hyps.empty() ? 0.0 : 100.0 * double(ok) / double(hyps.size());
        } else if (name == "token_accuracy") {
            m[name] = token_accuracy(hyps, split.refs);
        }
    }
    return m;
}

double token_accuracy(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
    std::size_t right = 0, total = 0;
    for (std::size_t i = 0; i < std::min(hyps.size(), refs.size()); ++i) {
        const auto h = split_whitespace(hyps[i]), r = split_whitespace(refs[i]);
        for (std::size_t j = 0; j < std::min(h.size(), r.size()); ++j) right += h[j] == r[j];
        total += std::max(h.size(), r.size());
    }
    return total == 0 ? 0.0 : 100.0 * double(right) / double(total);
}

std::string moses_untokenize(const std::string& s) {
    static const std::pair<const char*, const char*> esc[] = {{"&apos;", "'"}, {"&quot;", "\""}, {"&lt;", "<"},
                                                              {"&gt;", ">"},   {"&#91;", "["}, {"&#93;", "]"},
                                                              {"&#124;", "|"}, {"&amp;", "&"}};
    std::string r = s;
    for (auto [from, to] : esc)
        for (std::size_t p = r.find(from); p != std::string::npos; p = r.find(from, p + std::strlen(to)))
            r.replace(p, std::strlen(from), to);
    // English clitics: Moses splits "it's" into "it 's" (and "don't" into "don 't"); 13a does not.
    std::string out;
    for (std::size_t i = 0; i < r.size(); ++i) {
        if (r[i] == ' ' && i + 1 < r.size() && r[i + 1] == '\'' && i > 0 && std::isalpha(static_cast<unsigned char>(r[i - 1])) &&
            i + 2 < r.size() && std::isalpha(static_cast<unsigned char>(r[i + 2])))
            continue;
        out += r[i];
    }
    return out;
}

// ---------------------------------------------------------------- one run

namespace {

struct PointContext {
    const SweepPoint* point;
    fs::path run_dir;
    std::size_t ordinal, total;
    int threads;
};

class RunLog {
public:
    RunLog(const fs::path& file, Progress& progress, std::string prefix)
        : f_(file, std::ios::app), progress_(progress), prefix_(std::move(prefix)) {}
    void operator()(const std::string& s) {
        f_ << "[" << now_iso() << "] " << s << std::endl;
        progress_.message(prefix_ + s);
    }

private:
    std::ofstream f_;
    Progress& progress_;
    std::string prefix_;
};

// Encoder self-attention of the first validation sentence (last layer, mean over heads) as a
// whitespace matrix (query rows, key columns) for `relpos report`'s heat maps.
void write_attention_map(const nn::Transformer<float>& model, const Dataset& data, const fs::path& file) {
    const auto& ex = data.splits.at(data.valid_split).examples;
    if (ex.empty() || ex[0].src.empty()) return;
    NoGradGuard ng;
    const auto& src = ex[0].src;
    const std::size_t L = src.size();
    auto mask = model.padding_mask(src, 1, L);
    std::vector<Var<float>> w;
    model.encode(src, 1, L, mask, &w);
    if (w.empty()) return;
    const Array<float>& a = w.back().value();  // (1, H, L, L)
    const std::size_t H = a.shape()[1];
    std::string text;
    for (std::size_t i = 0; i < L; ++i) {
        for (std::size_t j = 0; j < L; ++j) {
            double m = 0;
            for (std::size_t h = 0; h < H; ++h) m += a(0, h, i, j);
            text += fmt::format("{}{:.5f}", j ? " " : "", m / double(H));
        }
        text += "\n";
    }
    write_atomic(file, text);
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Nothing can be created under a results_dir that runs through a regular file or an unwritable
// directory: found before the data is loaded (root ignores permissions, not file types).
void check_results_dir(const std::string& config_path, const fs::path& exp_dir) {
    std::error_code ec;
    fs::path p = exp_dir;
    while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
    if (p.empty()) p = ".";
    const auto fail = [&](const std::string& why) {
        throw ConfigError(fmt::format("{}: results_dir: cannot create {}: {}", config_path, exp_dir.string(), why));
    };
    if (!fs::is_directory(p, ec)) fail(fmt::format("{} is a file, not a directory", p.string()));
    if (::access(p.c_str(), W_OK | X_OK) != 0) fail(fmt::format("{} is not writable", p.string()));
}

// The run directory a point already has, checked before anything is printed or written: a finished
// run must come from the same config (it is skipped, never redone); an interrupted run resumes only
// from a complete checkpoint of the same config and model shape.
void check_existing_run(const SweepPoint& p, const fs::path& run_dir, const nn::Transformer<float>& model) {
    const ExperimentConfig& cfg = p.config;
    const std::string hash = config_hash(cfg);
    std::error_code ec;
    const fs::path results = run_dir / "results.json";
    if (fs::exists(results, ec)) {
        const std::string text = slurp(results);
        if (text.find("\"config_hash\": \"") == std::string::npos)
            throw ConfigError(fmt::format("{}: run {} has a results.json without a config_hash, so it cannot be matched "
                                          "to this config; move {} away (finished runs are never overwritten)",
                                          cfg.source, p.id, run_dir.string()));
        if (text.find(fmt::format("\"config_hash\": \"{}\"", hash)) == std::string::npos)
            throw ConfigError(fmt::format(
                "{}: run {} already finished with a different configuration; use another experiment name or move "
                "{} away (finished runs are never overwritten)",
                cfg.source, p.id, run_dir.string()));
        return;
    }
    const std::string last = (run_dir / "checkpoints" / "last").string();
    if (!checkpoint_exists(last) && !checkpoint_exists(last + ".old")) return;  // starts afresh
    const TrainProgress pr = verify_checkpoint(last, {}, false);  // state.json only: the config comes first
    if (pr.config_hash != hash)
        throw ConfigError(fmt::format(
            "{}: run {} was started with a different configuration (its checkpoint {} has config hash {}, this config "
            "{}), and resuming would mix the two; use the settings in {}, another experiment name, or move {} away",
            cfg.source, p.id, last, pr.config_hash, hash, (run_dir / "config.yaml").string(), run_dir.string()));
    verify_checkpoint(last, model.named_parameters(), true);
}

// Returns 0 (done or skipped), 3 (non-finite), 130 (interrupted).
int run_point(const PointContext& pc, const Dataset& data, Progress& progress) {
    const ExperimentConfig& cfg = pc.point->config;
    const std::string hash = config_hash(cfg);
    const fs::path results = pc.run_dir / "results.json";
    const std::string tag = fmt::format("run {}/{} {}: ", pc.ordinal, pc.total, pc.point->id);
    if (fs::exists(results)) {
        // A finished run is never redone or touched; a different config under the same id is an error.
        std::ifstream f(results);
        std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        if (text.find(fmt::format("\"config_hash\": \"{}\"", hash)) == std::string::npos)
            throw ConfigError(fmt::format(
                "{}: run {} already finished with a different configuration; use another experiment name or move "
                "{} away (finished runs are never overwritten)",
                cfg.source, pc.point->id, pc.run_dir.string()));
        progress.message(tag + "finished earlier, skipped");
        return 0;
    }
    fs::create_directories(pc.run_dir);
    RunLog log(pc.run_dir / "log.txt", progress, tag);
    const std::string last = (pc.run_dir / "checkpoints" / "last").string();
    const bool resuming = checkpoint_exists(last) || checkpoint_exists(last + ".old");
    if (!resuming) {
        // A fresh start (a new run, or one killed before its first checkpoint, perhaps under another config):
        // nothing of an earlier attempt may leak into it, e.g. a best checkpoint that epochs: 0 would evaluate.
        fs::remove_all(pc.run_dir / "checkpoints");
        write_atomic(pc.run_dir / "config.yaml", to_yaml(cfg));
    }
    if (data.subword && (!resuming || !fs::exists(pc.run_dir / "subword.model")))  // self-contained for eval/translate
        fs::copy_file(data.subword->model_path(), pc.run_dir / "subword.model", fs::copy_options::overwrite_existing);

    auto model = build_model(cfg, data.vocab, data.longest_source, data.longest_target);
    log(fmt::format("model: {} parameters; {} threads", model->num_parameters(), pc.threads));
    Trainer trainer(*model, data.train, data.splits.at(data.valid_split).examples, cfg.train,
                    static_cast<std::uint64_t>(cfg.seed), pc.run_dir.string(), hash);
    TrainOutcome outcome;
    try {
        outcome = trainer.run(
            [&](const TrainStatus& s) {
                progress.status(fmt::format("{}epoch {}/{} step {} loss {:.3f} lr {:.2e} {:.0f} tok/s ETA {}", tag,
                                            s.epoch, s.epochs, s.step, s.loss, s.lr, s.tokens_per_second,
                                            format_duration(s.eta_seconds)));
            },
            [&](const std::string& s) { log(s); });
    } catch (const NonFiniteError& e) {
        log(e.what());
        return 3;
    }
    if (outcome.interrupted) return 130;

    // Evaluate the best checkpoint (lowest validation loss).
    const auto named = model->named_parameters();
    const std::string best = (pc.run_dir / "checkpoints" / "best").string();
    TrainProgress pr = outcome.progress;
    if (checkpoint_exists(best)) load_checkpoint(best, named, nullptr);
    model->eval();
    const DecodeOptions dopt = decode_options(cfg.eval);
    std::string metrics_json, sig_json;
    std::map<std::string, std::string> sigs;
    for (const auto& split : cfg.eval.splits) {
        const auto& es = data.splits.at(split);
        log(fmt::format("decoding {} ({} sentences, beam {}, alpha {})", split, es.examples.size(), dopt.beam, dopt.alpha));
        const auto t0 = std::chrono::steady_clock::now();
        auto hyps = translate_split(*model, data, es.examples, dopt, static_cast<std::size_t>(cfg.eval.batch_tokens));
        const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        write_lines((pc.run_dir / fmt::format("hyp.{}.txt", split)).string(), hyps);
        auto m = score_split(*model, data, es, hyps, cfg, &sigs);
        std::string line;
        for (auto& [k, v] : m) {
            metrics_json += fmt::format("{}    \"{}.{}\": {:.4f}", metrics_json.empty() ? "" : ",\n", split, k, v);
            line += fmt::format(" {} {:.2f}", k, v);
        }
        log(fmt::format("{}:{} ({:.0f} s)", split, line, dt));
    }
    write_attention_map(*model, data, pc.run_dir / "attention.tsv");
    for (auto& [k, v] : sigs) sig_json += fmt::format("{}    \"{}\": \"{}\"", sig_json.empty() ? "" : ",\n", k, json_escape(v));
    std::string labels;
    for (auto& [k, v] : pc.point->labels)
        labels += fmt::format("{}\"{}\": \"{}\"", labels.empty() ? "" : ", ", json_escape(k), json_escape(v));
    const std::string json = fmt::format(
        "{{\n  \"id\": \"{}\",\n  \"labels\": {{{}}},\n  \"metrics\": {{\n{}\n  }},\n  \"signatures\": {{\n{}\n  }},\n"
        "  \"parameters\": {},\n  \"steps\": {},\n  \"epochs_completed\": {},\n  \"train_seconds\": {:.1f},\n"
        "  \"best_valid_loss\": {:.6f},\n  \"time_limited\": {},\n  \"seed\": {},\n  \"threads\": {},\n"
        "  \"config_hash\": \"{}\",\n  \"commit\": \"{}\",\n  \"machine\": \"{}\",\n  \"finished\": \"{}\"\n}}\n",
        json_escape(pc.point->id), labels, metrics_json, sig_json, model->num_parameters(), pr.step, pr.epoch,
        pr.elapsed_seconds, pr.best_valid_loss, outcome.time_limited ? "true" : "false", cfg.seed, pc.threads, hash,
        json_escape(source_commit()), json_escape(machine_description()), now_iso());
    write_atomic(results, json);
    // The last checkpoint's optimiser state is only needed to resume: drop it, keep the weights.
    fs::remove_all(pc.run_dir / "checkpoints" / "last" / "optim");
    log("finished");
    return 0;
}

}  // namespace

int run_experiment(const std::string& config_path, const std::vector<std::string>& overrides, const RunOptions& opt) {
    ExperimentConfig top = load_config(config_path, overrides);
    auto points = expand_sweep(top, config_path, overrides);
    const std::size_t total_points = points.size();
    if (opt.shard) points = select_shard(points, *opt.shard);
    const fs::path exp_dir = fs::path(top.results_dir) / top.name;
    Progress progress(opt.quiet);
    if (opt.list_only) {
        for (auto& p : points) {
            const bool done = fs::exists(exp_dir / "runs" / p.id / "results.json");
            fmt::print("{:<40} {}{}\n", p.id, fmt::join(p.overrides, " "), done ? "  [finished]" : "");
        }
        return 0;
    }

    // Validate every point's model before any work starts (position options, learned lengths come
    // after the data is loaded, below).
    for (auto& p : points) build_model(p.config, 16);
    check_results_dir(config_path, exp_dir);

    // Data-dependent checks (learned-position limits) and the state of existing runs, before anything
    // is written for the runs. Data messages are held back so that an error prints one line.
    std::vector<std::string> data_messages;
    std::map<std::string, std::shared_ptr<Dataset>> datasets;
    std::mutex mu;
    auto data_key = [](const ExperimentConfig& c) {
        const auto& s = c.data.synthetic;
        std::string k = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}-{}|{}-{}", c.data.task, c.data.dir,
                                    c.data.src, c.data.tgt, c.data.tokenized, c.data.vocab_size, c.data.subword_model,
                                    c.data.max_len, c.data.max_train_examples, c.data.valid_split, s.n_symbols,
                                    s.train_size, s.valid_size, s.test_size, s.train_len.min, s.train_len.max,
                                    s.test_len.min, s.test_len.max);
        for (auto& e : c.eval.splits) k += "|" + e;
        return k;
    };
    std::error_code ec;
    fs::path existing = exp_dir;  // the deepest directory that exists before anything is written
    while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
    try {
        for (auto& p : points) {
            auto& slot = datasets[data_key(p.config)];
            if (!slot)
                slot = std::make_shared<Dataset>(load_dataset(p.config, (exp_dir / "subword").string(),
                                                              [&](const std::string& s) { data_messages.push_back(s); }));
            auto model = build_model(p.config, slot->vocab, slot->longest_source, slot->longest_target);
            check_existing_run(p, exp_dir / "runs" / p.id, *model);
        }
    } catch (...) {
        // A failed subword training may have created the (empty) cache directory and its parents:
        // leave no trace of a run that never started.
        for (fs::path p = exp_dir / "subword"; !p.empty() && p != existing; p = p.parent_path())
            if (!fs::remove(p, ec) && ec) break;  // not empty (or not ours): stop
        throw;
    }
    auto dataset_for = [&](const ExperimentConfig& c) { return datasets.at(data_key(c)); };

    try {
        fs::create_directories(exp_dir / "runs");
        const fs::path probe = exp_dir / ".write-test";
        std::ofstream(probe) << "ok";
        if (!fs::exists(probe)) throw std::runtime_error("");
        fs::remove(probe);
    } catch (const std::exception&) {
        throw ConfigError(fmt::format("{}: results_dir: cannot create or write {} (check the path and permissions)",
                                      config_path, exp_dir.string()));
    }
    write_atomic(exp_dir / "experiment.yaml",
                 fmt::format("# written by relpos run {}\n# commit {}\n", config_path, source_commit()) + to_yaml(top));
    install_stop_handlers();

    const std::size_t jobs = std::max<std::size_t>(1, std::min(opt.jobs, points.size()));
    const int threads_each = std::max<int>(1, static_cast<int>(top.threads / static_cast<long>(jobs)));
    blas::set_num_threads(threads_each);
    progress.message(fmt::format("{}: {} run(s){} with {} job(s) x {} thread(s); results in {}", top.name, points.size(),
                                 opt.shard ? fmt::format(" (shard {}/{} of {})", opt.shard->index, opt.shard->count,
                                                         total_points)
                                           : "",
                                 jobs, threads_each, exp_dir.string()));
    for (auto& m : data_messages) progress.message(m);

    int worst = 0;
    std::size_t next = 0;
    std::exception_ptr failure;
    auto worker = [&] {
        for (;;) {
            std::size_t i;
            {
                std::lock_guard<std::mutex> lk(mu);
                if (next >= points.size() || failure || g_stop_requested.load()) return;
                i = next++;
            }
            try {
                auto d = dataset_for(points[i].config);
                PointContext pc{&points[i], exp_dir / "runs" / points[i].id, i + 1, points.size(), threads_each};
                const int rc = run_point(pc, *d, progress);
                std::lock_guard<std::mutex> lk(mu);
                worst = std::max(worst, rc);
            } catch (...) {
                std::lock_guard<std::mutex> lk(mu);
                if (!failure) failure = std::current_exception();
            }
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t j = 1; j < jobs; ++j) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    progress.finish();
    if (failure) std::rethrow_exception(failure);
    if (g_stop_requested.load()) return 130;
    return worst;
}

}  // namespace relpos

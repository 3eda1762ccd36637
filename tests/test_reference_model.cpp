// Whole-model reference test (llm.c's test_gpt2 idea): tiny encoder-decoder Transformers written
// independently in PyTorch from the papers' formulas (scripts/reference/make_fixtures.py) dumped their
// weights, one padded batch, the label-smoothed loss, every gradient, the parameters after two Adam
// steps and a greedy decode into tests/fixtures/reference/<case>/. Here relpos loads each case and must
// reproduce all of it: float64 to a relative error of 1e-10, float32 to 1e-4. Unlike the op gradchecks,
// which compare each op with its own forward pass, this catches a forward pass that is consistently
// wrong (a mask convention, a scale, a transposed table, a clip off by one). No PyTorch needed here.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "experiments/train/checkpoint.hpp"
#include "experiments/eval/decode.hpp"
#include "nn/optim.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = fs::path(RELPOS_SOURCE_DIR) / "tests" / "fixtures" / "reference";

// Tolerances: relative error of a whole tensor, see rel_err.
constexpr double kTolDouble = 1e-10;
constexpr double kTolFloat = 1e-4;

struct Case {
    std::string name;
    fs::path dir;
    YAML::Node j;  // fixture.json
    nn::TransformerConfig cfg;
    test::PositionSpecs position;
    std::vector<std::string> names;  // parameters, in the order of grads.npy / adam2.npy
    std::size_t B = 0, Ls = 0, Lt = 0;
    std::vector<std::int32_t> src, tgt_in, tgt_out;
    std::vector<std::size_t> src_len;
};

std::vector<std::string> case_names() {
    std::vector<std::string> out;
    for (const auto& c : YAML::LoadFile((kRoot / "index.json").string())["cases"]) out.push_back(c.as<std::string>());
    return out;
}

template <class V>
std::vector<V> as_vector(const YAML::Node& n) {
    std::vector<V> v;
    for (const auto& x : n) v.push_back(x.as<V>());
    return v;
}

Case load_case(const std::string& name) {
    Case c;
    c.name = name;
    c.dir = kRoot / name;
    c.j = YAML::LoadFile((c.dir / "fixture.json").string());
    const auto m = c.j["model"];
    c.cfg.src_vocab = c.cfg.tgt_vocab = m["vocab"].as<std::size_t>();
    c.cfg.dims.d_model = m["d_model"].as<std::size_t>();
    c.cfg.dims.heads = m["heads"].as<std::size_t>();
    c.cfg.dims.d_ff = m["d_ff"].as<std::size_t>();
    c.cfg.dims.dropout = c.cfg.dims.attention_dropout = 0.0;
    c.cfg.dims.norm = m["norm"].as<std::string>() == "pre" ? nn::NormOrder::Pre : nn::NormOrder::Post;
    c.cfg.encoder_layers = m["encoder_layers"].as<std::size_t>();
    c.cfg.decoder_layers = m["decoder_layers"].as<std::size_t>();
    c.cfg.share_embeddings = m["share_embeddings"].as<std::string>();
    c.cfg.scale_embeddings = m["scale_embeddings"].as<bool>();
    c.cfg.pad_id = c.j["batch"]["pad"].as<std::int32_t>();
    std::map<std::string, std::string> opts;
    for (const auto& kv : c.j["position"]["options"]) opts[kv.first.as<std::string>()] = kv.second.as<std::string>();
    c.position = {{c.j["position"]["type"].as<std::string>(), opts}};
    c.names = as_vector<std::string>(c.j["parameters"]);
    const auto b = c.j["batch"];
    c.B = b["B"].as<std::size_t>();
    c.Ls = b["Ls"].as<std::size_t>();
    c.Lt = b["Lt"].as<std::size_t>();
    c.src = as_vector<std::int32_t>(b["src"]);
    c.tgt_in = as_vector<std::int32_t>(b["tgt_in"]);
    c.tgt_out = as_vector<std::int32_t>(b["tgt_out"]);
    c.src_len = as_vector<std::size_t>(b["src_len"]);
    return c;
}

// Relative error of a whole tensor: max_i |a_i - b_i| / max(max_i |b_i|, floor). Per tensor, not per
// element, so an element that is ~0 in both does not turn rounding into a huge ratio; `floor` keeps a
// tensor whose reference is all but zero (a k_proj bias: see the fixtures' README) from doing the same.
template <class T>
double rel_err(const T* a, const double* b, std::size_t n, double floor = 0.0) {
    double diff = 0, scale = floor;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(double(a[i]))) return INFINITY;
        diff = std::max(diff, std::abs(double(a[i]) - b[i]));
        scale = std::max(scale, std::abs(b[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

double scalar_rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

template <class T>
std::unique_ptr<nn::Transformer<T>> build(const Case& c) {
    return std::make_unique<nn::Transformer<T>>(c.cfg, test::positions<T>(c.position));
}

// The model's parameters are exactly the fixture's, in the same order with the same shapes.
template <class T>
void require_same_parameters(const Case& c, const nn::NamedParams<T>& named) {
    std::vector<std::string> have;
    for (const auto& [n, p] : named) have.push_back(n);
    INFO("relpos registers the parameters on the left, the fixture holds those on the right");
    REQUIRE(have == c.names);
    for (const auto& [n, p] : named) {
        const auto want = read_npy<double>((c.dir / "checkpoint" / "params" / (n + ".npy")).string());
        INFO(n);
        REQUIRE(p.shape() == shape_of(want));
    }
}

// Loads the checkpoint's weights, in float64 through read_npy (the float path below goes through
// load_checkpoint itself).
void load_weights(const Case& c, const nn::NamedParams<double>& named) {
    for (const auto& [n, p] : named) {
        const auto a = read_npy<double>((c.dir / "checkpoint" / "params" / (n + ".npy")).string());
        std::copy(a.begin(), a.end(), Var<double>(p).value().begin());
    }
}

template <class T>
Var<T> batch_loss(const Case& c, const nn::Transformer<T>& model, Var<T>* logits_out = nullptr) {
    auto mask = model.padding_mask(c.src, c.B, c.Ls);
    Var<T> mem = model.encode(c.src, c.B, c.Ls, mask);
    Var<T> logits = model.decode(c.tgt_in, c.B, c.Lt, mem, mask);  // (B, Lt, V)
    if (logits_out) *logits_out = logits;
    CrossEntropyOptions o;
    o.ignore_index = c.cfg.pad_id;
    o.label_smoothing = c.j["label_smoothing"].as<double>();
    return cross_entropy(logits, c.tgt_out, o);  // mean over non-pad target tokens
}

// Every gradient against the reference (flattened in fixture order). The floor: 1e-3 of the largest
// reference gradient anywhere in the model, so a tensor whose exact gradient is zero (k_proj.bias) is
// held to 1e-10 x 1e-3 of the model's gradient scale in absolute terms, not compared noise to noise.
template <class T>
double check_gradients(const Case& c, const nn::NamedParams<T>& named, const Array<double>& ref, double tol) {
    double gmax = 0;
    for (double g : ref) gmax = std::max(gmax, std::abs(g));
    std::size_t off = 0;
    double worst = 0;
    for (const auto& [n, p] : named) {
        const std::size_t k = p.numel();
        REQUIRE(off + k <= ref.size());
        const double e = rel_err(p.grad().data(), ref.data() + off, k, 1e-3 * gmax);
        INFO("gradient of " << n << ": relative error " << e);
        CHECK(e <= tol);
        worst = std::max(worst, e);
        off += k;
    }
    REQUIRE(off == ref.size());
    return worst;
}

bool verbose() { return std::getenv("RELPOS_REFERENCE_VERBOSE") != nullptr; }

}  // namespace

TEST_CASE("reference/fixtures cover every registered position encoding and both norm orders", "[reference]") {
    // A new encoding cannot land without a reference case: add it to make_fixtures.py's POSITIONS.
    std::set<std::string> types, norms;
    const auto names = case_names();
    for (const auto& n : names) {
        const Case c = load_case(n);
        types.insert(c.position[0].first);
        norms.insert(c.j["model"]["norm"].as<std::string>());
    }
    // Every registered encoding (tests that register one of their own remove it again).
    const auto registered = nn::position_registry().names();
    REQUIRE(registered.size() >= 10);
    for (const auto& t : registered) {
        INFO("no reference fixture uses position encoding '" << t << "'");
        CHECK(types.count(t) == 1);
    }
    CHECK(norms == std::set<std::string>{"post", "pre"});
    CHECK(names.size() >= 24);
}

TEST_CASE("reference/float64: loss, every gradient, two Adam steps and greedy decoding match PyTorch", "[reference]") {
    for (const auto& name : case_names()) {
        DYNAMIC_SECTION(name) {
            const Case c = load_case(name);
            auto model = build<double>(c);
            model->train();  // dropout 0: train mode is what the trainer runs
            const auto named = model->named_parameters();
            require_same_parameters(c, named);
            load_weights(c, named);

            // The source key-padding mask: blocked exactly where the fixture's batch is padded.
            const auto mask = model->padding_mask(c.src, c.B, c.Ls);
            const auto want_mask = as_vector<int>(c.j["batch"]["src_key_padding"]);
            REQUIRE(mask.has_key_padding);
            for (std::size_t i = 0; i < c.B * c.Ls; ++i) {
                INFO("key padding element " << i);
                REQUIRE((mask.key_padding.data()[i] == -INFINITY) == (want_mask[i] == 1));
            }

            // Forward: logits and the label-smoothed loss.
            Var<double> logits;
            Var<double> loss = batch_loss(c, *model, &logits);
            const auto ref_logits = read_npy<double>((c.dir / "logits.npy").string());
            REQUIRE(logits.shape() == shape_of(ref_logits));
            const double e_logits = rel_err(logits.data(), ref_logits.data(), ref_logits.size());
            CHECK(e_logits <= kTolDouble);
            const double e_loss = scalar_rel(loss.item(), c.j["loss"].as<double>());
            INFO("loss " << loss.item() << " vs PyTorch " << c.j["loss"].as<double>());
            REQUIRE(e_loss <= kTolDouble);

            // Backward: every parameter's gradient, and the global norm the trainer logs and clips.
            loss.backward();
            const double e_grad = check_gradients(c, named, read_npy<double>((c.dir / "grads.npy").string()), kTolDouble);
            CHECK(scalar_rel(nn::grad_norm(named), c.j["grad_norm"].as<double>()) <= kTolDouble);

            // Two Adam steps with the inverse-square-root schedule; the loss in between is the second
            // forward pass, at weights that moved.
            const auto a = c.j["adam"];
            const auto lrs = as_vector<double>(a["lr"]);
            REQUIRE(lrs.size() == 2);
            for (std::size_t s = 0; s < 2; ++s)
                CHECK(scalar_rel(nn::inverse_sqrt_lr(s + 1, c.cfg.dims.d_model, a["warmup"].as<std::size_t>(),
                                                     a["lr_scale"].as<double>()),
                                 lrs[s]) <= 1e-15);
            nn::AdamOptions ao;
            ao.beta1 = a["beta1"].as<double>();
            ao.beta2 = a["beta2"].as<double>();
            ao.eps = a["eps"].as<double>();
            nn::Adam<double> adam(named, ao);
            adam.step(lrs[0]);
            adam.zero_grad();
            Var<double> loss2 = batch_loss(c, *model);
            const double e_loss2 = scalar_rel(loss2.item(), c.j["loss_after_step1"].as<double>());
            CHECK(e_loss2 <= kTolDouble);
            loss2.backward();
            adam.step(lrs[1]);
            const auto ref2 = read_npy<double>((c.dir / "adam2.npy").string());
            const auto ref_g = read_npy<double>((c.dir / "grads.npy").string());
            double gmax = 0;
            for (double g : ref_g) gmax = std::max(gmax, std::abs(g));
            std::size_t off = 0, noise_elements = 0;
            double e_adam = 0;
            for (const auto& [n, p] : named) {
                // Adam divides by sqrt(v): a gradient that is zero in exact arithmetic but rounding noise
                // in both implementations (the k_proj biases: softmax ignores q·b_k, the same for every
                // key) becomes a step of up to ±lr whose size and sign are the noise's. Such elements
                // (reference gradient below 1e-9 of the largest, exact zeros included: PyTorch may sum
                // the noise to exactly 0 where relpos gets 1e-17) need only stay within the steps' reach.
                double diff = 0, scale = 0;
                for (std::size_t i = 0; i < p.numel(); ++i) {
                    const double have = p.data()[i], want = ref2.data()[off + i];
                    if (std::abs(ref_g.data()[off + i]) < 1e-9 * gmax) {
                        ++noise_elements;
                        CHECK(std::abs(have - want) <= 4 * (lrs[0] + lrs[1]));
                        continue;
                    }
                    diff = std::max(diff, std::abs(have - want));
                    scale = std::max(scale, std::abs(want));
                }
                const double e = scale > 0 ? diff / scale : diff;
                INFO("parameter " << n << " after two Adam steps: relative error " << e);
                CHECK(e <= kTolDouble);
                e_adam = std::max(e_adam, e);
                off += p.numel();
            }
            REQUIRE(off == ref2.size());

            // Greedy decoding through the incremental key/value caches, one source at a time, against
            // PyTorch's full recomputation of the prefix at every step: each step's logits and token.
            NoGradGuard no_grad;
            load_weights(c, named);  // the decode was taken at the initial weights
            model->eval();
            const auto d = c.j["decode"];
            const auto ref_dl = read_npy<double>((c.dir / "decode_logits.npy").string());  // (B, T, V)
            const std::size_t T = ref_dl.shape()[1], V = c.cfg.tgt_vocab;
            const auto steps = as_vector<std::size_t>(d["steps"]);
            double e_decode = 0;
            for (std::size_t b = 0; b < c.B; ++b) {
                const auto want = as_vector<std::int32_t>(d["tokens"][b]);
                std::vector<std::int32_t> row(c.src.begin() + long(b * c.Ls), c.src.begin() + long((b + 1) * c.Ls));
                auto m = model->padding_mask(row, 1, c.Ls);
                auto state = model->start_decoding(model->encode(row, 1, c.Ls, m), m);
                std::vector<std::int32_t> got;
                std::int32_t tok = c.j["batch"]["bos"].as<std::int32_t>();
                for (std::size_t t = 0; t < steps[b]; ++t) {
                    Var<double> lg = model->decode_step({tok}, state);  // (1, V)
                    e_decode = std::max(e_decode, rel_err(lg.data(), ref_dl.data() + (b * T + t) * V, V));
                    tok = std::int32_t(std::max_element(lg.data(), lg.data() + V) - lg.data());
                    if (tok != c.j["batch"]["eos"].as<std::int32_t>()) got.push_back(tok);
                }
                INFO("greedy decode of source " << b);
                CHECK(got == want);
            }
            CHECK(e_decode <= kTolDouble);
            if (verbose())
                WARN(name << ": float64 relative errors: logits " << e_logits << ", loss " << e_loss << ", gradients "
                          << e_grad << ", loss after step 1 " << e_loss2 << ", Adam " << e_adam << " ("
                          << noise_elements << " noise-gradient elements), decode logits " << e_decode);
        }
    }
}

TEST_CASE("reference/float32: the checkpoint loader, loss, gradients and translate_batch match PyTorch", "[reference]") {
    for (const auto& name : case_names()) {
        DYNAMIC_SECTION(name) {
            const Case c = load_case(name);
            auto model = build<float>(c);
            const auto named = model->named_parameters();
            require_same_parameters(c, named);
            // The checkpoint loader itself: float64 .npy files converted to the float model.
            load_checkpoint((c.dir / "checkpoint").string(), named, nullptr);

            Var<float> loss = batch_loss(c, *model);
            const double e_loss = scalar_rel(loss.item(), c.j["loss"].as<double>());
            CHECK(e_loss <= kTolFloat);
            loss.backward();
            const double e_grad = check_gradients(c, named, read_npy<double>((c.dir / "grads.npy").string()), kTolFloat);

            // The production decoder (greedy = beam 1), the batch decoded at once with rows finishing at
            // different steps. The reference checked that no step's top two logits nearly tie.
            model->eval();
            DecodeOptions o;
            o.beam = 1;
            o.max_len_a = c.j["decode"]["max_len_a"].as<double>();
            o.max_len_b = c.j["decode"]["max_len_b"].as<std::size_t>();
            o.bos = c.j["batch"]["bos"].as<std::int32_t>();
            o.eos = c.j["batch"]["eos"].as<std::int32_t>();
            o.pad = c.cfg.pad_id;
            const auto got = translate_batch(*model, c.src, c.B, c.Ls, c.src_len, o);
            REQUIRE(got.size() == c.B);
            for (std::size_t b = 0; b < c.B; ++b) {
                INFO("translate_batch, source " << b);
                CHECK(got[b] == as_vector<std::int32_t>(c.j["decode"]["tokens"][b]));
            }
            if (verbose()) WARN(name << ": float32 relative errors: loss " << e_loss << ", gradients " << e_grad);
        }
    }
}

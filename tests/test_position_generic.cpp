// Generic checks that every registered position encoding gets without anyone editing a list (PyTorch's
// OpInfo idea): each check is a function of the encoding's name that returns a result instead of failing, a
// TEST_CASE runs it over nn::position_registry(), and an encoding registered tomorrow is checked the day it
// is registered. What an encoding legitimately cannot do it declares through its interface
// (PositionEncoding::reads_positions, adds_nothing), never through a list here. The checks use each
// encoding's default options; tests/test_position_plugins.cpp holds the checks of particular values.
//
//   gradients      double, central differences: a whole encoder-decoder model (every parameter), and one
//                  attention layer of each self-attention kind (the input and every parameter, the
//                  encoding's own moved away from their initial values), at the identity map and at a
//                  random position map
//   incremental    decoding one token at a time through the caches = the full pass (encoder-decoder,
//                  decoder-only; both norm orders)
//   scored rows    a decoder-only model's logits at the last positions of its rows, its top layer computed
//                  there alone (what sliding-window evaluation asks), are the full pass's
//   padding        an encoder-only row's logits do not change when the batch pads it
//   directions     bidirectional: position 0 sees the last token; causal: no position sees a later token
//   positions      the encoding reads its positions from the map it is given: on the mapped indices it
//                  equals itself on a longer sequence at the identity, read at the mapped rows (and the map
//                  matters); one that reads none (reads_positions() false) is unchanged by any map and
//                  refuses `randomized`
//   same as none   adds_nothing() is true exactly when the model equals the model without positions
//   options        an unknown option is refused, naming it
// The reference-fixture check is tests/test_reference_model.cpp's (every registered encoding has a case).
// The last TEST_CASE registers broken copies of the encodings that ignore the position map and shows that
// the positions check catches every one.
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "nn/attention.hpp"
#include "nn/transformer.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;
using Opts = std::map<std::string, std::string>;

namespace {

// What a generic check says about one encoding: ok, or why not.
struct Check {
    bool ok = true;
    std::string why;
};
Check failed(const std::string& why) { return {false, why}; }

// Runs a check, turning an exception (a throwing hook, a shape error) into a failure of that check.
Check run(const std::function<Check()>& f) {
    try {
        return f();
    } catch (const std::exception& e) {
        return failed(std::string("threw: ") + e.what());
    }
}

// max |a - b| / (1 + |b|) over the elements, infinity when the shapes differ
double max_diff(const Array<double>& a, const Array<double>& b) {
    if (shape_of(a) != shape_of(b)) return std::numeric_limits<double>::infinity();
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a.data()[i] - b.data()[i]) / (1 + std::abs(b.data()[i])));
    return m;
}

std::string str(double x) {
    std::ostringstream s;
    s << x;
    return s.str();
}

nn::TransformerConfig config(nn::Family family, nn::NormOrder norm = nn::NormOrder::Post) {
    auto cfg = tiny_config(13);
    cfg.family = family;
    cfg.dims.norm = norm;
    cfg.dims.dropout = cfg.dims.attention_dropout = 0.0;
    return cfg;
}

std::shared_ptr<nn::PositionEncoding<double>> make(const std::string& type, Opts opts, nn::Side side, Rng& rng,
                                                   std::size_t d_model = 8, std::size_t heads = 2) {
    nn::MapOptions o(std::move(opts), "model.position");
    return nn::make_position<double>(type, o, nn::PositionContext{d_model, heads, side, &rng});
}

nn::PositionMap map_of(const std::vector<std::size_t>& m) {
    return nn::PositionMap{std::make_shared<const std::vector<std::size_t>>(m), nullptr};
}

// ---------------------------------------------------------------- the checks

// Gradient of a tiny encoder-decoder loss (d_model 4, 2 heads, 1+1 layers) against every parameter.
Check check_model_gradients(const std::string& type) {
    auto cfg = config(nn::Family::EncoderDecoder);
    cfg.dims.d_model = 4;
    cfg.dims.d_ff = 6;
    cfg.src_vocab = cfg.tgt_vocab = 6;
    nn::Transformer<double> model(cfg, positions<double>({{type, {}}}));
    const std::vector<std::int32_t> src = {4, 5, 1, 4, 3, 0}, tgt_in = {2, 4, 5, 2, 5, 0};
    const auto smask = model.padding_mask(src, 2, 3);
    std::vector<V> leaves;
    for (auto& [name, p] : model.named_parameters()) leaves.push_back(p);
    const auto gc = gradcheck([&] { return model.decode(tgt_in, 2, 3, model.encode(src, 2, 3, smask), smask); }, leaves);
    if (gc.checked == 0) return failed("nothing checked");
    return gc.ok ? Check{} : failed(gc.report);
}

// Gradient of one self-attention layer (with the encoding's embeddings in front) against its input and
// every parameter; the encoding's parameters are first moved by N(0, 0.3²), so that a term that starts at
// zero or at a symmetric value is checked too. `map`: the positions of the 4 indices (empty: the identity).
Check check_attention_gradients(const std::string& type, nn::AttentionSite::Kind kind, const std::vector<std::size_t>& map) {
    Rng rng(12), init(13), drng(14), noise(15);
    const bool enc_side = kind == nn::AttentionSite::EncoderSelf;
    auto enc = make(type, map.empty() ? Opts{} : Opts{{"randomized", "16"}}, enc_side ? nn::Side::Encoder : nn::Side::Decoder, rng);
    nn::MultiHeadAttention<double> mha(8, 2, 0.0, nn::AttentionSite{kind, 0, 2, 4}, {enc}, init, drng);
    if (!map.empty()) enc->set_position_map(map_of(map));
    std::vector<V> leaves{leaf({2, 4, 8}, 16)};  // x (B, L, D)
    for (auto& p : mha.parameters()) leaves.push_back(p);
    for (auto& p : enc->parameters()) leaves.push_back(p);
    std::vector<V> own = enc->parameters();
    for (auto& h : mha.hooks)
        for (auto& p : h->parameters()) own.push_back(p);
    for (auto& p : own)
        for (auto& v : p.value()) v += 0.3 * noise.normal();
    const auto mask = nn::AttentionMask<double>::from_lengths({4, 3}, 4);  // the second row padded (encoder)
    const V& x = leaves[0];
    const auto gc = gradcheck(
        [&] {
            const V e = enc->embed(x, 0);
            return mha.forward(e, e, enc_side ? &mask : nullptr);
        },
        leaves);
    if (gc.checked == 0) return failed("nothing checked");
    return gc.ok ? Check{} : failed(gc.report);
}

// Decoding one token at a time through the KV caches gives the logits of the full pass (and beam
// reordering keeps rows consistent): encoder-decoder and decoder-only.
Check check_incremental(const std::string& type, nn::NormOrder norm) {
    NoGradGuard ng;
    const std::size_t B = 2, Ls = 4, Lt = 6;
    const std::vector<std::int32_t> src = {4, 5, 6, 7, 8, 9, 0, 0};
    const std::vector<std::int32_t> tgt = {2, 4, 5, 6, 7, 8, 2, 9, 10, 11, 12, 4};
    for (auto family : {nn::Family::EncoderDecoder, nn::Family::DecoderOnly}) {
        auto cfg = config(family, norm);
        cfg.decoder_layers = 2;
        nn::Transformer<double> model(cfg, positions<double>({{type, {}}}));
        model.eval();
        const bool ed = family == nn::Family::EncoderDecoder;
        const auto smask = ed ? model.padding_mask(src, B, Ls) : nn::AttentionMask<double>();
        const V mem = ed ? model.encode(src, B, Ls, smask) : V();
        const Array<double> full = (ed ? model.decode(tgt, B, Lt, mem, smask) : model.forward_causal(tgt, B, Lt)).value();
        auto state = ed ? model.start_decoding(mem, smask) : model.start_decoding();
        for (std::size_t t = 0; t < Lt; ++t) {
            const Array<double> step = model.decode_step({tgt[t], tgt[Lt + t]}, state).value();  // (B, V)
            for (std::size_t b = 0; b < B; ++b)
                for (std::size_t v = 0; v < cfg.tgt_vocab; ++v)
                    if (std::abs(step(b, v) - full(b, t, v)) > 1e-10 * (1 + std::abs(full(b, t, v))))
                        return failed(std::string(ed ? "encoder-decoder" : "decoder-only") + ": step " + std::to_string(t) +
                                      " row " + std::to_string(b) + " gives " + str(step(b, v)) + ", the full pass " +
                                      str(full(b, t, v)));
        }
        state.select({1, 1});
        const Array<double> again = model.decode_step({5, 5}, state).value();
        for (std::size_t v = 0; v < cfg.tgt_vocab; ++v)
            if (again(0, v) != again(1, v)) return failed("rows differ after selecting one beam twice");
    }
    return {};
}

// Decoder-only, the positions a sliding window scores: forward_causal_rows computes the top layer at the
// last positions of each row alone (DecoderLayer::forward_last, queries at an offset, keys from 0) and must
// give the full pass's logits there, for rows in the tail (the top layer cut) and rows from position 0 (not).
Check check_scored_rows(const std::string& type) {
    NoGradGuard ng;
    const std::size_t B = 2, L = 7;
    const std::vector<std::int32_t> ids = {2, 4, 5, 6, 7, 8, 9, 2, 9, 10, 11, 12, 4, 5};
    for (auto norm : {nn::NormOrder::Post, nn::NormOrder::Pre}) {
        auto cfg = config(nn::Family::DecoderOnly, norm);
        cfg.decoder_layers = 2;
        nn::Transformer<double> model(cfg, positions<double>({{type, {}}}));
        model.eval();
        const Array<double> full = model.forward_causal(ids, B, L).value();  // (B, L, V)
        for (const std::vector<std::int32_t>& rows : {std::vector<std::int32_t>{5, 6, 13, 12, 11},
                                                      std::vector<std::int32_t>{6}, std::vector<std::int32_t>{13, 0, 9}}) {
            const Array<double> some = model.forward_causal_rows(ids, B, L, rows).value();  // (R, V)
            if (shape_of(some) != Shape{rows.size(), cfg.tgt_vocab}) return failed("forward_causal_rows: wrong shape");
            for (std::size_t i = 0; i < rows.size(); ++i)
                for (std::size_t v = 0; v < cfg.tgt_vocab; ++v) {
                    const double x = some(i, v), y = full(rows[i] / L, rows[i] % L, v);
                    if (std::abs(x - y) > 1e-10 * (1 + std::abs(y)))
                        return failed(std::string(norm == nn::NormOrder::Pre ? "pre-norm" : "post-norm") + ": row " +
                                      std::to_string(rows[i]) + " gives " + str(x) + ", the full pass " + str(y));
                }
        }
    }
    return {};
}

// Encoder-only: a row's logits at its real positions do not change when the batch pads it beside a
// longer row.
Check check_padding(const std::string& type) {
    nn::Transformer<double> model(config(nn::Family::EncoderOnly), positions<double>({{type, {}}}));
    model.eval();
    NoGradGuard ng;
    const Array<double> alone = model.forward_bidirectional({2, 4, 5}, 1, 3).value();
    const Array<double> both = model.forward_bidirectional({2, 4, 5, 0, 0, 0, 2, 7, 8, 9, 10, 11}, 2, 6).value();
    for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t v = 0; v < 13; ++v)
            if (std::abs(both(0, t, v) - alone(0, t, v)) > 1e-10)
                return failed("padded to 6, position " + std::to_string(t) + " gives " + str(both(0, t, v)) + " instead of " +
                              str(alone(0, t, v)));
    return {};
}

// Bidirectional attention sees both sides (position 0 depends on the last token); causal attention sees
// no later token (positions 0 .. L-2 do not change with the last token, which does change the last).
Check check_directions(const std::string& type) {
    NoGradGuard ng;
    const std::vector<std::int32_t> a = {2, 4, 5, 6, 7}, b = {2, 4, 5, 6, 9};  // only the last token differs
    nn::Transformer<double> enc(config(nn::Family::EncoderOnly), positions<double>({{type, {}}}));
    enc.eval();
    const Array<double> ea = enc.forward_bidirectional(a, 1, 5).value(), eb = enc.forward_bidirectional(b, 1, 5).value();
    bool first_moves = false;
    for (std::size_t v = 0; v < 13; ++v) first_moves = first_moves || std::abs(ea(0, 0, v) - eb(0, 0, v)) > 1e-9;
    if (!first_moves) return failed("encoder-only: position 0 does not see the last position");
    nn::Transformer<double> dec(config(nn::Family::DecoderOnly), positions<double>({{type, {}}}));
    dec.eval();
    const Array<double> da = dec.forward_causal(a, 1, 5).value(), db = dec.forward_causal(b, 1, 5).value();
    for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t v = 0; v < 13; ++v)
            if (std::abs(da(0, t, v) - db(0, t, v)) > 1e-12)
                return failed("decoder-only: position " + std::to_string(t) + " sees the token at position 4");
    bool last_moves = false;
    for (std::size_t v = 0; v < 13; ++v) last_moves = last_moves || da(0, 4, v) != db(0, 4, v);
    return last_moves ? Check{} : failed("decoder-only: the last position does not see its own token");
}

const std::vector<std::size_t> kMap = {0, 2, 3, 7, 8, 12};  // sorted, with gaps; 6 indices in [0, 13)
constexpr std::size_t kBig = 13;

// Positions come from the map. An encoding that reads them, with map m on 6 indices, equals itself at the
// identity on 13 indices read at rows m, the other keys blocked by an attention mask (its embeddings too,
// applied before the attention layer), and differs from itself at the identity on the same 6 inputs.
// One that reads none refuses `randomized` and is unchanged by any map.
Check check_positions(const std::string& type) {
    NoGradGuard ng;
    for (auto kind : {nn::AttentionSite::EncoderSelf, nn::AttentionSite::DecoderSelf}) {
        const std::string where = kind == nn::AttentionSite::EncoderSelf ? "encoder self-attention: " : "decoder self-attention: ";
        const nn::Side side = kind == nn::AttentionSite::EncoderSelf ? nn::Side::Encoder : nn::Side::Decoder;
        Rng rng(2), init(3), drng(4);
        auto enc = make(type, {}, side, rng);
        const bool reads = enc->reads_positions();
        if (reads) {
            Rng again(2);
            enc = make(type, {{"randomized", "32"}}, side, again);
            if (enc->randomized_range() != 32) return failed("randomized: 32 was not applied");
        } else {
            Rng again(2);
            try {
                make(type, {{"randomized", "32"}}, side, again);
                return failed("reads no positions but accepts randomized: 32");
            } catch (const nn::OptionError&) {
            }
        }
        nn::MultiHeadAttention<double> mha(8, 2, 0.0, nn::AttentionSite{kind, 0, 2, 4}, {enc}, init, drng);
        const Array<double> xs = randn<double>({1, kMap.size(), 8}, 5);
        Array<double> xb = randn<double>({1, kBig, 8}, 6);
        for (std::size_t i = 0; i < kMap.size(); ++i)
            for (std::size_t c = 0; c < 8; ++c) xb(0, kMap[i], c) = xs(0, i, c);
        auto apply = [&](const Array<double>& x, const nn::AttentionMask<double>* mask) {
            const V e = enc->embed(V(x), 0);
            return mha.forward(e, e, mask).value();  // (1, L, D)
        };
        enc->set_position_map({});
        const Array<double> plain = apply(xs, nullptr);
        enc->set_position_map(map_of(kMap));  // after the hooks were made: they must see it
        const Array<double> mapped = apply(xs, nullptr);
        if (!reads) {
            if (max_diff(mapped, plain) > 0) return failed(where + "declares reads_positions() false, but a map changes its output");
            continue;
        }
        enc->set_position_map({});
        xt::xarray<bool> blocked = xt::ones<bool>({kBig, kBig});  // only the keys at the mapped positions
        for (std::size_t i = 0; i < kBig; ++i)
            for (std::size_t j : kMap) blocked(i, j) = false;
        nn::AttentionMask<double> mask;
        mask.set_attn(blocked);
        const Array<double> big = apply(xb, &mask);
        Array<double> rows = uninit<double>({1, kMap.size(), 8});
        for (std::size_t i = 0; i < kMap.size(); ++i)
            for (std::size_t c = 0; c < 8; ++c) rows(0, i, c) = big(0, kMap[i], c);
        const double e = max_diff(mapped, rows);
        if (e > 1e-12)
            return failed(where + "with the map, the output is not the identity's at the mapped positions (difference " + str(e) + ")");
        if (max_diff(mapped, plain) < 1e-9)
            return failed(where + "declares reads_positions(), but the map does not change its output");
    }
    return {};
}

// adds_nothing() is honest both ways: an encoding that claims it gives the model without positions bit
// for bit (same parameters, same logits); one that does not changes the model.
Check check_same_as_none(const std::string& type) {
    NoGradGuard ng;
    Rng rng(0);
    const bool claims = make(type, {}, nn::Side::Encoder, rng)->same_as_none();
    const auto cfg = config(nn::Family::EncoderDecoder);
    nn::Transformer<double> with(cfg, positions<double>({{type, {}}})), without(cfg, positions<double>({{"none", {}}}));
    with.eval();
    without.eval();
    const std::vector<std::int32_t> src = {4, 5, 6, 7, 8, 9, 0, 0}, tgt = {2, 4, 5, 6, 2, 9, 10, 11};
    auto logits = [&](const nn::Transformer<double>& m) {
        const auto mask = m.padding_mask(src, 2, 4);
        return m.decode(tgt, 2, 4, m.encode(src, 2, 4, mask), mask).value();
    };
    std::vector<std::string> pa, pb;
    for (auto& [n, p] : with.named_parameters()) pa.push_back(n);
    for (auto& [n, p] : without.named_parameters()) pb.push_back(n);
    const double d = max_diff(logits(with), logits(without));
    if (claims && (pa != pb || d != 0)) return failed("claims adds_nothing() but differs from the model without positions");
    if (!claims && d == 0) return failed("does not claim adds_nothing() but gives the logits of the model without positions");
    return {};
}

// Attention's fused core (taken for the hooks that claim bias_only()) gives the separate ops' logits and
// gradients: an encoder-decoder model (self, causal and cross attention, padding masks), training with
// attention dropout, built twice alike and run once with the fused core allowed and once without.
Check check_fused_attention(const std::string& type) {
    auto cfg = config(nn::Family::EncoderDecoder);
    cfg.dims.attention_dropout = 0.3;
    const std::vector<std::int32_t> src = {4, 5, 6, 7, 8, 9, 0, 0}, tgt = {2, 4, 5, 6, 2, 9, 10, 11};
    std::vector<Array<double>> out[2];
    for (int fused = 0; fused < 2; ++fused) {
        const bool was = nn::set_fused_attention(fused == 1);
        nn::Transformer<double> m(cfg, positions<double>({{type, {}}}));
        const auto mask = m.padding_mask(src, 2, 4);
        V logits = m.decode(tgt, 2, 4, m.encode(src, 2, 4, mask), mask);
        nn::set_fused_attention(was);
        sum(logits * V(randn<double>(logits.shape(), 17))).backward();
        out[fused].push_back(logits.value());
        for (auto& [n, p] : m.named_parameters()) out[fused].push_back(p.grad());
    }
    for (std::size_t i = 0; i < out[0].size(); ++i)
        if (const double d = max_diff(out[1][i], out[0][i]); !(d < 1e-12))
            return failed((i == 0 ? std::string("logits") : "gradient " + std::to_string(i)) + " differ by " + str(d) +
                          " between the fused attention core and the separate ops (a wrong bias_only() claim?)");
    return {};
}

// An unknown option is refused with an OptionError naming it.
Check check_options(const std::string& type) {
    Rng rng(0);
    try {
        make(type, {{"no_such_option", "1"}}, nn::Side::Encoder, rng);
    } catch (const nn::OptionError& e) {
        if (std::string(e.what()).find("no_such_option") == std::string::npos)
            return failed(std::string("the error does not name the option: ") + e.what());
        return {};
    }
    return failed("accepted an unknown option");
}

// Runs `check` on every registered encoding; CHECKs each, with the encoding's name and the reason.
void for_every_encoding(const std::function<Check(const std::string&)>& check) {
    const auto names = nn::position_registry().names();
    REQUIRE(names.size() >= 10);
    for (const auto& type : names) {
        const Check c = run([&] { return check(type); });
        INFO("position encoding '" << type << "': " << c.why);
        CHECK(c.ok);
    }
}

}  // namespace

TEST_CASE("gradcheck/position/generic/every encoding in a whole model", "[gradcheck][position][generic]") {
    for_every_encoding(check_model_gradients);
}

TEST_CASE("gradcheck/position/generic/every encoding in attention, at the identity and at a position map",
          "[gradcheck][position][generic][randomized]") {
    for_every_encoding([](const std::string& type) {
        Rng rng(0);
        const bool reads = make(type, {}, nn::Side::Encoder, rng)->reads_positions();
        for (auto kind : {nn::AttentionSite::EncoderSelf, nn::AttentionSite::DecoderSelf}) {
            const std::string where = kind == nn::AttentionSite::EncoderSelf ? "encoder" : "decoder";
            if (Check c = check_attention_gradients(type, kind, {}); !c.ok) return failed(where + ": " + c.why);
            if (!reads) continue;
            if (Check c = check_attention_gradients(type, kind, {1, 4, 5, 11}); !c.ok) return failed(where + ", mapped: " + c.why);
        }
        return Check{};
    });
}

TEST_CASE("incremental/generic/every encoding decodes step by step as in the full pass", "[incremental][position][generic]") {
    for_every_encoding([](const std::string& type) {
        if (Check c = check_incremental(type, nn::NormOrder::Post); !c.ok) return c;
        return check_incremental(type, nn::NormOrder::Pre);
    });
}

TEST_CASE("decoder_only/generic/scored rows alone (the top layer at the window's end) give the full pass's logits",
          "[nn][lm][position][generic]") {
    for_every_encoding(check_scored_rows);
}

TEST_CASE("encoder_only/generic/padding changes nothing a row's real positions see", "[nn][encoder_only][position][generic]") {
    for_every_encoding(check_padding);
}

TEST_CASE("position/generic/bidirectional attention sees both sides, causal attention no later token",
          "[nn][encoder_only][position][generic]") {
    for_every_encoding(check_directions);
}

TEST_CASE("randomized/generic/every encoding reads its positions from the map", "[randomized][position][generic]") {
    for_every_encoding(check_positions);
}

TEST_CASE("position/generic/the fused attention core equals the separate ops for every encoding", "[position][generic]") {
    for_every_encoding(check_fused_attention);
}

TEST_CASE("position/generic/adds_nothing is claimed exactly by the encodings that add nothing", "[position][generic]") {
    for_every_encoding(check_same_as_none);
}

TEST_CASE("position/generic/every encoding refuses an unknown option", "[position][generic][errors]") {
    for_every_encoding(check_options);
}

// ---------------------------------------------------------------- an injected bug
namespace {
// A broken copy of an encoding: the same computation, but it drops every position map it is given, so its
// hooks compute with q_offset + i and j (what docs/adding-a-position-encoding.md forbids).
template <class T>
class IgnoresTheMap : public nn::PositionEncoding<T> {
public:
    explicit IgnoresTheMap(std::shared_ptr<nn::PositionEncoding<T>> inner) : inner_(this->register_module("inner", inner)) {}
    void set_position_map(nn::PositionMap) override {}  // the bug
    Var<T> embed(const Var<T>& x, std::size_t offset) override { return inner_->embed(x, offset); }
    std::shared_ptr<nn::AttentionPosition<T>> for_attention(const nn::AttentionSite& site, Rng& rng) override {
        return inner_->for_attention(site, rng);
    }
    bool reads_positions() const override { return inner_->reads_positions(); }

private:
    std::shared_ptr<nn::PositionEncoding<T>> inner_;
};

// Replaces a registered encoding for the lifetime of the guard, then puts the original back.
class ScopedReplacement {
public:
    explicit ScopedReplacement(nn::PositionEntry e) : original_(*nn::position_registry().find(e.name)) {
        nn::position_registry().replace(std::move(e));
    }
    ~ScopedReplacement() { nn::position_registry().replace(original_); }
    ScopedReplacement(const ScopedReplacement&) = delete;
    ScopedReplacement& operator=(const ScopedReplacement&) = delete;

private:
    nn::PositionEntry original_;
};
}  // namespace

TEST_CASE("randomized/generic/a broken copy of an encoding that ignores the position map is caught",
          "[randomized][position][generic]") {
    std::size_t caught = 0;
    for (const auto& type : nn::position_registry().names()) {
        Rng rng(0);
        if (!make(type, {}, nn::Side::Decoder, rng)->reads_positions()) continue;
        INFO("a copy of '" << type << "' that drops the position map");
        const nn::PositionEntry original = *nn::position_registry().find(type);
        REQUIRE(check_positions(type).ok);  // the encoding itself passes
        nn::PositionEntry broken = original;
        broken.make_double = [original](nn::Options& o, const nn::PositionContext& c) -> std::shared_ptr<nn::PositionEncoding<double>> {
            return std::make_shared<IgnoresTheMap<double>>(original.make_double(o, c));
        };
        broken.make_float = [original](nn::Options& o, const nn::PositionContext& c) -> std::shared_ptr<nn::PositionEncoding<float>> {
            return std::make_shared<IgnoresTheMap<float>>(original.make_float(o, c));
        };
        {
            ScopedReplacement guard(broken);
            const Check c = run([&] { return check_positions(type); });
            INFO(c.why);
            CHECK_FALSE(c.ok);
            caught += !c.ok;
        }
        CHECK(check_positions(type).ok);  // and the registry holds the original again
    }
    CHECK(caught >= 9);  // every encoding that reads positions (all but none, today)
}

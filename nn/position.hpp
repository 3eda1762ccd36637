// Position encodings as plug-ins.
//
// A position encoding may act at four points of the Transformer; a new one overrides only the hooks
// it needs:
//   1. embeddings     PositionEncoding::embed        x (B, L, D) at positions offset.. -> x + PE
//   2. queries/keys   AttentionPosition::queries_keys q, k (B, H, L, d) before the dot product (RoPE)
//   3. logits         AttentionPosition::logit_bias   additive term to the attention logits (Shaw a^K,
//                                                      T5 bias, ALiBi)
//   4. output         AttentionPosition::output_term  added to the attention output (Shaw a^V)
// Hooks 2-4 live in a per-attention-layer object (they usually own per-layer parameters, e.g. Shaw's
// rel_k / rel_v tables) that the encoding hands out for each attention site it wants to act in.
//
// A registry maps the YAML `type:` name to a factory that reads and validates its own options through
// nn::Options. Adding an encoding = one new file + one registration line in position_registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/module.hpp"
#include "nn/options.hpp"
#include "nn/registry.hpp"

namespace relpos::nn {

// Where an attention layer sits.
struct AttentionSite {
    enum Kind { EncoderSelf, DecoderSelf, Cross } kind = EncoderSelf;
    std::size_t layer = 0;
    std::size_t heads = 1;
    std::size_t head_dim = 1;
    bool causal() const { return kind == DecoderSelf; }
    const char* kind_name() const {
        return kind == EncoderSelf ? "encoder self-attention"
                                   : kind == DecoderSelf ? "decoder self-attention" : "encoder-decoder attention";
    }
};

// Per-attention-layer hooks. Positions: query i is at absolute position q_offset + i; key j is at
// k_offset + j (k_offset is 0 except for keys being appended to an incremental-decoding cache).
template <class T>
class AttentionPosition : public Module<T> {
public:
    // 2. Transform queries (B, H, Lq, d) and keys (B, H, Lk, d) in place before q·k.
    //    Keys are transformed once, when they enter the cache.
    virtual void queries_keys(Var<T>& q, Var<T>& k, std::size_t q_offset, std::size_t k_offset) {}
    // 3. Additive logit term, shape (B, H, Lq, Lk) or broadcastable to it (e.g. (1, H, Lq, Lk)), or
    //    an undefined Var for none. `q` (B, H, Lq, d) is already scaled by 1/sqrt(d), so Shaw's
    //    (q·k + q·a^K)/sqrt(d) is q·k + q·a^K here.
    virtual Var<T> logit_bias(const Var<T>& q, std::size_t lk, std::size_t q_offset) { return {}; }
    //    What attention calls: logits + logit_bias(...). Override it to fuse the two (Shaw does, to skip
    //    an (Lq, Lk) temporary per layer; the result must equal the default), or when the term depends on
    //    the logits q·k themselves (CoPE's gates: its logit_bias alone has no meaning and throws).
    virtual Var<T> add_logit_bias(const Var<T>& logits, const Var<T>& q, std::size_t q_offset) {
        Var<T> b = logit_bias(q, logits.dim(3), q_offset);
        return b.defined() ? logits + b : logits;
    }
    // 4. Output term (B, H, Lq, d) from the attention weights (B, H, Lq, Lk) (after dropout), or
    //    undefined for none.
    virtual Var<T> output_term(const Var<T>& attn, std::size_t q_offset) { return {}; }
    // Speed only: true when this hook's whole effect is hooks 2 and 3 as `logits + logit_bias(...)` (whatever
    // add_logit_bias fuses, its result equals that) and it has no output term. Attention then adds the bias
    // inside its fused core (autodiff attention_core: no (B, H, Lq, Lk) logits written and read back). Left
    // false, attention runs the separate ops and calls every hook as above: always correct, slower.
    virtual bool bias_only() const { return false; }
    // Speed only, for a bias_only() hook whose logit_bias(q, lk, q_offset) is Shaw's bucketed form
    // out[b,h,i,j] = rq[b,h,i] · table[h][clip(j - i - q_offset, k) + k] with a per-head table (H, 2k+1, d):
    // fill `out` with rq, table and k and return true, and the fused core computes the term tile by tile
    // (never a (B, H, Lq, Lk) tensor). The term must equal logit_bias's (tests/test_position_generic.cpp
    // compares the fused and the separate paths for every encoding). Transformer-XL's term is this form.
    virtual bool relative_logits(const Var<T>& q, std::size_t lk, std::size_t q_offset, RelativeLogits<T>& out) {
        return false;
    }
};

// Which side of the model an encoding instance serves (the model builds one per side, so learned
// tables are per side as in fairseq).
enum class Side { Encoder, Decoder };

struct PositionContext {
    std::size_t d_model = 0;
    std::size_t heads = 1;
    Side side = Side::Encoder;
    Rng* init_rng = nullptr;  // for parameter initialisation
};

// Where the indices of the current sequences sit: index t is at absolute position at(t). The identity,
// except while a model trains with randomized positions (Ruoss et al. 2023, option `randomized`): then
// it holds a sorted random subset of [0, randomized range) drawn for the batch, one per forward pass.
// Queries at index q_offset + i are at at(q_offset + i), keys at index k_offset + j at at(k_offset + j).
// Option `randomized_form: distances` (alibi and txl only): the positions stay the identity and a key's offset
// t = j - i from its query reads as distance(t): the sorted draw d_1 < d_2 < ... of distinct values of
// [1, randomized range) for the offsets 1, 2, ..., mirrored for the keys on the left (distance(-t) =
// -distance(t)), one draw per batch: Ruoss et al.'s released code randomizes its relative encodings so
// (models/positional_encodings.py: noisy relative and noisy ALiBi), where its paper describes drawing positions.
struct PositionMap {
    std::shared_ptr<const std::vector<std::size_t>> positions;  // null = identity
    std::shared_ptr<const std::vector<std::size_t>> distances;  // null = the offsets themselves; else d_1, d_2, ...
    std::size_t at(std::size_t t) const { return positions ? (*positions)[t] : t; }
    bool identity() const { return !positions; }
    long distance(long t) const {
        if (!distances || t == 0) return t;
        const long d = long((*distances)[std::size_t(t > 0 ? t : -t) - 1]);
        return t > 0 ? d : -d;
    }
};
// at(t) through a hook's handle (null = identity).
inline std::size_t mapped(const std::shared_ptr<const PositionMap>& m, std::size_t t) { return m ? m->at(t) : t; }
inline bool is_identity(const std::shared_ptr<const PositionMap>& m) { return !m || m->identity(); }
// distance(t) through a hook's handle (null: t).
inline long relabelled(const std::shared_ptr<const PositionMap>& m, long t) { return m ? m->distance(t) : t; }

template <class T>
class PositionEncoding : public Module<T> {
public:
    // Randomized positions: 0 = off, else the range [0, N) training positions are drawn from (the generic
    // option `randomized: N` every encoding takes, read by make_position). The model draws the map and
    // sets it before a training forward pass, and resets it to the identity for evaluation.
    std::size_t randomized_range() const { return randomized_; }
    void set_randomized_range(std::size_t n) { randomized_ = n; }
    // Option `randomized_eval: sample`: evaluation and decoding draw positions the same way too (from the
    // model's evaluation stream, restarted at every eval()), as the reference code of Ruoss et al. does;
    // the default (identity) evaluates at 0, 1, 2, ...
    bool randomized_at_eval() const { return randomized_at_eval_; }
    void set_randomized_at_eval(bool on) { randomized_at_eval_ = on; }
    // Option `randomized_eval: sample_by_length`: as sample, and every evaluation batch holds sequences of one
    // length, so that each draws its positions for its own length, as training batches (one length each, in
    // practice) and Ruoss et al.'s evaluation do. With `sample` a batch that mixes lengths draws for its longest
    // sequence, and the shorter ones see their positions crowded into the low end of the range.
    bool randomized_eval_by_length() const { return randomized_eval_by_length_; }
    void set_randomized_eval_by_length(bool on) { randomized_eval_by_length_ = on; }
    // Option `randomized_form: distances`: the model draws the offsets' distances (PositionMap::distances)
    // instead of positions; only for an encoding that reads them (supports_random_distances).
    bool randomized_distances() const { return randomized_distances_; }
    void set_randomized_distances(bool on) { randomized_distances_ = on; }
    virtual bool supports_random_distances() const { return false; }
    // The map every hook of this encoding (embed and the per-attention hooks it handed out) uses from
    // now on; an encoding that does not depend on absolute or relative positions may ignore it.
    virtual void set_position_map(PositionMap m) { *map_ = std::move(m); }
    const PositionMap& position_map() const { return *map_; }
    // What a per-attention hook keeps to see every later set_position_map of its encoding.
    std::shared_ptr<const PositionMap> position_map_handle() const { return map_; }
    // The handle for a hook at this site: encoder-decoder attention relates two sides (queries of the
    // decoder, keys of the encoder), so it keeps the real positions (null handle = identity).
    std::shared_ptr<const PositionMap> position_map_handle(const AttentionSite& site) const {
        return site.kind == AttentionSite::Cross ? nullptr : map_;
    }

    // 1. x (B, L, D) holds embeddings of positions offset .. offset+L-1; returns x with positions added.
    virtual Var<T> embed(const Var<T>& x, std::size_t offset) { return x; }
    // Per-layer hooks for an attention site, or nullptr when this encoding does not act there.
    virtual std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng& init_rng) {
        return nullptr;
    }
    // Longest sequence this encoding accepts (learned absolute tables have a limit).
    virtual std::size_t max_length() const { return static_cast<std::size_t>(-1); }
    // Whether this encoding, as configured, adds nothing to the model: no parameter, no random draw, no
    // change to any value (e.g. Shaw with neither a^K nor a^V). Such a model is the model without
    // positions bit for bit, so a run store names its run as {type: none}'s and trains it once.
    // Randomized positions draw from a stream, so an encoding with them never is.
    bool same_as_none() const { return randomized_ == 0 && adds_nothing(); }
    // What same_as_none asks an encoding; override only where the claim has been checked bit for bit.
    virtual bool adds_nothing() const { return false; }
    // Whether this encoding reads integer positions through the position map (embed and every hook it
    // hands out). False for one that has none to read: `none`, or an encoding whose positions are counted
    // from the context. make_position refuses `randomized` for it, and the generic tests
    // (tests/test_position_generic.cpp) check that any map leaves its outputs unchanged instead of
    // checking that it follows the map.
    virtual bool reads_positions() const { return true; }

protected:
    std::shared_ptr<PositionMap> map_ = std::make_shared<PositionMap>();
    std::size_t randomized_ = 0;
    bool randomized_at_eval_ = false;
    bool randomized_eval_by_length_ = false;
    bool randomized_distances_ = false;
};

// ---- registry
struct PositionEntry {
    std::string name;
    std::string summary;  // one line for `relpos list`
    std::function<std::shared_ptr<PositionEncoding<float>>(Options&, const PositionContext&)> make_float;
    std::function<std::shared_ptr<PositionEncoding<double>>(Options&, const PositionContext&)> make_double;
};

// An entry for a class template P<T> constructed as P<T>(Options&, const PositionContext&).
template <template <class> class P>
PositionEntry position_entry(std::string name, std::string summary) {
    PositionEntry e;
    e.name = std::move(name);
    e.summary = std::move(summary);
    e.make_float = [](Options& o, const PositionContext& c) { return std::make_shared<P<float>>(o, c); };
    e.make_double = [](Options& o, const PositionContext& c) { return std::make_shared<P<double>>(o, c); };
    return e;
}

using PositionRegistry = Registry<PositionEntry>;  // nn/registry.hpp: refuses a second entry of a name

// The process-wide registry, with the built-in encodings registered on first use.
PositionRegistry& position_registry();

// Builds encoding `type` from its options (validated; unknown options rejected). An unknown type
// throws OptionError listing the registered names.
template <class T>
std::shared_ptr<PositionEncoding<T>> make_position(const std::string& type, Options& opts, const PositionContext& ctx);

// The option every encoding takes, read by make_position: `randomized: N` (0 = off) trains with each batch's
// positions drawn as a sorted random subset of [0, N) (Ruoss et al. 2023); evaluation uses 0, 1, 2, ...
// Not in describe_position_options (which lists each encoding's own options; run names fill those in).
constexpr const char* kRandomizedOption = "randomized";
// Its companion: `randomized_eval: identity` (default; evaluate at 0, 1, 2, ...), `sample` (evaluate and
// decode at positions drawn the same way, from a stream restarted at every eval(), one draw per evaluation
// batch for its longest sequence) or `sample_by_length` (the same with evaluation batches of one length each:
// the reference code's way, where every batch has one length).
constexpr const char* kRandomizedEvalOption = "randomized_eval";
// And `randomized_form: positions` (default: every encoding reads the drawn positions, relative ones their
// differences, as Ruoss et al.'s paper describes it) or `distances` (alibi and txl: each batch draws the
// distances of the offsets 1, 2, ... instead, as Ruoss et al.'s released code does; PositionMap above).
constexpr const char* kRandomizedFormOption = "randomized_form";

// One documented option of an encoding, recorded by building it with defaults (for `relpos list`).
// omit_from_run_name_at: the value at which a run's name leaves the option out ("" = never; declared with
// Options::omit_from_run_name_at where the option is read).
struct OptionDoc {
    std::string key, type, default_value, range;
    std::string omit_from_run_name_at;
    bool evaluation_only = false;  // Options::evaluation_only: `relpos eval --run` may override it
};
std::vector<OptionDoc> describe_position_options(const std::string& type);
// The options every encoding takes (kRandomizedOption, kRandomizedEvalOption), described the same way.
std::vector<OptionDoc> describe_common_position_options();

}  // namespace relpos::nn

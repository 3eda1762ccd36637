#include <algorithm>

#include <fmt/format.h>

#include "nn/position.hpp"

namespace relpos::nn {

// ---- the registration lines: one line per built-in position encoding, each defined in its own file
// nn/position_<name>.cpp as `void register_<name>(PositionRegistry&)`, declared and called here. `relpos list`
// shows them in this order.
PositionRegistry& position_registry() {
    static PositionRegistry reg = [] {
        PositionRegistry r;
        void register_none(PositionRegistry&);       register_none(r);
        void register_sinusoidal(PositionRegistry&); register_sinusoidal(r);
        void register_learned(PositionRegistry&);    register_learned(r);
        void register_shaw(PositionRegistry&);       register_shaw(r);
        void register_rope(PositionRegistry&);       register_rope(r);
        void register_alibi(PositionRegistry&);      register_alibi(r);
        void register_t5(PositionRegistry&);         register_t5(r);
        void register_kerple(PositionRegistry&);     register_kerple(r);
        void register_fire(PositionRegistry&);       register_fire(r);
        void register_txl(PositionRegistry&);        register_txl(r);
        void register_xpos(PositionRegistry&);       register_xpos(r);
        void register_cope(PositionRegistry&);       register_cope(r);
        return r;
    }();
    return reg;
}

template <class T>
std::shared_ptr<PositionEncoding<T>> make_position(const std::string& type, Options& opts, const PositionContext& ctx) {
    const PositionEntry* e = position_registry().find(type);
    if (!e) {
        const auto names = position_registry().names();
        std::string list;
        for (auto& n : names) list += (list.empty() ? "" : ", ") + n;
        auto s = did_you_mean(type, names);
        opts.fail("type", fmt::format("'{}' is not a registered position encoding{}; registered: {}", type,
                                      s ? fmt::format(" (did you mean '{}'?)", *s) : "", list));
    }
    std::shared_ptr<PositionEncoding<T>> p;
    if constexpr (std::is_same_v<T, float>)
        p = e->make_float(opts, ctx);
    else
        p = e->make_double(opts, ctx);
    opts.get_string("type", type);  // `type` itself is a known key
    // The option every encoding takes (kRandomizedOption): randomized positions at training time.
    const long n = opts.get_int(kRandomizedOption, 0, 0, 1 << 20);
    if (n > 0 && !p->reads_positions())
        opts.fail(kRandomizedOption, fmt::format("has nothing to randomize: encoding {} gives the model no integer "
                                                 "positions to draw",
                                                 type));
    if (n > 0 && static_cast<std::size_t>(n) > p->max_length())
        opts.fail(kRandomizedOption, fmt::format("draws positions up to {} but the encoding has only {} (raise max_len "
                                                 "to at least {})", n - 1, p->max_length(), n));
    p->set_randomized_range(static_cast<std::size_t>(n));
    const std::string at_eval =
        opts.get_string(kRandomizedEvalOption, "identity", {"identity", "sample", "sample_by_length"});
    if (at_eval != "identity" && n == 0)
        opts.fail(kRandomizedEvalOption, "samples positions at evaluation only with randomized: N (N > 0) set too");
    p->set_randomized_at_eval(at_eval != "identity");
    p->set_randomized_eval_by_length(at_eval == "sample_by_length");
    const bool distances = opts.get_string(kRandomizedFormOption, "positions", {"positions", "distances"}) == "distances";
    if (distances && n == 0)
        opts.fail(kRandomizedFormOption, "draws distances only with randomized: N (N > 0) set too");
    if (distances && !p->supports_random_distances())
        opts.fail(kRandomizedFormOption, fmt::format("distances: encoding {} reads positions, not offsets' distances "
                                                     "(alibi and txl do)", type));
    p->set_randomized_distances(distances);
    opts.omit_from_run_name_at(kRandomizedOption, "0");             // came 2026-11-24, after runs were finished
    opts.omit_from_run_name_at(kRandomizedEvalOption, "identity");  // the same
    opts.evaluation_only(kRandomizedEvalOption);
    opts.omit_from_run_name_at(kRandomizedFormOption, "positions");  // came 2026-12-06
    opts.finish();
    return p;
}

namespace {
// Options that answer every getter with its default and record what was asked.
class RecordingOptions : public Options {
public:
    std::vector<OptionDoc> docs;
    long get_int(const std::string& k, long def, long mn, long mx) override {
        docs.push_back({k, "int", std::to_string(def), fmt::format("[{}, {}]", mn, mx), ""});
        return def;
    }
    double get_double(const std::string& k, double def, double mn, double mx) override {
        docs.push_back({k, "number", fmt::format("{}", def), fmt::format("[{}, {}]", mn, mx), ""});
        return def;
    }
    bool get_bool(const std::string& k, bool def) override {
        docs.push_back({k, "bool", def ? "true" : "false", "true|false", ""});
        return def;
    }
    std::string get_string(const std::string& k, const std::string& def, const std::vector<std::string>& allowed) override {
        std::string r;
        for (auto& a : allowed) r += (r.empty() ? "" : "|") + a;
        docs.push_back({k, "string", def, r, ""});
        return def;
    }
    bool has(const std::string&) const override { return false; }
    void omit_from_run_name_at(const std::string& k, const std::string& value) override {
        for (auto& d : docs)
            if (d.key == k) d.omit_from_run_name_at = value;
    }
    void evaluation_only(const std::string& k) override {
        for (auto& d : docs)
            if (d.key == k) d.evaluation_only = true;
    }
    void finish() override {}
    void fail(const std::string& key, const std::string& what) override {
        throw OptionError(fmt::format("'{}' {}", key, what));
    }
};
}  // namespace

std::vector<OptionDoc> describe_position_options(const std::string& type) {
    const PositionEntry* e = position_registry().find(type);
    if (!e) return {};
    RecordingOptions rec;
    Rng rng(0);
    PositionContext ctx{8, 2, Side::Encoder, &rng};
    e->make_double(rec, ctx);
    // keep the first mention of each key
    std::vector<OptionDoc> out;
    for (auto& d : rec.docs)
        if (std::none_of(out.begin(), out.end(), [&](const OptionDoc& o) { return o.key == d.key; })) out.push_back(d);
    return out;
}

std::vector<OptionDoc> describe_common_position_options() {
    // make_position reads them after the encoding's own options: recorded through encoding none, which has none.
    RecordingOptions rec;
    Rng rng(0);
    PositionContext ctx{8, 2, Side::Encoder, &rng};
    make_position<double>("none", rec, ctx);
    std::vector<OptionDoc> out;
    for (auto& d : rec.docs)
        if (d.key == kRandomizedOption || d.key == kRandomizedEvalOption || d.key == kRandomizedFormOption) out.push_back(d);
    return out;
}

template std::shared_ptr<PositionEncoding<float>> make_position(const std::string&, Options&, const PositionContext&);
template std::shared_ptr<PositionEncoding<double>> make_position(const std::string&, Options&, const PositionContext&);

}  // namespace relpos::nn

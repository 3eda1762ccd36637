#include "experiments/run/identity.hpp"

#include <algorithm>

#include "autodiff/rng.hpp"
#include "nn/position.hpp"

namespace relpos {

YAML::Node resolved_position(const PositionSpec& p) {
    YAML::Node node = YAML::Clone(p.node);
    if (!node.IsMap()) return node;
    try {
        auto docs = nn::describe_position_options(p.type);
        for (const auto& d : docs)
            if (!node[d.key] && !d.default_value.empty()) node[d.key] = YAML::Load(d.default_value);
        // Options added after runs were finished: at the value each declares (the computation those runs
        // did) they are left out, so the runs keep their names.
        for (const auto& d : nn::describe_common_position_options()) docs.push_back(d);
        for (const auto& d : docs)
            if (!d.omit_from_run_name_at.empty() && node[d.key] && node[d.key].IsScalar() &&
                node[d.key].Scalar() == d.omit_from_run_name_at)
                node.remove(d.key);
    } catch (const std::exception&) {
        // an unknown type is reported by the model's validation, not here
    }
    return node;
}

std::string run_identity(const ExperimentConfig& c) {
    // Position specs with every option a plug-in has, defaults filled in, so that {type: shaw, k: 16}
    // and {type: shaw, k: 16, keys: true, values: true} (the same model) name the same run.
    // `full` shares its position nodes with `c` (a YAML::Node copy is a handle): each is rebound with
    // reset(), never assigned, since Node::operator= writes through the handle into the node it refers
    // to and would rewrite the caller's config (tests/test_run_naming.cpp).
    ExperimentConfig full = c;
    for (auto& p : full.model.position) p.node.reset(resolved_position(p));
    // An encoding that adds nothing as configured (PositionEncoding::same_as_none: Shaw with neither term,
    // Table 3's last row) is the model without position information, bit for bit, so it names the run
    // {type: none} names and a run store trains it once. Only where it is the model's one encoding.
    if (c.model.position.size() == 1) {
        const auto& spec = c.model.position.front();
        try {
            YamlOptions opts = spec.options();
            Rng rng(0);
            const nn::PositionContext ctx{static_cast<std::size_t>(std::max<long>(c.model.d_model, 1)),
                                          static_cast<std::size_t>(std::max<long>(c.model.heads, 1)), nn::Side::Encoder,
                                          &rng};
            if (spec.type != "none" && nn::make_position<float>(spec.type, opts, ctx)->same_as_none()) {
                auto& p = full.model.position.front();
                p.type = "none";
                p.node.reset(YAML::Load("{type: none}"));
            }
        } catch (const std::exception&) {
            // invalid options are reported by the model's validation, not here
        }
    }
    return config_hash(full);
}


bool same_run(const std::string& recorded, const ExperimentConfig& cfg) {
    return !recorded.empty() && (recorded == config_hash(cfg) || recorded == run_identity(cfg));
}

}  // namespace relpos

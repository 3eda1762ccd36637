// Module / Parameter base: a tree of modules with stable dotted parameter names
// ("encoder.layers.0.self_attn.rel_k"), train/eval mode and initialisers.
#pragma once

#include <map>
#include <stdexcept>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/autodiff.hpp"

namespace relpos::nn {

template <class T>
class Module {
public:
    Module() = default;
    virtual ~Module() = default;
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    // Parameters of this module and its children, depth-first in registration order.
    std::vector<std::pair<std::string, Var<T>>> named_parameters() const {
        std::vector<std::pair<std::string, Var<T>>> out;
        collect("", out);
        // Names key checkpoints and optimiser state: two parameters under one name would silently share
        // a checkpoint entry. The same Var under two names (a tied table) is fine; two Vars are not.
        std::map<std::string, const Node<T>*> seen;
        for (auto& [n, p] : out) {
            auto [it, fresh] = seen.emplace(n, p.node().get());
            if (!fresh && it->second != p.node().get())
                throw std::logic_error("two different parameters are both named '" + n + "'");
        }
        return out;
    }
    std::vector<Var<T>> parameters() const {
        std::vector<Var<T>> out;
        for (auto& [n, p] : named_parameters()) out.push_back(p);
        return out;
    }
    std::size_t num_parameters() const {
        std::size_t n = 0;
        for (auto& [name, p] : named_parameters()) n += p.numel();
        return n;
    }
    void zero_grad() {
        for (auto& p : parameters()) p.zero_grad();
    }

    virtual void train(bool on = true) {
        training_ = on;
        for (auto& [n, c] : children_) c->train(on);
    }
    void eval() { train(false); }
    bool training() const { return training_; }

protected:
    Var<T> register_parameter(const std::string& name, Array<T> init) {
        Var<T> p(std::move(init), true);
        params_.emplace_back(name, p);
        return p;
    }
    // A parameter already owned elsewhere (weight tying) is not registered twice: use the owner's.
    template <class M>
    std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
        children_.emplace_back(name, m);
        return m;
    }

private:
    void collect(const std::string& prefix, std::vector<std::pair<std::string, Var<T>>>& out) const {
        for (auto& [n, p] : params_) out.emplace_back(prefix + n, p);
        // A child registered under "" contributes its parameters under this module's own prefix
        // (a position hook's rel_k shows up as self_attn.rel_k).
        for (auto& [n, c] : children_) c->collect(n.empty() ? prefix : prefix + n + ".", out);
    }

    std::vector<std::pair<std::string, Var<T>>> params_;
    std::vector<std::pair<std::string, std::shared_ptr<Module<T>>>> children_;
    bool training_ = true;
};

// ---- initialisers
// Xavier/Glorot uniform: U(-a, a), a = sqrt(6 / (fan_in + fan_out)) (projections, relative tables).
template <class T>
Array<T> xavier_uniform(const Shape& s, std::size_t fan_in, std::size_t fan_out, Rng& rng) {
    const double a = std::sqrt(6.0 / double(fan_in + fan_out));
    Array<T> w = uninit<T>(s);
    for (auto& v : w) v = T(rng.uniform(-a, a));
    return w;
}
template <class T>
Array<T> normal_init(const Shape& s, double stddev, Rng& rng) {
    Array<T> w = uninit<T>(s);
    for (auto& v : w) v = T(rng.normal() * stddev);
    return w;
}

}  // namespace relpos::nn

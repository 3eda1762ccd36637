// The tape: define-by-run nodes, reverse-mode backward, gradient accumulation.
//
// Every op computes its value eagerly and, when any input needs a gradient, records a Node holding
// its parents and a backward closure. backward() walks the graph once in reverse topological order;
// each closure adds (+=) into its parents' gradients. Parameters are leaf nodes that live in modules
// across steps; per-step nodes are released as soon as backward has passed them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autodiff/tensor.hpp"

namespace relpos {

template <class T>
struct Node {
    Array<T> value;
    Array<T> grad;  // allocated on first accumulation (has_grad)
    bool has_grad = false;
    bool requires_grad = false;
    const char* op = "leaf";
    std::vector<std::shared_ptr<Node<T>>> parents;
    std::function<void(Node<T>&)> backward_fn;  // reads this->grad, accumulates into parents

    bool is_leaf() const { return !backward_fn; }

    // The gradient buffer, zero-filled on first use.
    Array<T>& grad_buf() {
        if (!has_grad) {
            grad = zeros<T>(shape_of(value));
            has_grad = true;
        }
        return grad;
    }
};

// Gradient recording on/off for this thread (off in evaluation and decoding).
bool grad_enabled();
class NoGradGuard {
public:
    NoGradGuard();
    ~NoGradGuard();
    NoGradGuard(const NoGradGuard&) = delete;
    NoGradGuard& operator=(const NoGradGuard&) = delete;

private:
    bool prev_;
};

template <class T>
class Var {
public:
    using NodePtr = std::shared_ptr<Node<T>>;
    using scalar = T;

    Var() = default;
    explicit Var(Array<T> value, bool requires_grad = false) : n_(std::make_shared<Node<T>>()) {
        n_->value = std::move(value);
        n_->requires_grad = requires_grad;
    }
    explicit Var(NodePtr n) : n_(std::move(n)) {}

    bool defined() const { return static_cast<bool>(n_); }
    const Array<T>& value() const { return n_->value; }
    Array<T>& value() { return n_->value; }
    // Gradient of the last backward(); zeros when nothing has flowed here yet.
    const Array<T>& grad() const { return n_->grad_buf(); }
    bool has_grad() const { return n_->has_grad; }
    Shape shape() const { return shape_of(n_->value); }
    std::size_t dim(long i) const;
    std::size_t ndim() const { return n_->value.dimension(); }
    std::size_t numel() const { return n_->value.size(); }
    T item() const;  // value of a one-element tensor
    const T* data() const { return n_->value.data(); }
    bool requires_grad() const { return n_->requires_grad; }
    const NodePtr& node() const { return n_; }

    void zero_grad() {
        if (n_->has_grad) std::fill(n_->grad.begin(), n_->grad.end(), T(0));
    }

    // Reverse-mode sweep from this node. The seed defaults to 1 for a one-element tensor; a
    // non-scalar output needs an explicit seed of its own shape (dL/dy). The per-step graph is
    // released as it is walked, so backward runs once per forward.
    void backward() const;
    void backward(const Array<T>& seed) const;
    // backward() that also calls on_leaf_done(leaf) for each leaf needing a gradient (a parameter) as soon
    // as every contribution to its gradient has been added, while the rest of the graph is still being
    // walked: a data-parallel gradient sum starts there (experiments/train/distributed.hpp). The
    // gradients are exactly those of backward().
    using LeafDone = std::function<void(const Node<T>&)>;
    void backward(const LeafDone& on_leaf_done) const;

private:
    void walk_backward(const Array<T>& seed, const LeafDone* on_leaf_done) const;
    NodePtr n_;
};

// Creates an op's result node: records parents and the backward closure only when gradients are
// being recorded and some parent needs one.
template <class T>
Var<T> make_result(Array<T> value, std::vector<Var<T>> parents, std::function<void(Node<T>&)> fn,
                   const char* op) {
    auto n = std::make_shared<Node<T>>();
    n->value = std::move(value);
    n->op = op;
    if (grad_enabled()) {
        bool need = false;
        for (auto& p : parents) need = need || (p.defined() && p.requires_grad());
        if (need) {
            n->requires_grad = true;
            n->parents.reserve(parents.size());
            for (auto& p : parents) n->parents.push_back(p.node());
            n->backward_fn = std::move(fn);
        }
    }
    return Var<T>(std::move(n));
}

// The one helper that reduces a broadcast gradient `g` back to `target` shape (sums over the
// broadcast axes), as flashlight's sumAs.
template <class T>
Array<T> sum_to(const Array<T>& g, const Shape& target);

// parent.grad += g, reducing broadcast axes first when shapes differ.
template <class T>
void accumulate_grad(Node<T>& parent, const Array<T>& g);

// Raw pointer accumulation for kernels that produce a gradient with the parent's exact shape.
template <class T>
inline T* grad_ptr(Node<T>& n) {
    return n.grad_buf().data();
}

// For kernels that write every element of a parent's gradient: returns the buffer and whether it
// already holds gradient (then the kernel adds) or is fresh and uninitialised (then it assigns,
// which saves a zero-fill and a read per element — most intermediate gradients have one consumer).
template <class T>
inline std::pair<T*, bool> grad_target(Node<T>& n) {
    if (n.has_grad) return {n.grad.data(), true};
    n.grad = uninit<T>(shape_of(n.value));
    n.has_grad = true;
    return {n.grad.data(), false};
}

}  // namespace relpos

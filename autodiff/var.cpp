#include "autodiff/var.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace relpos {

// ---------------------------------------------------------------- shape helpers

std::string shape_str(const Shape& s) {
    std::string r = "(";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i) r += ", ";
        r += std::to_string(s[i]);
    }
    if (s.size() == 1) r += ",";
    return r + ")";
}

void shape_fail(const std::string& op, const std::string& what) {
    throw ShapeError(fmt::format("{}: {}", op, what));
}

Shape broadcast_shapes(const std::string& op, const Shape& a, const Shape& b) {
    const std::size_t n = std::max(a.size(), b.size());
    Shape r(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
        const std::size_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
        if (da != db && da != 1 && db != 1)
            shape_fail(op, fmt::format("shapes {} and {} cannot be broadcast together", shape_str(a),
                                       shape_str(b)));
        r[i] = da == 1 ? db : da;
    }
    return r;
}

std::size_t norm_axis(const std::string& op, long axis, std::size_t ndim) {
    const long n = static_cast<long>(ndim);
    if (axis < -n || axis >= n)
        shape_fail(op, fmt::format("axis {} is out of range for a tensor with {} dimensions", axis, ndim));
    return static_cast<std::size_t>(axis < 0 ? axis + n : axis);
}

AxisSplit split_axis(const Shape& s, std::size_t axis) {
    AxisSplit r{1, s[axis], 1};
    for (std::size_t i = 0; i < axis; ++i) r.outer *= s[i];
    for (std::size_t i = axis + 1; i < s.size(); ++i) r.inner *= s[i];
    return r;
}

// ---------------------------------------------------------------- grad mode

namespace {
thread_local bool g_grad_enabled = true;
}
bool grad_enabled() { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : prev_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = prev_; }

// ---------------------------------------------------------------- Var

template <class T>
std::size_t Var<T>::dim(long i) const {
    return n_->value.shape()[norm_axis("dim", i, ndim())];
}

template <class T>
T Var<T>::item() const {
    if (n_->value.size() != 1)
        shape_fail("item", fmt::format("needs a one-element tensor, got shape {}", shape_str(shape())));
    return n_->value.data()[0];
}

template <class T>
void Var<T>::backward() const {
    if (n_->value.size() != 1)
        shape_fail("backward", fmt::format("without a seed needs a one-element output, got shape {}",
                                           shape_str(shape())));
    backward(full<T>(shape(), T(1)));
}

template <class T>
void Var<T>::backward(const LeafDone& on_leaf_done) const {
    if (n_->value.size() != 1)
        shape_fail("backward", fmt::format("without a seed needs a one-element output, got shape {}",
                                           shape_str(shape())));
    walk_backward(full<T>(shape(), T(1)), &on_leaf_done);
}

template <class T>
void Var<T>::backward(const Array<T>& seed) const {
    walk_backward(seed, nullptr);
}

template <class T>
void Var<T>::walk_backward(const Array<T>& seed, const LeafDone* on_leaf_done) const {
    if (shape_of(seed) != shape())
        shape_fail("backward", fmt::format("seed shape {} differs from output shape {}",
                                           shape_str(shape_of(seed)), shape_str(shape())));
    if (!n_->requires_grad) return;

    // Iterative post-order DFS: topo holds every node that needs a gradient, inputs first.
    std::vector<std::shared_ptr<Node<T>>> topo;
    std::unordered_set<Node<T>*> seen;
    std::vector<std::pair<std::shared_ptr<Node<T>>, std::size_t>> st2;
    st2.emplace_back(n_, 0);
    seen.insert(n_.get());
    while (!st2.empty()) {
        auto& [node, idx] = st2.back();
        if (idx < node->parents.size()) {
            auto p = node->parents[idx++];
            if (p && p->requires_grad && !seen.count(p.get())) {
                seen.insert(p.get());
                st2.emplace_back(std::move(p), 0);
            }
        } else {
            topo.push_back(std::move(node));
            st2.pop_back();
        }
    }

    {
        Array<T>& g = n_->grad_buf();
        std::transform(g.begin(), g.end(), seed.begin(), g.begin(), std::plus<T>());
    }
    // For on_leaf_done: how many consumers of each leaf have not run their backward yet.
    std::unordered_map<const Node<T>*, std::size_t> waiting;
    if (on_leaf_done)
        for (const auto& node : topo)
            for (const auto& p : node->parents)
                if (p && p->requires_grad && p->is_leaf()) ++waiting[p.get()];
    // Reverse topological order: a node runs after all its consumers have added their share.
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
        Node<T>& node = **it;
        if (node.backward_fn) {
            if (node.has_grad) node.backward_fn(node);
            if (on_leaf_done)
                for (const auto& p : node.parents)
                    if (p && p->requires_grad && p->is_leaf() && --waiting[p.get()] == 0) (*on_leaf_done)(*p);
            // Release this step's graph as we go: intermediate gradients, closures and the
            // references to parents. Values stay while the user holds the Var.
            node.backward_fn = nullptr;
            node.parents.clear();
            node.parents.shrink_to_fit();
            node.grad = Array<T>();
            node.has_grad = false;
        }
        it->reset();
    }
}

// ---------------------------------------------------------------- broadcast reduction

template <class T>
Array<T> sum_to(const Array<T>& g, const Shape& target) {
    const Shape gs = shape_of(g);
    if (gs == target) return g;
    const std::size_t nd = gs.size();
    if (target.size() > nd)
        shape_fail("sum_to", fmt::format("cannot reduce {} to {}", shape_str(gs), shape_str(target)));
    // Right-align target against g.
    Shape t(nd, 1);
    for (std::size_t i = 0; i < target.size(); ++i) t[nd - target.size() + i] = target[i];
    for (std::size_t i = 0; i < nd; ++i)
        if (t[i] != gs[i] && t[i] != 1)
            shape_fail("sum_to", fmt::format("cannot reduce {} to {}", shape_str(gs), shape_str(target)));

    Array<T> r = zeros<T>(target);
    T* out = r.data();
    const T* in = g.data();
    // Fast path: target is a suffix of g (bias-like): sum rows.
    std::size_t lead = 0;
    while (lead < nd && t[lead] == 1) ++lead;
    bool suffix = true;
    for (std::size_t i = lead; i < nd; ++i) suffix = suffix && t[i] == gs[i];
    if (suffix) {
        const std::size_t inner = numel(t);
        const std::size_t rows = g.size() / std::max<std::size_t>(inner, 1);
        for (std::size_t r0 = 0; r0 < rows; ++r0) {
            const T* src = in + r0 * inner;
            for (std::size_t j = 0; j < inner; ++j) out[j] += src[j];
        }
        return r;
    }
    // General path: walk g with a multi-index over the axes before its trailing kept ones (a (B, H, L, d) gradient
    // to (1, H, 1, d): B, H and L), each step adding one contiguous block of the kept trailing axes (d) to the
    // target at its offset (stride 0 on reduced axes). Each target entry gets its terms in g's order, as an
    // element-by-element walk adds them.
    std::size_t tail = nd;
    while (tail > 0 && t[tail - 1] == gs[tail - 1]) --tail;
    std::size_t inner = 1;
    for (std::size_t i = tail; i < nd; ++i) inner *= gs[i];
    std::vector<std::size_t> tstride(nd, 0);
    {
        std::size_t s = 1;
        for (std::size_t i = nd; i-- > 0;) {
            tstride[i] = t[i] == 1 ? 0 : s;
            s *= t[i];
        }
    }
    std::vector<std::size_t> idx(nd, 0);
    const std::size_t total = g.size();
    std::size_t off = 0;
    for (std::size_t e = 0; e < total; e += inner) {
        T* o = out + off;
        const T* src = in + e;
        for (std::size_t j = 0; j < inner; ++j) o[j] += src[j];
        for (std::size_t i = tail; i-- > 0;) {
            if (++idx[i] < gs[i]) {
                off += tstride[i];
                break;
            }
            off -= tstride[i] * (gs[i] - 1);
            idx[i] = 0;
        }
    }
    return r;
}

template <class T>
void accumulate_grad(Node<T>& parent, const Array<T>& g) {
    if (!parent.requires_grad) return;
    const Shape ps = shape_of(parent.value);
    Array<T>& pg = parent.grad_buf();
    if (shape_of(g) == ps) {
        T* d = pg.data();
        const T* s = g.data();
        const std::size_t n = pg.size();
        for (std::size_t i = 0; i < n; ++i) d[i] += s[i];
    } else {
        Array<T> r = sum_to(g, ps);
        T* d = pg.data();
        const T* s = r.data();
        const std::size_t n = pg.size();
        for (std::size_t i = 0; i < n; ++i) d[i] += s[i];
    }
}

template class Var<float>;
template class Var<double>;
template Array<float> sum_to(const Array<float>&, const Shape&);
template Array<double> sum_to(const Array<double>&, const Shape&);
template void accumulate_grad(Node<float>&, const Array<float>&);
template void accumulate_grad(Node<double>&, const Array<double>&);

}  // namespace relpos

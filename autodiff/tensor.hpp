// Tensors: xtensor containers (row-major, contiguous) plus the few helpers every op needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

namespace relpos {

using Shape = std::vector<std::size_t>;

// Every tensor value and gradient is a contiguous row-major xarray; kernels work on .data().
template <class T>
using Array = xt::xarray<T, xt::layout_type::row_major>;

inline std::size_t numel(const Shape& s) {
    std::size_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

std::string shape_str(const Shape& s);  // "(2, 3, 4)"

template <class T>
Shape shape_of(const Array<T>& a) {
    return Shape(a.shape().begin(), a.shape().end());
}

template <class T>
Array<T> zeros(const Shape& s) {
    Array<T> a = Array<T>::from_shape(s);
    std::fill(a.begin(), a.end(), T(0));
    return a;
}

template <class T>
Array<T> full(const Shape& s, T v) {
    Array<T> a = Array<T>::from_shape(s);
    std::fill(a.begin(), a.end(), v);
    return a;
}

template <class T>
Array<T> uninit(const Shape& s) {
    return Array<T>::from_shape(s);
}

// A user-visible shape error: names the op and the offending shapes.
struct ShapeError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

[[noreturn]] void shape_fail(const std::string& op, const std::string& what);

// Numpy broadcasting of two shapes; throws ShapeError naming `op` and both shapes.
Shape broadcast_shapes(const std::string& op, const Shape& a, const Shape& b);

// Normalises a possibly negative axis; throws ShapeError naming `op`.
std::size_t norm_axis(const std::string& op, long axis, std::size_t ndim);

// Splits a shape around `axis` into (outer, n, inner) for strided kernels.
struct AxisSplit {
    std::size_t outer, n, inner;
};
AxisSplit split_axis(const Shape& s, std::size_t axis);

}  // namespace relpos

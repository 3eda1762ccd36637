// relpos autodiff: include this one header.
#pragma once

#include "autodiff/blas.hpp"
#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/rng.hpp"
#include "autodiff/tensor.hpp"
#include "autodiff/var.hpp"

#pragma once
// The whole engine: #include "autograd/autograd.h".
#include "autograd/engine.h"
#include "autograd/generator.h"
#include "autograd/gradcheck.h"
#include "autograd/graph_dot.h"
#include "autograd/ops.h"
#include "autograd/tensor.h"

#version 450
#extension GL_GOOGLE_include_directive : require
// MATMUL: C[b][M,N] = op(a[b])[M,K] x op(b[b])[K,N]; transposes are strides
// (b = 0 only when 2-D).
#include "gemm_inputs.glsl"
#include "common.glsl"

layout(binding = 0) readonly buffer A { GEMM_IN a[]; };
layout(binding = 1) readonly buffer B { GEMM_IN bm[]; };

// push: PU(9), PU(10) = a strides along m, k; PU(11), PU(12) = b strides along k, n;
// PU(13), PU(14) = a and b strides from one batch to the next
float load_a(uint batch, uint m, uint k) { return float(a[OFF(0) + batch * PU(13) + m * PU(9) + k * PU(10)]); }
float load_b(uint batch, uint k, uint n) { return float(bm[OFF(1) + batch * PU(14) + k * PU(11) + n * PU(12)]); }

#include "gemm_core.glsl"

#version 450
#extension GL_GOOGLE_include_directive : require
// CONV2D as implicit GEMM per (image n, group g), batch b = n*G + g:
// y[n, g*Og+m, p] = sum_k w[g*Og+m, k] * im2col(x)[n, g, k, p],
// k = (c, ky, kx) over C/G x kh x kw, p = (oy, ox) over Ho x Wo.
#include "gemm_inputs.glsl"
#include "common.glsl"

layout(binding = 0) readonly buffer W { GEMM_IN w[]; };
layout(binding = 1) readonly buffer X { GEMM_IN xs[]; };

// push: PU(9) = C, PU(10) = H, PU(11) = W, PU(12) = Wo, PU(13) = kh, PU(14) = kw,
//       PU(15) = stride h | w << 16, PU(16) = pad, PU(17) = dilation (same packing)
float load_a(uint b, uint m, uint k) {
    uint G = PU(8);
    return float(w[OFF(0) + ((b % G) * PU(0) + m) * PU(2) + k]);
}

float load_b(uint b, uint k, uint p) {
    uint G = PU(8), C = PU(9), H = PU(10), Wd = PU(11), Wo = PU(12), kh = PU(13), kw = PU(14);
    uint n = b / G, g = b % G, Cg = C / G;
    uint c = k / (kh * kw), r = k % (kh * kw);
    uint ky = r / kw, kx = r % kw;
    uint oy = p / Wo, ox = p % Wo;
    int iy = int(oy * (PU(15) & 0xffffu) + ky * (PU(17) & 0xffffu)) - int(PU(16) & 0xffffu);
    int ix = int(ox * (PU(15) >> 16) + kx * (PU(17) >> 16)) - int(PU(16) >> 16);
    if (iy < 0 || ix < 0 || iy >= int(H) || ix >= int(Wd)) return 0.0;
    return float(xs[OFF(1) + ((n * C + g * Cg + c) * H + uint(iy)) * Wd + uint(ix)]);
}

#include "gemm_core.glsl"

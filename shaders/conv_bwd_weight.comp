#version 450
#extension GL_GOOGLE_include_directive : require
// CONV2D_BWD_WEIGHT as implicit GEMM per group g (batch b = g):
// dw[g*Og+o, j] = sum_k dy[n, g*Og+o, p] * im2col(x)[n, g, j, p],
// k = (n, p) over N x Ho*Wo, j = (c, ky, kx). K is long (the batch and
// every output pixel), so the host splits it into slices.
#include "gemm_inputs.glsl"
#include "common.glsl"

layout(binding = 0) readonly buffer DY { GEMM_IN dy[]; };
layout(binding = 1) readonly buffer X { GEMM_IN xs[]; };

// M = Og, N = Cg*kh*kw, K = N*Ho*Wo.
// push: PU(9) = C, PU(10) = H, PU(11) = W, PU(12) = Wo, PU(13) = kh, PU(14) = kw,
//       PU(15) = stride h | w << 16, PU(16) = pad, PU(17) = dilation, PU(18) = O, PU(19) = Ho*Wo
float load_a(uint g, uint o, uint k) {
    uint P = PU(19), Og = PU(0);
    uint n = k / P, p = k % P;
    return float(dy[OFF(0) + (n * PU(18) + g * Og + o) * P + p]);
}

float load_b(uint g, uint k, uint j) {
    uint G = PU(8), C = PU(9), H = PU(10), Wd = PU(11), Wo = PU(12), kh = PU(13), kw = PU(14), P = PU(19);
    uint Cg = C / G;
    uint n = k / P, p = k % P;
    uint c = j / (kh * kw), r = j % (kh * kw);
    uint ky = r / kw, kx = r % kw;
    uint oy = p / Wo, ox = p % Wo;
    int iy = int(oy * (PU(15) & 0xffffu) + ky * (PU(17) & 0xffffu)) - int(PU(16) & 0xffffu);
    int ix = int(ox * (PU(15) >> 16) + kx * (PU(17) >> 16)) - int(PU(16) >> 16);
    if (iy < 0 || ix < 0 || iy >= int(H) || ix >= int(Wd)) return 0.0;
    return float(xs[OFF(1) + ((n * C + g * Cg + c) * H + uint(iy)) * Wd + uint(ix)]);
}

#include "gemm_core.glsl"

#version 450
#extension GL_GOOGLE_include_directive : require
// CONV2D_BWD_DATA (and CONV_TRANSPOSE2D) as implicit GEMM per (n, g):
// dx[n, g*Cg+c, q] = sum_k w[g*Og+o, c, ky, kx] * dy[n, g*Og+o, oy, ox],
// k = (o, ky, kx), q = (iy, ix), where iy + pad - ky*dil = oy*stride
// (terms whose position is not on the stride grid are zero).
#include "gemm_inputs.glsl"
#include "common.glsl"

layout(binding = 0) readonly buffer W { GEMM_IN w[]; };
layout(binding = 1) readonly buffer DY { GEMM_IN dy[]; };

// M = Cg, N = H*W, K = Og*kh*kw.
// push: PU(9) = O, PU(10) = Ho, PU(11) = Wo, PU(12) = W, PU(13) = kh, PU(14) = kw,
//       PU(15) = stride h | w << 16, PU(16) = pad, PU(17) = dilation, PU(18) = Og
float load_a(uint b, uint c, uint k) {
    uint G = PU(8), Cg = PU(0), kk = PU(13) * PU(14), Og = PU(18);
    uint o = k / kk, r = k % kk;
    return float(w[OFF(0) + (((b % G) * Og + o) * Cg + c) * kk + r]);
}

float load_b(uint b, uint k, uint q) {
    uint G = PU(8), O = PU(9), Ho = PU(10), Wo = PU(11), Wd = PU(12), kh = PU(13), kw = PU(14), Og = PU(18);
    uint n = b / G, g = b % G;
    uint o = k / (kh * kw), r = k % (kh * kw);
    uint ky = r / kw, kx = r % kw;
    uint iy = q / Wd, ix = q % Wd;
    int sh = int(PU(15) & 0xffffu), sw = int(PU(15) >> 16);
    int ty = int(iy) + int(PU(16) & 0xffffu) - int(ky * (PU(17) & 0xffffu));
    int tx = int(ix) + int(PU(16) >> 16) - int(kx * (PU(17) >> 16));
    if (ty < 0 || tx < 0 || ty % sh != 0 || tx % sw != 0) return 0.0;
    int oy = ty / sh, ox = tx / sw;
    if (oy >= int(Ho) || ox >= int(Wo)) return 0.0;
    return float(dy[OFF(1) + ((n * O + g * Og + o) * Ho + uint(oy)) * Wo + uint(ox)]);
}

#include "gemm_core.glsl"

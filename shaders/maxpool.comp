#version 450
#extension GL_GOOGLE_include_directive : require
// Max pooling with -inf padding over [planes, H, W] -> [planes, Ho, Wo].
// BWD = 1 computes dx by gathering: each input position sums dy of the
// windows whose first maximum (row-major, strict >) it is, windows in
// output order, as the CPU backend; no atomics, deterministic.
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint BWD = 0;

layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer DY { float dy[]; };
layout(binding = 2) writeonly buffer Out { float o[]; };

// push: PU(0) = outputs, PU(1) = H, PU(2) = W, PU(3) = Ho, PU(4) = Wo,
//       PU(5) = kernel, PU(6) = stride, PU(7) = pad
int H, W, k, st, pad;

// Index (in the plane) of the window's first maximum, -1 if it holds only padding.
int window_argmax(uint plane_base, int oh, int ow) {
    int h0 = max(oh * st - pad, 0), h1 = min(oh * st - pad + k, H);
    int w0 = max(ow * st - pad, 0), w1 = min(ow * st - pad + k, W);
    if (h1 <= h0 || w1 <= w0) return -1;
    int best = h0 * W + w0;
    float bv = x[plane_base + uint(best)];
    for (int hh = h0; hh < h1; hh++)
        for (int ww = w0; ww < w1; ww++) {
            float v = x[plane_base + uint(hh * W + ww)];
            if (v > bv) {
                bv = v;
                best = hh * W + ww;
            }
        }
    return best;
}

void main() {
    uint i = flat_index();
    if (i >= PU(0)) return;
    H = int(PU(1));
    W = int(PU(2));
    int Ho = int(PU(3)), Wo = int(PU(4));
    k = int(PU(5));
    st = int(PU(6));
    pad = int(PU(7));
    if (BWD == 0u) {
        uint plane = i / uint(Ho * Wo), rem = i % uint(Ho * Wo);
        int oh = int(rem) / Wo, ow = int(rem) % Wo;
        uint pb = OFF(0) + plane * uint(H * W);
        int h0 = max(oh * st - pad, 0), h1 = min(oh * st - pad + k, H);
        int w0 = max(ow * st - pad, 0), w1 = min(ow * st - pad + k, W);
        float m = -1.0 / 0.0;
        for (int hh = h0; hh < h1; hh++)
            for (int ww = w0; ww < w1; ww++) {
                float v = x[pb + uint(hh * W + ww)];
                m = v > m ? v : m;
            }
        o[OFF(2) + i] = m;
        return;
    }
    uint plane = i / uint(H * W);
    int pos = int(i % uint(H * W));
    int ih = pos / W, iw = pos % W;
    uint pb = OFF(0) + plane * uint(H * W);
    uint gb = OFF(1) + plane * uint(Ho * Wo);
    // windows containing (ih, iw): oh*st - pad <= ih < oh*st - pad + k
    int oh0 = max((ih + pad - k + st) / st, 0), oh1 = min((ih + pad) / st, Ho - 1);
    int ow0 = max((iw + pad - k + st) / st, 0), ow1 = min((iw + pad) / st, Wo - 1);
    if (ih + pad - k + 1 < 0) oh0 = 0;
    if (iw + pad - k + 1 < 0) ow0 = 0;
    float acc = 0.0;
    for (int oh = oh0; oh <= oh1; oh++)
        for (int ow = ow0; ow <= ow1; ow++)
            if (window_argmax(pb, oh, ow) == pos) acc += dy[gb + uint(oh * Wo + ow)];
    o[OFF(2) + i] = acc;
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax / log-softmax and their backward along one axis of an
// (outer, len, inner) view. OP: 0 softmax, 1 log-softmax, 2 softmax
// backward (x = y), 3 log-softmax backward (x = y). ROWWG = 0: one
// invocation per row (short rows); ROWWG = 1: one workgroup per row, so no
// invocation loops over a long axis (lavapipe's loop budget).
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint ROWWG = 0;

layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer DY { float dy[]; };
layout(binding = 2) writeonly buffer Out { float o[]; };

shared float red[gl_WorkGroupSize.x];

float wg_sum(float v) {
    uint t = gl_LocalInvocationID.x;
    barrier();
    red[t] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    return red[0];
}

float wg_max(float v) {
    uint t = gl_LocalInvocationID.x;
    barrier();
    red[t] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
        if (t < s) red[t] = max(red[t], red[t + s]);
        barrier();
    }
    return red[0];
}

// push: PU(0) = outer, PU(1) = len, PU(2) = inner
void main() {
    uint len = PU(1), inner = PU(2);
    uint row, first, step;
    if (ROWWG == 1u) {
        row = flat_group();
        first = gl_LocalInvocationID.x;
        step = gl_WorkGroupSize.x;
    } else {
        row = flat_index();
        first = 0u;
        step = 1u;
    }
    if (row >= PU(0) * inner) return; // uniform per workgroup when ROWWG
    uint base = (row / inner) * len * inner + row % inner;
    uint xo = OFF(0) + base, go = OFF(1) + base, oo = OFF(2) + base;
    if (OP == 0u || OP == 1u) {
        float m = -1.0 / 0.0;
        for (uint l = first; l < len; l += step) m = max(m, x[xo + l * inner]);
        if (ROWWG == 1u) m = wg_max(m);
        float s = 0.0;
        for (uint l = first; l < len; l += step) {
            s += exp(x[xo + l * inner] - m);
        }
        if (ROWWG == 1u) s = wg_sum(s);
        if (OP == 0u) {
            float inv = 1.0 / s;
            for (uint l = first; l < len; l += step) o[oo + l * inner] = exp(x[xo + l * inner] - m) * inv;
        } else {
            float lse = m + log(s);
            for (uint l = first; l < len; l += step) o[oo + l * inner] = x[xo + l * inner] - lse;
        }
        return;
    }
    float s = 0.0;
    for (uint l = first; l < len; l += step) {
        float g = dy[go + l * inner];
        s += OP == 2u ? g * x[xo + l * inner] : g;
    }
    if (ROWWG == 1u) s = wg_sum(s);
    for (uint l = first; l < len; l += step) {
        float g = dy[go + l * inner], yv = x[xo + l * inner];
        o[oo + l * inner] = OP == 2u ? yv * (g - s) : g - exp(yv) * s;
    }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Same-shape elementwise maps, one element per invocation:
// out[i] = f(x[i]) or f(x[i], y[i]). OP selects f (vk_ops_eltwise.c).
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint GATED = 0; // EMA: binding 4 holds its optimizer step's grad_scale

const uint SILU = 0, SILU_BWD = 1, RELU = 2, RELU_BWD = 3, SIGMOID = 4, SIGMOID_BWD = 5, SCALE = 6, ADD = 7,
           EMA = 8, HARDSWISH = 9, HARDSWISH_BWD = 10;

layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer Y { float y[]; };
layout(binding = 2) buffer Out { float o[]; };
layout(binding = 3) readonly buffer H { float hyper[]; };
layout(binding = 4) readonly buffer S { float step_scale[]; };

// push: PU(0) = count, PF(1) = factor
void main() {
    uint i = flat_index();
    if (i >= PU(0)) return;
    float a = x[OFF(0) + i];
    float r;
    if (OP == SILU) {
        r = a * sigmoid_f(a);
    } else if (OP == SILU_BWD) {
        float s = sigmoid_f(a);
        r = y[OFF(1) + i] * s * (1.0 + a * (1.0 - s));
    } else if (OP == RELU) {
        r = a > 0.0 ? a : 0.0;
    } else if (OP == RELU_BWD) {
        r = a > 0.0 ? y[OFF(1) + i] : 0.0;
    } else if (OP == SIGMOID) {
        r = sigmoid_f(a);
    } else if (OP == SIGMOID_BWD) {
        r = y[OFF(1) + i] * a * (1.0 - a);
    } else if (OP == HARDSWISH) {
        r = a * min(max(a + 3.0, 0.0), 6.0) / 6.0;
    } else if (OP == HARDSWISH_BWD) {
        float dy = y[OFF(1) + i];
        r = a < -3.0 ? 0.0 : (a <= 3.0 ? dy * (a / 3.0 + 0.5) : dy);
    } else if (OP == SCALE) {
        r = a * PF(1);
    } else if (OP == ADD) {
        r = a + y[OFF(1) + i];
    } else {
        // EMA: x is the ema itself (aliased with out), y the parameter;
        // a skipped optimizer step (its grad_scale 0) leaves the ema as it is
        if (GATED == 1u && step_scale[OFF(4)] == 0.0) return;
        float decay = hyper[OFF(3)];
        r = decay * a + (1.0 - decay) * y[OFF(1) + i];
    }
    o[OFF(2) + i] = r;
}

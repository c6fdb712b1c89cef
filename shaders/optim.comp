#version 450
#extension GL_GOOGLE_include_directive : require
// Optimizer steps, in place, one element per invocation, formulas as the
// CPU backend (kernels_optim.c). Hyper-parameters are read from their
// tensor at run time, so a recorded command buffer follows the schedule.
// OP 0 SGD:   bindings param, grad, momentum buf, hyper[4], (scale)
// OP 1 AdamW: bindings param, grad, m, v, hyper[6], (scale)
// OP 2 GRAD_CLIP_SCALE: bindings out scale[1], norm_sq[1], -, -, hyper {max_norm, unscale}
// OP 3 MUON_MOMENTUM: bindings out u, grad, momentum buf, -, hyper[6], (scale); a skip writes u = 0
// OP 4 MUSGD_UPDATE: bindings param, grad, SGD buf, ortho (read), hyper[6], (scale)
// OP 5 MUON_NORMALIZE: bindings out, x, -, -, sum_sq[1]; push PF(1) = eps
// A scale of 0 (non-finite gradients) skips the step: nothing is written.
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint HAS_SCALE = 0;

layout(binding = 0) buffer P { float p[]; };
layout(binding = 1) readonly buffer G { float g[]; };
layout(binding = 2) buffer S1 { float s1[]; };
layout(binding = 3) buffer S2 { float s2[]; };
layout(binding = 4) readonly buffer Hyper { float h[]; };
layout(binding = 5) readonly buffer Scale { float scale[]; };

// push: PU(0) = count
void main() {
    uint i = flat_index();
    if (i >= PU(0)) return;
    if (OP == 2u) {
        float max_norm = h[OFF(4)], unscale = h[OFF(4) + 1u];
        float norm = sqrt(g[OFF(1)]) * unscale;
        bool finite = !isnan(norm) && !isinf(norm);
        float clip = max_norm > 0.0 && norm + 1e-6 > max_norm ? max_norm / (norm + 1e-6) : 1.0;
        p[OFF(0)] = finite ? unscale * clip : 0.0;
        return;
    }
    if (OP == 5u) {
        p[OFF(0) + i] = g[OFF(1) + i] / (sqrt(h[OFF(4)]) + PF(1));
        return;
    }
    float sc = HAS_SCALE == 1u ? scale[OFF(5)] : 1.0;
    if (OP == 3u && HAS_SCALE == 1u && sc == 0.0) {
        p[OFF(0) + i] = 0.0;
        return;
    }
    if (HAS_SCALE == 1u && sc == 0.0) return;
    uint hp = OFF(4);
    if (OP == 3u) { // torch's lerp a + w*(b - a), as the CPU kernel
        float momentum = h[hp + 1u];
        bool nesterov = h[hp + 3u] != 0.0;
        float gv = g[OFF(1) + i] * sc;
        float m = s1[OFF(2) + i] + (1.0 - momentum) * (gv - s1[OFF(2) + i]);
        s1[OFF(2) + i] = m;
        p[OFF(0) + i] = nesterov ? gv + momentum * (m - gv) : m;
        return;
    }
    if (OP == 4u) {
        float lr = h[hp], momentum = h[hp + 1u], wd = h[hp + 2u], muon = h[hp + 4u], sgd = h[hp + 5u];
        bool nesterov = h[hp + 3u] != 0.0;
        float pv = p[OFF(0) + i] - lr * muon * s2[OFF(3) + i];
        float gg = g[OFF(1) + i] * sc + wd * pv;
        float b = momentum * s1[OFF(2) + i] + gg;
        s1[OFF(2) + i] = b;
        p[OFF(0) + i] = pv - lr * sgd * (nesterov ? gg + momentum * b : b);
        return;
    }
    float pv = p[OFF(0) + i];
    float gv = g[OFF(1) + i] * sc;
    if (OP == 0u) {
        float lr = h[hp], momentum = h[hp + 1u], wd = h[hp + 2u];
        bool nesterov = h[hp + 3u] != 0.0;
        float gg = gv + wd * pv;
        float b = momentum * s1[OFF(2) + i] + gg;
        s1[OFF(2) + i] = b;
        p[OFF(0) + i] = pv - lr * (nesterov ? gg + momentum * b : b);
        return;
    }
    float lr = h[hp], b1 = h[hp + 1u], b2 = h[hp + 2u], eps = h[hp + 3u], wd = h[hp + 4u], t = h[hp + 5u];
    float bc1 = 1.0 - pow(b1, t), bc2 = 1.0 - pow(b2, t);
    float mi = s1[OFF(2) + i];
    mi = mi + (1.0 - b1) * (gv - mi);
    float vi = b2 * s2[OFF(3) + i] + (1.0 - b2) * gv * gv;
    s1[OFF(2) + i] = mi;
    s2[OFF(3) + i] = vi;
    p[OFF(0) + i] = pv * (1.0 - lr * wd) - (lr / bc1) * mi / (sqrt(vi) / sqrt(bc2) + eps);
}

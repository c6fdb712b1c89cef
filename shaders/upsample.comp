#version 450
#extension GL_GOOGLE_include_directive : require
// Nearest upsampling by f of [planes, H, W] (BWD = 0: out is [planes, H*f, W*f]),
// and its backward (BWD = 1: out [planes, H, W] sums each f*f block of dy,
// rows outer as the CPU backend). upsample_f16 (half_io.glsl): f16 in and out,
// the forward copying half bits (amp's f16 activations).
#include "half_io.glsl"
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint BWD = 0;

layout(binding = 0) readonly buffer Src { ACT s[]; };
layout(binding = 1) writeonly buffer Out { ACT o[]; };

// push: PU(0) = outputs, PU(1) = H, PU(2) = W (the small size), PU(3) = f
void main() {
    uint i = flat_index();
    if (i >= PU(0)) return;
    uint H = PU(1), W = PU(2), f = PU(3);
    uint Wf = W * f;
    if (BWD == 0u) {
        uint plane = i / (H * f * Wf), rem = i % (H * f * Wf);
        uint y = rem / Wf, xx = rem % Wf;
        o[OFF(1) + i] = s[OFF(0) + plane * H * W + (y / f) * W + xx / f];
        return;
    }
    uint plane = i / (H * W), rem = i % (H * W);
    uint y = rem / W, xx = rem % W;
    uint base = OFF(0) + plane * H * f * Wf + y * f * Wf + xx * f;
    float acc = 0.0;
    for (uint a = 0u; a < f; a++)
        for (uint b = 0u; b < f; b++) acc += ACT_LOAD(s[base + a * Wf + b]);
    o[OFF(1) + i] = ACT_STORE(acc);
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Per-channel elementwise pieces of batch norm over x viewed as [N, C, S]:
// MODE 0 BN_APPLY:          out = (x - mean) * gamma/sqrt(var+eps) + beta
// MODE 1 BN_APPLY_BWD_DATA: out = dy * gamma/sqrt(var+eps)            (x = dy)
// MODE 2 BN_STATS_BWD:      out = dmean/M + 2*dvar/M * (x - mean)
// MODE 3 BN_BWD:            out = dy * gamma/sqrt(var+eps) + (dmean/M + 2*dvar/M * (x - mean)),
//                           mean and var the rows of stats (bound at slots 1 and 2), dy at slot 6
// MODE 4 BN_SILU:           out = silu(z), z = MODE 0's value
// MODE 5 BN_SILU_BWD:       out = dy * s * (1 + z * (1 - s)), s = sigmoid(z), z = MODE 0's value, dy at slot 6
// bn_eltwise_f16 (half_io.glsl) writes out as f16: MODE 4 for amp's f16 activations.
#include "half_io.glsl"
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint MODE = 0;

layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer Mean { float mean[]; };   // MODE 2: stats [2,C]
layout(binding = 2) readonly buffer Var { float var_[]; };
layout(binding = 3) readonly buffer Gamma { float gamma[]; };
layout(binding = 4) readonly buffer Beta { float beta[]; };
layout(binding = 5) readonly buffer DStats { float dstats[]; }; // [2,C]: dmean, dvar
layout(binding = 6) readonly buffer DY { float dy[]; };        // MODES 3, 5: same elements as x
layout(binding = 7) writeonly buffer Out { ACT o[]; };

// push: PU(0) = count, PU(1) = C, PU(2) = S, PF(3) = eps, PF(4) = 1/M,
//       PU(23) = index of the chunk's first element (channels count from there)
void main() {
    uint i = flat_index();
    if (i >= PU(0)) return;
    uint C = PU(1);
    uint c = ((PU(23) + i) / PU(2)) % C;
    float v = x[OFF(0) + i];
    float r;
    if (MODE == 0u || MODE == 4u || MODE == 5u) {
        float k = gamma[OFF(3) + c] / sqrt(var_[OFF(2) + c] + PF(3));
        r = (v - mean[OFF(1) + c]) * k + beta[OFF(4) + c];
        if (MODE == 4u) {
            r = r * sigmoid_f(r);
        } else if (MODE == 5u) {
            float s = sigmoid_f(r);
            r = dy[OFF(6) + i] * s * (1.0 + r * (1.0 - s));
        }
    } else if (MODE == 1u) {
        r = v * (gamma[OFF(3) + c] / sqrt(var_[OFF(2) + c] + PF(3)));
    } else if (MODE == 3u) {
        float inv_m = PF(4);
        float kd = gamma[OFF(3) + c] / sqrt(var_[OFF(2) + C + c] + PF(3));
        float a = dstats[OFF(5) + c] * inv_m;
        float k = 2.0 * dstats[OFF(5) + C + c] * inv_m;
        r = dy[OFF(6) + i] * kd + (a + k * (v - mean[OFF(1) + c]));
    } else {
        float inv_m = PF(4);
        float a = dstats[OFF(5) + c] * inv_m;
        float k = 2.0 * dstats[OFF(5) + C + c] * inv_m;
        r = a + k * (v - mean[OFF(1) + c]);
    }
    o[OFF(7) + i] = ACT_STORE(r);
}

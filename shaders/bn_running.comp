#version 450
#extension GL_GOOGLE_include_directive : require
// BN_STATS with i0 = 1: updates the running statistics from stats [2,C]
// (mean, biased variance), one invocation per channel, as PyTorch:
// rm = (1-m)*rm + m*mean; rv = (1-m)*rv + m*var*count/(count-1).
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"


layout(binding = 0) readonly buffer Stats { float st[]; };
layout(binding = 1) buffer RunningMean { float rm[]; };
layout(binding = 2) buffer RunningVar { float rv[]; };

// push: PU(0) = C, PF(1) = momentum, PF(2) = unbias factor
void main() {
    uint c = flat_index();
    uint C = PU(0);
    if (c >= C) return;
    float m = PF(1);
    rm[OFF(1) + c] = (1.0 - m) * rm[OFF(1) + c] + m * st[OFF(0) + c];
    rv[OFF(2) + c] = (1.0 - m) * rv[OFF(2) + c] + m * st[OFF(0) + C + c] * PF(2);
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Last step of BN_APPLY_BWD_PARAMS, one invocation per channel. On entry
// out row 0 holds S2 = sum dy*(x-mean) and row 1 S1 = sum dy (= dbeta).
// With r = 1/sqrt(var+eps): dgamma = r*S2, dmean = -gamma*r*S1,
// dvar = -gamma*r^3/2 * S2.
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"


layout(binding = 0) buffer Out { float o[]; };
layout(binding = 1) readonly buffer Var { float var_[]; };
layout(binding = 2) readonly buffer Gamma { float gamma[]; };

// push: PU(0) = C, PF(1) = eps
void main() {
    uint c = flat_index();
    uint C = PU(0);
    if (c >= C) return;
    float s2 = o[OFF(0) + c], s1 = o[OFF(0) + C + c];
    float r = 1.0 / sqrt(var_[OFF(1) + c] + PF(1));
    float g = gamma[OFF(2) + c];
    o[OFF(0) + c] = r * s2;
    o[OFF(0) + 2u * C + c] = -g * r * s1;
    o[OFF(0) + 3u * C + c] = -0.5 * g * r * r * r * s2;
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Test canary for lavapipe's loop limiter (llvmpipe stops a shader
// invocation after 65,535 loop iterations in total, silently): one
// invocation counts PU(0) iterations, in two nested loops, and writes how
// many it ran. Not used by any op.
layout(local_size_x = 1) in;
#include "common.glsl"

layout(binding = 0) writeonly buffer Out { uint o[]; };

void main() {
    uint n = PU(0), inner = PU(1), count = 0u;
    for (uint i = 0u; i < n / inner; i++)
        for (uint j = 0u; j < inner; j++) count++;
    o[OFF(0)] = count;
}

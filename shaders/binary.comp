#version 450
#extension GL_GOOGLE_include_directive : require
// Broadcasting a OP b over up to 4 (merged) dimensions, one output element
// per invocation. Strides are 0 where an operand is broadcast. OP 3 copies a
// (BROADCAST_TO). binary_f16 (half_io.glsl): f16 operands and output, fp32
// math rounded once (amp's residual add of f16 activations).
#include "half_io.glsl"
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint OP = 0;

layout(binding = 0) readonly buffer A { ACT a[]; };
layout(binding = 1) readonly buffer B { ACT b[]; };
layout(binding = 2) writeonly buffer Out { ACT o[]; };

// push: PU(0) = count, PU(1..4) = dims (outermost first),
//       PU(5..8) = strides of a, PU(9..12) = strides of b
void main() {
    uint i = flat_index();
    if (i >= PU(0)) return;
    uint rem = i;
    uint ia = 0, ib = 0;
    for (int d = 3; d >= 0; d--) {
        uint dim = PU(1 + d);
        uint k = rem % dim;
        rem /= dim;
        ia += k * PU(5 + d);
        ib += k * PU(9 + d);
    }
    float va = ACT_LOAD(a[OFF(0) + ia]);
    float r;
    if (OP == 0) r = va + ACT_LOAD(b[OFF(1) + ib]);
    else if (OP == 1) r = va - ACT_LOAD(b[OFF(1) + ib]);
    else if (OP == 2) r = va * ACT_LOAD(b[OFF(1) + ib]);
    else r = va;
    o[OFF(2) + i] = ACT_STORE(r);
}

#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// CAST f32 <-> f16 through 16-bit storage buffers (devices with
// storageBuffer16BitAccess; YOLO_VK_DISABLE_F16 turns the path off): one
// element per invocation, no word merging. TO_HALF = 1: f32 -> f16.
// Half values move as uint16 bits and convert with the CPU's rounding.
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint TO_HALF = 1;

layout(binding = 0) readonly buffer SrcF { float sf[]; };
layout(binding = 1) readonly buffer SrcH { uint16_t sh[]; };
layout(binding = 2) writeonly buffer DstF { float df[]; };
layout(binding = 3) writeonly buffer DstH { uint16_t dh[]; };

// push: element offsets OFF(0..3) per binding; PU(0) = elements; PF(1) = factor
void main() {
    uint i = flat_index();
    if (i >= PU(0)) return;
    if (TO_HALF == 1u) {
        dh[OFF(3) + i] = uint16_t(half_bits(sf[OFF(0) + i] * PF(1)));
    } else {
        df[OFF(2) + i] = half_value(uint(sh[OFF(1) + i])) * PF(1);
    }
}

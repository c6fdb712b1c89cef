#version 450
#extension GL_GOOGLE_include_directive : require
// CAST between any dtypes (0 f32, 1 f16, 2 i32, 3 u8), then * factor, with
// the CPU backend's rounding (nearest even, saturating integers, NaN -> 0).
// Buffers are read and written as 32-bit words, so no 8/16-bit storage is
// needed: each invocation owns one destination word and merges the
// elements of the tensor into it.
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint SRC = 0;
layout(constant_id = 2) const uint DST = 0;

layout(binding = 0) readonly buffer Src { uint s[]; };
layout(binding = 1) buffer Dst { uint d[]; };

uint size_of(uint t) {
    return t == 1u ? 2u : (t == 3u ? 1u : 4u);
}

float load_src(uint e) {
    uint pos = OFF(0) + e * size_of(SRC);
    uint word = s[pos / 4u];
    if (SRC == 0u) return uintBitsToFloat(word);
    if (SRC == 2u) return float(int(word));
    if (SRC == 1u) return half_value((word >> (8u * (pos % 4u))) & 0xffffu);
    return float((word >> (8u * (pos % 4u))) & 0xffu);
}

uint convert(float v) {
    if (DST == 0u) return floatBitsToUint(v);
    if (DST == 1u) return half_bits(v);
    if (DST == 2u) {
        if (isnan(v)) return 0u;
        if (v <= -2147483648.0) return 0x80000000u;
        if (v >= 2147483647.0) return 0x7fffffffu;
        return uint(int(roundEven(v)));
    }
    if (!(v > 0.0)) return 0u;
    if (v >= 255.0) return 255u;
    return uint(roundEven(v));
}

// push: OFF(0), OFF(1) = src, dst start in bytes; PU(0) = elements; PF(1) = factor
void main() {
    uint i = flat_index();
    uint es = size_of(DST);
    uint first = OFF(1), end = OFF(1) + PU(0) * es;
    uint w = first / 4u + i;
    if (w * 4u >= end) return;
    uint val = 0u, mask = 0u;
    uint slot_mask = es == 4u ? 0xffffffffu : (es == 2u ? 0xffffu : 0xffu);
    for (uint q = w * 4u; q < w * 4u + 4u; q += es) {
        if (q < first || q >= end) continue;
        uint e = (q - first) / es;
        uint sh = 8u * (q % 4u);
        val |= (convert(load_src(e) * PF(1)) & slot_mask) << sh;
        mask |= slot_mask << sh;
    }
    uint old = mask == 0xffffffffu ? 0u : d[w];
    d[w] = (old & ~mask) | val;
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Fills a byte range with a repeating 32-bit pattern (any dtype: f16/u8
// values are replicated into the word by the host). One word per
// invocation; words the range only partly covers keep their other bytes,
// so 2- and 1-byte tensors need no 16/8-bit storage support.
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"


layout(binding = 0) buffer Out { uint o[]; };

// push: OFF(0) = first byte (from the binding start), PU(0) = bytes, PU(1) = pattern
void main() {
    uint i = flat_index();
    uint first = OFF(0), end = OFF(0) + PU(0);
    uint w = first / 4u + i;
    if (w * 4u >= end) return;
    uint lo = max(first, w * 4u), hi = min(end, w * 4u + 4u);
    if (lo == w * 4u && hi == w * 4u + 4u) {
        o[w] = PU(1);
        return;
    }
    uint mask = 0u;
    for (uint q = lo; q < hi; q++) mask |= 0xffu << (8u * (q - w * 4u));
    o[w] = (o[w] & ~mask) | (PU(1) & mask);
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Strided row copy: dst[r*dst_stride + c] = src[r*src_stride + c] for r < rows,
// c < row_len (concat, slice, slice backward). BYTES = 0: units are 32-bit
// words, one per invocation. BYTES = 1: units are bytes (f16/u8 tensors on
// devices without 8/16-bit storage); each invocation owns one destination
// word and merges bytes into it, the lowest row touching a word owns it.
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#include "common.glsl"

layout(constant_id = 1) const uint BYTES = 0;

layout(binding = 0) readonly buffer Src { uint s[]; };
layout(binding = 1) buffer Dst { uint d[]; };

// push: OFF(0) = src start, OFF(1) = dst start (units), PU(0) = rows, PU(1) = row_len,
//       PU(2) = src_stride, PU(3) = dst_stride, PU(4) = words per row (BYTES only)
uint src_byte(uint q) {
    return (s[q / 4u] >> (8u * (q % 4u))) & 0xffu;
}

void main() {
    uint i = flat_index();
    uint rows = PU(0), len = PU(1), sst = PU(2), dst = PU(3);
    if (BYTES == 0u) {
        uint r = i / len, c = i % len;
        if (r >= rows) return;
        d[OFF(1) + r * dst + c] = s[OFF(0) + r * sst + c];
        return;
    }
    uint wpr = PU(4);
    uint r = i / wpr, j = i % wpr;
    if (r >= rows) return;
    uint ds = OFF(1) + r * dst;
    uint w = ds / 4u + j;
    if (w * 4u >= ds + len) return;
    if (r > 0u && ds - dst + len > w * 4u) return; // the previous row owns this word
    uint old = 0u, val = 0u, mask = 0u;
    for (uint k = 0u; k < 4u; k++) {
        uint q = w * 4u + k;
        if (q < OFF(1)) continue;
        uint rel = q - OFF(1);
        uint rr = rel / dst, col = rel % dst;
        if (rr >= rows || col >= len) continue;
        mask |= 0xffu << (8u * k);
        val |= src_byte(OFF(0) + rr * sst + col) << (8u * k);
    }
    if (mask != 0xffffffffu) old = d[w];
    d[w] = (old & ~mask) | val;
}

// Shared by every kernel: the push-constant block and index helpers.
//
// Push constants are 32 words. Words 0..7 hold, for each binding, the offset
// of the tensor's first element from the start of the bound range (in the
// shader's element unit): descriptors start at offsets rounded down to the
// device's minStorageBufferOffsetAlignment. Words 8..31 are the kernel's
// parameters (PU = uint, PF = float).
layout(push_constant) uniform Push {
    uint p[32];
} pc;

#define OFF(i) pc.p[i]
#define PU(i) pc.p[8 + (i)]
#define PF(i) uintBitsToFloat(pc.p[8 + (i)])

// Workgroup index over a grid that spills from x into y and z (x <= 65,535).
uint flat_group() {
    return (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

// Global 1-D invocation index for a 1-D workgroup. Shaders declare
// local_size_x_id before including this file, or glslang folds the size to 1.
uint flat_index() {
    return flat_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
}

float sigmoid_f(float x) {
    return 1.0 / (1.0 + exp(-x));
}

// IEEE binary16 from binary32, round to nearest even (as the CPU backend).
uint half_bits(float value) {
    uint u = floatBitsToUint(value);
    uint sign = u & 0x80000000u;
    u ^= sign;
    uint h;
    if (u >= ((127u + 16u) << 23)) {
        h = u > (255u << 23) ? 0x7e00u : 0x7c00u;
    } else if (u < (113u << 23)) {
        // subnormal or zero: adding 0.5 lets the float adder round for us
        float v = uintBitsToFloat(u) + 0.5;
        h = floatBitsToUint(v) - (126u << 23);
    } else {
        uint mant_odd = (u >> 13) & 1u;
        u += (uint(15 - 127) << 23) + 0xfffu + mant_odd;
        h = u >> 13;
    }
    return (h | (sign >> 16)) & 0xffffu;
}

float half_value(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
    if (e == 0u) {
        float v = float(m) * (1.0 / 16777216.0);
        return sign != 0u ? -v : v;
    }
    return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

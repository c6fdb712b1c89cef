// The body of reduce.comp and reduce_subgroup.comp (see reduce.comp); the
// including file declares the workgroup size and includes common.glsl.
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint SMALL = 0;
layout(constant_id = 3) const uint ITER = 16;

layout(binding = 0) readonly buffer X { float x[]; };
layout(binding = 1) readonly buffer Y { float y[]; };
layout(binding = 2) readonly buffer C { float center[]; };
layout(binding = 3) buffer Out { float o[]; };

shared float partial[gl_WorkGroupSize.x];

// push: PU(0) = outputs, PU(1) = reduced count R, PU(2) = chunk, PU(3) = chunks,
//       PU(4..7) = kept dims, PU(8..11) = reduced dims, PU(12..15) = x strides,
//       PF(16) = scale, PU(17) = 1: add into out
uint kept_index(uint j) {
    uint idx = 0u;
    for (int d = 3; d >= 0; d--) {
        uint n = PU(4 + d);
        idx += (j % n) * PU(12 + d);
        j /= n;
    }
    return idx;
}

uint reduced_index(uint r) {
    uint idx = 0u;
    for (int d = 3; d >= 0; d--) {
        uint n = PU(8 + d);
        idx += (r % n) * PU(12 + d);
        r /= n;
    }
    return idx;
}

float value(uint idx, float c) {
    float v = x[OFF(0) + idx];
    if (MODE == 1u) return v * v;
    if (MODE == 2u) return (v - c) * (v - c);
    if (MODE == 3u) return y[OFF(1) + idx] * (v - c);
    return v;
}

void write_result(uint j, uint chunk, float v) {
    if (PU(3) > 1u) {
        o[OFF(3) + chunk * PU(0) + j] = v;
        return;
    }
    uint k = OFF(3) + j;
    v *= PF(16);
    o[k] = PU(17) != 0u ? o[k] + v : v;
}

void main() {
    uint n_out = PU(0), total = PU(1);
    if (SMALL == 1u) {
        uint j = flat_index();
        if (j >= n_out) return;
        uint base = kept_index(j);
        float c = MODE >= 2u ? center[OFF(2) + j] : 0.0;
        float acc = 0.0;
        for (uint r = 0u; r < total; r++) acc += value(base + reduced_index(r), c);
        write_result(j, 0u, acc);
        return;
    }
    uint chunk = gl_WorkGroupID.x;
    uint j = gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y;
    if (j >= n_out) return; // uniform per workgroup
    uint t = gl_LocalInvocationID.x;
    uint base = kept_index(j);
    float c = MODE >= 2u ? center[OFF(2) + j] : 0.0;
    uint r0 = chunk * PU(2);
    uint r1 = min(r0 + PU(2), total);
    float acc = 0.0;
    for (uint it = 0u; it < ITER; it++) {
        uint r = r0 + it * gl_WorkGroupSize.x + t;
        if (r < r1) acc += value(base + reduced_index(r), c);
    }
#ifdef USE_SUBGROUP
    // one sum per subgroup, then the first invocation adds those up
    float part = subgroupAdd(acc);
    if (subgroupElect()) partial[gl_SubgroupID] = part;
    barrier();
    if (t == 0u) {
        float total = 0.0;
        for (uint k = 0u; k < gl_NumSubgroups; k++) total += partial[k];
        write_result(j, chunk, total);
    }
#else
    partial[t] = acc;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
        if (t < s) partial[t] += partial[t + s];
        barrier();
    }
    if (t == 0u) write_result(j, chunk, partial[0]);
#endif
}

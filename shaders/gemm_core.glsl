// Tiled GEMM core shared by matmul and the three convolution passes:
// C[b][m][n] (+)= sum_k A(b, m, k) * B(b, k, n) for k in this slice's range.
// The including shader defines load_a / load_b (im2col and its transposes
// are computed on the fly: implicit GEMM) and the bindings 0 (A), 1 (B).
//
// A WGX x WGY workgroup stages BK x BM and BK x BN tiles in shared memory
// and each invocation accumulates a TM x TN block in registers. Tile sizes
// are specialization constants chosen per device (vk_ops_gemm.c).
//
// Split K: workgroup z = slice * batches + b. With PU(5) = slices > 1 every
// slice writes its partial sum to C[slice][b][m][n] (a reduce pass adds
// them); otherwise C[b][m][n] is written, or added to when flags bit 0.
// Bias (flags bit 1) is added by slice 0: bias[(b % groups) * M + m].
//
// GEMM_COOP builds the cooperative-matrix core instead (gemm_coop.glsl);
// both place the workgroup and write C with the functions below.

layout(binding = 2) buffer Cbuf { float c_data[]; };
layout(binding = 3) readonly buffer Bias { float bias_data[]; };

// push (shared part): PU(0) = M, PU(1) = N, PU(2) = K, PU(3) = k begin,
// PU(4) = k per slice, PU(5) = slices, PU(6) = flags, PU(7) = batches,
// PU(8) = groups (for the bias index); the shaders' own from PU(9).

// This workgroup's batch b and K slice, and the slice's range [k_lo, k_hi).
struct GemmPlace {
    uint b, slice, k_lo, k_hi;
};
GemmPlace gemm_place() {
    GemmPlace p;
    p.b = gl_WorkGroupID.z % PU(7);
    p.slice = gl_WorkGroupID.z / PU(7);
    p.k_lo = min(PU(3) + p.slice * PU(4), PU(2));
    p.k_hi = min(p.k_lo + PU(4), PU(2));
    return p;
}

// The slice's sum `acc` of C[m][n] (m < M, n < N), plus the bias on slice
// 0, written to the slice's partial sums or to C (added to with flags bit 0).
void gemm_store(GemmPlace p, uint m, uint n, float acc) {
    const uint M = PU(0), N = PU(1), slices = PU(5), flags = PU(6);
    const bool partial = slices > 1u;
    const float bias = ((flags & 2u) != 0u && p.slice == 0u) ? bias_data[OFF(3) + (p.b % PU(8)) * M + m] : 0.0;
    const uint idx = OFF(2) + (partial ? p.slice * PU(7) * M * N : 0u) + p.b * M * N + m * N + n;
    const float v = acc + bias;
    c_data[idx] = (!partial && (flags & 1u) != 0u) ? c_data[idx] + v : v;
}

#ifdef GEMM_COOP
#include "gemm_coop.glsl"
#else

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const uint TM = 4;
layout(constant_id = 3) const uint TN = 4;
layout(constant_id = 4) const uint BK = 16;

const uint WGX = gl_WorkGroupSize.x;
const uint WGY = gl_WorkGroupSize.y;
const uint BM = WGY * TM;
const uint BN = WGX * TN;

shared float tile_a[BK * BM];
shared float tile_b[BK * BN];

void main() {
    const uint M = PU(0), N = PU(1);
    const GemmPlace place = gemm_place();
    const uint b = place.b;
    const uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
    const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    const uint tid = ty * WGX + tx;

    float acc[TM * TN];
    for (uint i = 0u; i < TM * TN; i++) acc[i] = 0.0;

    for (uint k0 = place.k_lo; k0 < place.k_hi; k0 += BK) {
        for (uint i = tid; i < BM * BK; i += WGX * WGY) {
            uint mm = i / BK, kk = i % BK;
            uint m = m0 + mm, k = k0 + kk;
            tile_a[kk * BM + mm] = (m < M && k < place.k_hi) ? load_a(b, m, k) : 0.0;
        }
        for (uint i = tid; i < BK * BN; i += WGX * WGY) {
            uint kk = i / BN, nn = i % BN;
            uint n = n0 + nn, k = k0 + kk;
            tile_b[kk * BN + nn] = (n < N && k < place.k_hi) ? load_b(b, k, n) : 0.0;
        }
        barrier();
        for (uint kk = 0u; kk < BK; kk++) {
            float av[TM], bv[TN];
            for (uint i = 0u; i < TM; i++) av[i] = tile_a[kk * BM + ty + i * WGY];
            for (uint j = 0u; j < TN; j++) bv[j] = tile_b[kk * BN + tx + j * WGX];
            for (uint i = 0u; i < TM; i++)
                for (uint j = 0u; j < TN; j++) acc[i * TN + j] += av[i] * bv[j];
        }
        barrier();
    }

    for (uint i = 0u; i < TM; i++) {
        uint m = m0 + ty + i * WGY;
        if (m >= M) continue;
        for (uint j = 0u; j < TN; j++) {
            uint n = n0 + tx + j * WGX;
            if (n < N) gemm_store(place, m, n, acc[i * TN + j]);
        }
    }
}
#endif

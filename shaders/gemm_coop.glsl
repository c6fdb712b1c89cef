// The GEMM core of gemm_core.glsl on cooperative matrices (tensor cores):
// the same C[b][m][n] (+)= sum_k A(b, m, k) * B(b, k, n), the same push
// constants, load_a / load_b of the including shader, and gemm_place /
// gemm_store (split K, bias and accumulate flags) of gemm_core.glsl. Built with GEMM_F16 (amp: fp16 inputs,
// fp32 sums) as <name>_coop (VK_NV_cooperative_matrix: 16x16x16 fp16 x fp16
// + fp32, subgroup scope, subgroups of 32) and, for devices without it, as
// <name>_coopemu with GEMM_COOP_EMULATED: every step the same but the three
// matrix operations, done in plain arithmetic on shared memory, so that the
// tiling, the fragments' offsets and the epilogue are tested on any device
// (vk_ops_gemm.c; tests/test_vulkan_coop.c).
//
// A workgroup of 128 invocations (4 subgroups of 32, fixed: the host sends
// no specialization for it) computes a 64 x 64 block of C, stepping 32
// along K: it stages the fp16 tiles A[64][32] and B[32][64] in shared
// memory, each subgroup multiplies its 32 x 32 quarter as 2 x 2 fragments of
// 16 x 16, and the fragments pass through shared memory to the epilogue,
// which writes C as gemm_core.glsl does.

layout(local_size_x = 128, local_size_y = 1) in;
const uint CM_BM = 64u, CM_BN = 64u, CM_BK = 32u, CM_FRAG = 16u, CM_SUBGROUP = 32u;
const uint CM_THREADS = 128u;

shared float16_t tile_a[CM_BM * CM_BK]; // [m][k], row stride CM_BK
shared float16_t tile_b[CM_BK * CM_BN]; // [k][n], row stride CM_BN
shared float tile_c[CM_BM * CM_BN];     // [m][n], row stride CM_BN

#ifdef GEMM_COOP_EMULATED
// A subgroup's 16 x 16 accumulator as 32 lanes x 8 elements: lane l holds
// row l / 2, columns (l % 2) * 8 .. + 7. A and B fragments are read from
// the shared tiles where the real kernel would load them.
#define ACC_T float[8]
uint cm_lane() { return gl_LocalInvocationIndex % CM_SUBGROUP; }
uint cm_subgroup() { return gl_LocalInvocationIndex / CM_SUBGROUP; }
void cm_zero(inout float acc[8]) {
    for (uint t = 0u; t < 8u; t++) acc[t] = 0.0;
}
// acc += A[a_at + r * CM_BK + q] * B[b_at + q * CM_BN + c] over q < 16
void cm_mul_add(inout float acc[8], uint a_at, uint b_at) {
    const uint row = cm_lane() / 2u, col0 = (cm_lane() % 2u) * 8u;
    for (uint t = 0u; t < 8u; t++) {
        float s = acc[t];
        for (uint q = 0u; q < CM_FRAG; q++)
            s += float(tile_a[a_at + row * CM_BK + q]) * float(tile_b[b_at + q * CM_BN + col0 + t]);
        acc[t] = s;
    }
}
void cm_store(float acc[8], uint c_at) {
    const uint row = cm_lane() / 2u, col0 = (cm_lane() % 2u) * 8u;
    for (uint t = 0u; t < 8u; t++) tile_c[c_at + row * CM_BN + col0 + t] = acc[t];
}
#else
#define ACC_T fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
uint cm_subgroup() { return gl_SubgroupID; }
void cm_zero(out ACC_T acc) { acc = ACC_T(0.0); }
void cm_mul_add(inout ACC_T acc, uint a_at, uint b_at) {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a, b;
    coopMatLoadNV(a, tile_a, a_at, CM_BK, false);
    coopMatLoadNV(b, tile_b, b_at, CM_BN, false);
    acc = coopMatMulAddNV(a, b, acc);
}
void cm_store(ACC_T acc, uint c_at) { coopMatStoreNV(acc, tile_c, c_at, CM_BN, false); }
#endif

void main() {
    const uint M = PU(0), N = PU(1);
    const GemmPlace place = gemm_place();
    const uint b = place.b;
    const uint m0 = gl_WorkGroupID.y * CM_BM, n0 = gl_WorkGroupID.x * CM_BN;
    const uint tid = gl_LocalInvocationIndex;
    // this subgroup's 32 x 32 quarter of the block
    const uint sm = (cm_subgroup() / 2u) * 32u, sn = (cm_subgroup() % 2u) * 32u;

    ACC_T acc[4];
    for (uint f = 0u; f < 4u; f++) cm_zero(acc[f]);

    for (uint k0 = place.k_lo; k0 < place.k_hi; k0 += CM_BK) {
        for (uint i = tid; i < CM_BM * CM_BK; i += CM_THREADS) {
            uint m = m0 + i / CM_BK, k = k0 + i % CM_BK;
            tile_a[i] = float16_t((m < M && k < place.k_hi) ? load_a(b, m, k) : 0.0);
        }
        for (uint i = tid; i < CM_BK * CM_BN; i += CM_THREADS) {
            uint n = n0 + i % CM_BN, k = k0 + i / CM_BN;
            tile_b[i] = float16_t((n < N && k < place.k_hi) ? load_b(b, k, n) : 0.0);
        }
        barrier();
        for (uint kk = 0u; kk < CM_BK; kk += CM_FRAG)
            for (uint f = 0u; f < 4u; f++)
                cm_mul_add(acc[f], (sm + (f / 2u) * CM_FRAG) * CM_BK + kk, kk * CM_BN + sn + (f % 2u) * CM_FRAG);
        barrier();
    }
    for (uint f = 0u; f < 4u; f++) cm_store(acc[f], (sm + (f / 2u) * CM_FRAG) * CM_BN + sn + (f % 2u) * CM_FRAG);
    barrier();

    for (uint i = tid; i < CM_BM * CM_BN; i += CM_THREADS) {
        uint m = m0 + i / CM_BN, n = n0 + i % CM_BN;
        if (m < M && n < N) gemm_store(place, m, n, tile_c[i]);
    }
}

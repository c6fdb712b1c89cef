/* CRC-32: carry-less multiplication folding (x86-64 with PCLMULQDQ and
 * SSE4.1, chosen at run time) or the ARMv8 CRC32 instructions (aarch64
 * where the kernel reports them, HWCAP_CRC32) for the bulk, slicing-by-8
 * tables for the rest and for other CPUs. The folding constants are those of Intel's
 * "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ" for the
 * reflected polynomial 0xEDB88320 (as in zlib/Chromium's crc32_simd). */
#include "ckpt/crc32.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CRC_HAVE_CLMUL 1
#elif defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#include <arm_acle.h>
#include <asm/hwcap.h>
#include <sys/auxv.h>
#define CRC_HAVE_ARM 1
#endif

static uint32_t crc_table[8][256];
static bool crc_clmul; /* x86-64 PCLMULQDQ, or aarch64 CRC32 instructions */
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFFu];
#ifdef CRC_HAVE_CLMUL
    __builtin_cpu_init();
    crc_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#elif defined(CRC_HAVE_ARM)
    crc_clmul = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

/* c is the inverted running state, as inside yolo_crc32_update. */
static uint32_t crc_tables(uint32_t c, const uint8_t *p, size_t size) {
    while (size >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo);
        hi = __builtin_bswap32(hi);
#endif
        lo ^= c;
        c = crc_table[7][lo & 0xFFu] ^ crc_table[6][(lo >> 8) & 0xFFu] ^ crc_table[5][(lo >> 16) & 0xFFu] ^
            crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFFu] ^ crc_table[2][(hi >> 8) & 0xFFu] ^
            crc_table[1][(hi >> 16) & 0xFFu] ^ crc_table[0][hi >> 24];
        p += 8;
        size -= 8;
    }
    while (size--) c = crc_table[0][(c ^ *p++) & 0xFFu] ^ (c >> 8);
    return c;
}

#ifdef CRC_HAVE_CLMUL
/* len >= 64 and a multiple of 16; c is the inverted state. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_clmul_fold(uint32_t c, const uint8_t *buf, size_t len) {
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x00));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x10));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x20));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)c));
    buf += 64;
    len -= 64;
    while (len >= 64) { /* fold 4 x 128 bits */
        __m128i x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00), x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
        __m128i x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00), x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
        x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
        x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
        x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
        x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(const void *)(buf + 0x30)));
        buf += 64;
        len -= 64;
    }
    /* fold the four into one */
    __m128i x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x2), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x3), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x4), x5);
    while (len >= 16) {
        x2 = _mm_loadu_si128((const __m128i *)(const void *)buf);
        x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
        x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x2), x5);
        buf += 16;
        len -= 16;
    }
    /* 128 -> 64 bits */
    const __m128i mask = _mm_setr_epi32(~0, 0, ~0, 0);
    x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, mask);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, k5k0, 0x00), x2);
    /* Barrett reduction to 32 bits */
    x2 = _mm_and_si128(x1, mask);
    x2 = _mm_clmulepi64_si128(x2, poly, 0x10);
    x2 = _mm_and_si128(x2, mask);
    x2 = _mm_clmulepi64_si128(x2, poly, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

#ifdef CRC_HAVE_ARM
/* CRC32X/CRC32B compute CRC-32 with the reflected polynomial 0xEDB88320
 * (not CRC32C's), on the inverted state like crc_tables; little-endian. */
__attribute__((target("+crc"))) static uint32_t crc_arm(uint32_t c, const uint8_t *p, size_t size) {
    while (size >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __crc32d(c, v);
        p += 8;
        size -= 8;
    }
    while (size--) c = __crc32b(c, *p++);
    return c;
}
#endif

uint32_t yolo_crc32_update(uint32_t crc, const void *data, size_t size) {
    pthread_once(&crc_once, crc_init);
    const uint8_t *p = data;
    uint32_t c = ~crc;
#ifdef CRC_HAVE_CLMUL
    if (crc_clmul && size >= 64) {
        size_t bulk = size & ~(size_t)15;
        c = crc_clmul_fold(c, p, bulk);
        p += bulk;
        size -= bulk;
    }
#elif defined(CRC_HAVE_ARM) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (crc_clmul) return ~crc_arm(c, p, size);
#endif
    return ~crc_tables(c, p, size);
}

uint32_t yolo_crc32_portable(uint32_t crc, const void *data, size_t size) {
    pthread_once(&crc_once, crc_init);
    return ~crc_tables(~crc, data, size);
}

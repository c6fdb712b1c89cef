/* yolo_bf16_round_row (util/bf16_row.h): the row rounding that amp's
 * BN+SiLU stores with, against the scalar yolo_f32_to_bf16, on every sign,
 * exponent and high mantissa with low halves that cover ties, NaN payloads
 * and denormals; the CPU's own conversion (where it has AVX512-BF16)
 * against the portable path; and every tail length. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "util/bf16_row.h"
#include "yolo/tensor.h"

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The rule on values where it matters. */
static void test_rule(void) {
    static const struct {
        uint32_t in;
        uint16_t out;
    } cases[] = {
        {0x3f800000u, 0x3f80}, /* 1 */
        {0x3f808000u, 0x3f80}, /* a tie rounds to even (down) */
        {0x3f818000u, 0x3f82}, /* a tie rounds to even (up) */
        {0x3f808001u, 0x3f81}, /* above the tie */
        {0x7f7fffffu, 0x7f80}, /* the largest float rounds to infinity */
        {0xff800000u, 0xff80}, /* -infinity */
        {0x7f800001u, 0x7fc0}, /* a signalling NaN comes out quiet */
        {0xffc12345u, 0xffc1}, /* a NaN keeps its sign and high payload */
        {0x00000001u, 0x0000}, /* denormals become a zero of their sign */
        {0x807fffffu, 0x8000},
        {0x00800000u, 0x0080}, /* the smallest normal stays */
    };
    const int n = (int)(sizeof cases / sizeof *cases);
    float src[16];
    uint16_t row[16], portable[16];
    for (int i = 0; i < n; i++) src[i] = from_bits(cases[i].in);
    yolo_bf16_round_row(src, row, n);
    yolo_bf16_round_row_portable(src, portable, n);
    for (int i = 0; i < n; i++) {
        CHECK_MSG(row[i] == cases[i].out, "0x%08x: 0x%04x, want 0x%04x", cases[i].in, row[i], cases[i].out);
        CHECK_MSG(portable[i] == cases[i].out, "portable 0x%08x: 0x%04x, want 0x%04x", cases[i].in, portable[i],
                  cases[i].out);
        CHECK_MSG(yolo_f32_to_bf16(src[i]) == cases[i].out, "scalar 0x%08x: 0x%04x, want 0x%04x", cases[i].in,
                  yolo_f32_to_bf16(src[i]), cases[i].out);
    }
}

/* Every high half (sign, exponent, 7 mantissa bits and the rounding bit's
 * neighbours) with low halves around the tie and a few random ones. */
static void test_sweep(void) {
    enum { LOWS = 12, N = 65536 * LOWS };
    uint16_t lows[LOWS] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
    uint64_t rng = 11;
    for (int i = 6; i < LOWS; i++) lows[i] = (uint16_t)(test_uniform(&rng, 0, 65535.99f));
    float *src = malloc(N * sizeof *src);
    uint16_t *row = malloc(N * sizeof *row), *portable = malloc(N * sizeof *portable);
    for (uint32_t hi = 0; hi < 65536; hi++)
        for (int l = 0; l < LOWS; l++) src[hi * LOWS + l] = from_bits(hi << 16 | lows[l]);
    yolo_bf16_round_row(src, row, N);
    yolo_bf16_round_row_portable(src, portable, N);
    int64_t bad_scalar = 0, bad_hw = 0;
    for (int i = 0; i < N; i++) {
        uint16_t want = yolo_f32_to_bf16(src[i]);
        if (portable[i] != want && bad_scalar++ < 5) {
            uint32_t u;
            memcpy(&u, src + i, sizeof u);
            CHECK_MSG(0, "portable 0x%08x: 0x%04x, scalar 0x%04x", u, portable[i], want);
        }
        if (row[i] != want && bad_hw++ < 5) {
            uint32_t u;
            memcpy(&u, src + i, sizeof u);
            CHECK_MSG(0, "%s 0x%08x: 0x%04x, scalar 0x%04x", yolo_bf16_round_row_hardware() ? "VCVTNEPS2BF16" : "row",
                      u, row[i], want);
        }
    }
    CHECK(bad_scalar == 0 && bad_hw == 0);
    printf("%d floats: the %s path matches the scalar rounding\n", N,
           yolo_bf16_round_row_hardware() ? "AVX512-BF16 (VCVTNEPS2BF16)" : "portable (no AVX512-BF16 here)");
    free(src), free(row), free(portable);
}

/* Tails of every length: n elements written, the next one untouched. */
static void test_tails(void) {
    enum { N = 40 };
    float src[N];
    test_fill_uniform(src, N, 5, -3, 3);
    for (int n = 0; n < N; n++) {
        uint16_t out[N + 1];
        memset(out, 0xab, sizeof out);
        yolo_bf16_round_row(src, out, n);
        for (int i = 0; i < n; i++) CHECK_MSG(out[i] == yolo_f32_to_bf16(src[i]), "n %d: element %d", n, i);
        CHECK_MSG(out[n] == 0xabab, "n %d: wrote past the end", n);
    }
}

int main(void) {
    test_rule();
    test_sweep();
    test_tails();
    return test_result("test_bf16_row");
}

/* The plain drivers' mutator (fuzz_mutate.h). */
#include "fuzz_mutate.h"

#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

void fuzz_seed(uint64_t seed) { rng_state = seed; }

uint64_t fuzz_rand(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static const uint64_t interesting[] = {0, 1, 7, 8, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0xFFFF, 0x10000, 0x7FFFFFFF,
                                       0xFFFFFFFF, 0x100000000ull, 0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull};
/* Bytes that matter to the formats fuzzed: JSON/YAML syntax, numbers, zip
 * and image signatures. */
static const char tokens[] = "{}[]\":,\\-0123456789e.E+ \n\t#&*!|>'?%@`~PK\x03\x04\x01\x02\xff\xd8IHDR";

size_t fuzz_mutate(uint8_t *buf, size_t size, size_t cap, const fuzz_input *pool, int n_pool) {
    int rounds = 1 + (int)(fuzz_rand() % 6);
    for (int r = 0; r < rounds; r++) {
        uint64_t op = fuzz_rand() % 10;
        size_t pos = size ? (size_t)(fuzz_rand() % size) : 0;
        switch (op) {
        case 0: if (size) buf[pos] ^= (uint8_t)(1u << (fuzz_rand() % 8)); break;
        case 1: if (size) buf[pos] = (uint8_t)fuzz_rand(); break;
        case 2: if (size) buf[pos] = (uint8_t)tokens[fuzz_rand() % (sizeof tokens - 1)]; break;
        case 3: /* insert */
            if (size + 8 < cap) {
                size_t k = 1 + (size_t)(fuzz_rand() % 8);
                memmove(buf + pos + k, buf + pos, size - pos);
                for (size_t i = 0; i < k; i++) buf[pos + i] = (uint8_t)tokens[fuzz_rand() % (sizeof tokens - 1)];
                size += k;
            }
            break;
        case 4: /* delete */
            if (size) {
                size_t k = 1 + (size_t)(fuzz_rand() % (size - pos < 16 ? size - pos : 16));
                memmove(buf + pos, buf + pos + k, size - pos - k);
                size -= k;
            }
            break;
        case 5: /* truncate */
            if (size) size = (size_t)(fuzz_rand() % size);
            break;
        case 6: /* an interesting little-endian integer */
            if (size >= 8) {
                uint64_t v = interesting[fuzz_rand() % (sizeof interesting / sizeof *interesting)];
                size_t w = (size_t)1 << (fuzz_rand() % 4);
                if (pos + w > size) pos = size - w;
                for (size_t i = 0; i < w; i++) buf[pos + i] = (uint8_t)(v >> (8 * i));
            }
            break;
        case 7: /* rewrite a decimal number in place (offsets, shapes, sizes) */
            for (size_t i = pos; i < size; i++)
                if (buf[i] >= '0' && buf[i] <= '9') {
                    size_t end = i;
                    while (end < size && buf[end] >= '0' && buf[end] <= '9') end++;
                    for (size_t k = i; k < end; k++) buf[k] = (uint8_t)('0' + fuzz_rand() % 10);
                    if (fuzz_rand() % 4 == 0 && end - i > 1)
                        buf[end - 1] = (uint8_t)('0' + fuzz_rand() % 10), buf[i] = '9';
                    break;
                }
            break;
        case 8: /* copy a chunk over another place */
            if (size > 2) {
                size_t from = (size_t)(fuzz_rand() % size), k = 1 + (size_t)(fuzz_rand() % 32);
                if (from + k > size) k = size - from;
                if (pos + k > size) k = size - pos;
                memmove(buf + pos, buf + from, k);
            }
            break;
        default: /* splice the tail of another input */
            if (n_pool) {
                const fuzz_input *o = &pool[fuzz_rand() % (uint64_t)n_pool];
                size_t from = o->size ? (size_t)(fuzz_rand() % o->size) : 0, k = o->size - from;
                if (pos + k > cap) k = cap - pos;
                memcpy(buf + pos, o->data + from, k);
                size = pos + k;
            }
        }
    }
    return size;
}

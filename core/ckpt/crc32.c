/* CRC-32, slicing-by-8 (eight 256-entry tables built once, thread-safe). */
#include "ckpt/crc32.h"

#include <pthread.h>
#include <string.h>

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFFu];
}

uint32_t yolo_crc32_update(uint32_t crc, const void *data, size_t size) {
    pthread_once(&crc_once, crc_init);
    const uint8_t *p = data;
    uint32_t c = ~crc;
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
    return ~c;
}

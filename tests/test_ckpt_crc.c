/* CRC-32: the known check value, and the folded (PCLMULQDQ) path against the
 * table path for every length and alignment that reaches its edges. */
#include <stdlib.h>

#include "ckpt/crc32.h"
#include "test_util.h"

int main(void) {
    CHECK(yolo_crc32_update(0, "123456789", 9) == 0xCBF43926u);
    CHECK(yolo_crc32_update(0, "", 0) == 0);
    size_t n = (1u << 20) + 100;
    unsigned char *b = malloc(n);
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)((i * 2654435761u) >> 13);
    int bad = 0;
    for (size_t len = 0; len < 700; len++)
        for (size_t off = 0; off < 17; off++) {
            uint32_t want = yolo_crc32_portable(0, b + off, len);
            if (yolo_crc32_update(0, b + off, len) != want) bad++;
            uint32_t split = yolo_crc32_update(0, b + off, len / 3);
            if (yolo_crc32_update(split, b + off + len / 3, len - len / 3) != want) bad++;
        }
    CHECK_MSG(bad == 0, "%d mismatches", bad);
    CHECK(yolo_crc32_update(0, b + 5, n - 5) == yolo_crc32_portable(0, b + 5, n - 5));
    free(b);
    return test_result("test_ckpt_crc");
}

/* crc32.h — CRC-32 (IEEE 802.3, the zip/PNG polynomial) over host memory,
 * with carry-less multiplication where the CPU has it.
 *
 * Used by the checkpoint container to record a checksum of every blob in
 * meta.yaml, so a flipped byte is reported as a checksum mismatch of the
 * member at fault. crc32("123456789") == 0xCBF43926. */
#ifndef YOLO_CKPT_CRC32_H
#define YOLO_CKPT_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: start with crc = 0, feed the bytes in any number of
 * pieces, the result after the last piece is the CRC of the whole. */
uint32_t yolo_crc32_update(uint32_t crc, const void *data, size_t size);
/* The same with the table method only (the reference for tests). */
uint32_t yolo_crc32_portable(uint32_t crc, const void *data, size_t size);

#endif

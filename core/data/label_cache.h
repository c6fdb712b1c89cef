/* label_cache.h — the index of a split, saved so the next open skips the scan.
 *
 * The key hashes the parser's format name, the task's needs, nc, the
 * keypoint layout, the tolerance, and every image's and label file's path,
 * size and mtime (member size/offset and the archive's own stamp inside an
 * archive), so any change to a file invalidates it.
 *
 * Name and place: labels/<split folder>.yolo-cache (image folders:
 * <split>.yolo-cache) when that folder's parent is writable, else
 * $YOLO_CACHE_DIR/labels/<hash>.yolo-cache (read-only trees, archives).
 * Next to the labels so it goes with the dataset; a suffix of its own so
 * Ultralytics' <split>.cache (a numpy pickle) is never read, overwritten
 * or shadowed: each tool keeps its own cache in the same folder.
 *
 * Format: "YOLOLC03", the key, the samples, the warnings, then a 64-bit
 * FNV-1a checksum over everything before it. A load verifies the checksum
 * and then every count, size and offset against the bytes that remain
 * and the dataset (class ids < nc, polygon offsets that start at 0 and
 * never decrease, the keypoint layout, image sizes), so a damaged cache is
 * reported and rebuilt, never trusted. Writes are atomic (temp file +
 * rename), so concurrent ranks are safe. */
#ifndef YOLO_DATA_LABEL_CACHE_H
#define YOLO_DATA_LABEL_CACHE_H

#include "data/dataset.h"

#define YOLO_LABEL_CACHE_SUFFIX ".yolo-cache"

/* The cache file for this split (malloc'd). */
char *yolo_label_cache_path(const yolo_dataset *ds, const char *first_image, uint64_t location_key);

typedef enum yolo_cache_result {
    YOLO_CACHE_HIT,     /* ds filled */
    YOLO_CACHE_MISS,    /* absent, of another key (the files changed) or an older format: rescan quietly */
    YOLO_CACHE_DAMAGED, /* checksum or structure wrong: the error names the file and what; warn and rescan */
} yolo_cache_result;

/* On a hit fills ds->samples/n/stats and the warnings (ds->cfg, kpt_count
 * and kpt_dims must be set: the cache is checked against them). */
yolo_cache_result yolo_label_cache_load(const char *path, uint64_t key, yolo_dataset *ds, char ***warnings,
                                        int64_t *n_warnings);
/* The same on bytes in memory (`path` names them in messages). */
yolo_cache_result yolo_label_cache_decode(const uint8_t *data, size_t len, const char *path, uint64_t key,
                                          yolo_dataset *ds, char ***warnings, int64_t *n_warnings);
yolo_status yolo_label_cache_save(const char *path, uint64_t key, const yolo_dataset *ds, char *const *warnings,
                                  int64_t n_warnings);
/* Rewrites the trailing checksum of a cache image (tests and fuzzing reach
 * the structure checks behind it this way). */
void yolo_label_cache_seal(uint8_t *data, size_t len);

#endif

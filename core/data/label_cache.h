/* label_cache.h — the index of a split, saved so the next open skips the scan.
 *
 * The key hashes the parser's format name, the task's needs, nc, the
 * keypoint layout, the tolerance, and every image's and label file's path,
 * size and mtime (member size/offset and the archive's own stamp inside an
 * archive), so any change to a file invalidates it. It lives next to the
 * labels (labels/train2017.cache, like Ultralytics) when that folder is
 * writable, else in $YOLO_CACHE_DIR/labels/ (read-only trees, archives).
 * Writes are atomic (temp file + rename), so concurrent ranks are safe. */
#ifndef YOLO_DATA_LABEL_CACHE_H
#define YOLO_DATA_LABEL_CACHE_H

#include "data/dataset.h"

/* The cache file for this split (malloc'd). */
char *yolo_label_cache_path(const yolo_dataset *ds, const char *first_image, uint64_t location_key);

/* Fills ds->samples/n/stats and the warnings on a hit; any miss or damage
 * returns non-OK (not an error for the caller: it rescans). */
yolo_status yolo_label_cache_load(const char *path, uint64_t key, yolo_dataset *ds, char ***warnings,
                                  int64_t *n_warnings);
yolo_status yolo_label_cache_save(const char *path, uint64_t key, const yolo_dataset *ds, char *const *warnings,
                                  int64_t n_warnings);

#endif

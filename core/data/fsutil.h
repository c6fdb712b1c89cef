/* fsutil.h — small file and path helpers for the data pipeline. */
#ifndef YOLO_DATA_FSUTIL_H
#define YOLO_DATA_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"

/* Reads a whole file into a malloc'd buffer (NUL-terminated beyond len). */
yolo_status yolo_read_file(const char *path, uint8_t **out, size_t *len);
/* Writes atomically: temp file in the same folder, fsync, rename. */
yolo_status yolo_write_file(const char *path, const void *data, size_t len);
/* The same without fsync, for many small files made atomic another way
 * (the synthetic dataset is renamed into place as a whole folder). */
yolo_status yolo_write_file_nosync(const char *path, const void *data, size_t len);
/* mkdir -p. */
yolo_status yolo_mkdirs(const char *path);

/* malloc'd a + "/" + b (b returned as is when absolute). */
char *yolo_path_join(const char *a, const char *b);
/* malloc'd folder part ("." when none). */
char *yolo_path_dirname(const char *path);
/* Pointer into path past the last '/'. */
const char *yolo_path_basename(const char *path);
/* Case-insensitive extension test: ext like ".jpg". */
bool yolo_path_has_ext(const char *path, const char *ext);
/* One of the image extensions Ultralytics lists (bmp dng jpeg jpg mpo png tif tiff webp pfm). */
bool yolo_path_is_image(const char *path);
/* Ultralytics' VID_FORMATS (predicted frame by frame there; not built here). */
bool yolo_path_is_video(const char *path);
/* .zip .tar .tar.gz .tgz .tar.bz2 .tar.xz .tar.zst */
bool yolo_path_is_archive(const char *path);
/* Ultralytics' label path: the last "/images/" (or a leading "images/")
 * becomes "/labels/", and the extension ".txt". malloc'd. */
char *yolo_label_path_for(const char *image_path);

bool yolo_is_dir(const char *path);
bool yolo_is_file(const char *path);
/* True if the folder can be written and is not marked read-only
 * (no write bits at all: shared read-only trees, even for root). */
bool yolo_dir_writable(const char *path);

/* $YOLO_CACHE_DIR, else $HOME/.cache/yolo, else /tmp/yolo-cache; malloc'd. */
char *yolo_cache_dir(void);

/* 64-bit FNV-1a, chainable: h = yolo_hash64(h, data, len), start 0. */
uint64_t yolo_hash64(uint64_t h, const void *data, size_t len);
uint64_t yolo_hash_str(uint64_t h, const char *s);

/* Lists regular files below dir (recursive, following symlinks to files),
 * as full paths sorted bytewise. *out is a malloc'd array of malloc'd strings. */
yolo_status yolo_list_files(const char *dir, char ***out, int64_t *n);
void yolo_free_strings(char **v, int64_t n);

#endif

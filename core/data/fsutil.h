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

/* Folders deeper than this below a walk's root are refused (naming the
 * path): the walk keeps a list of folders to visit, not a deep C stack,
 * but no dataset nests this deep. */
#define YOLO_WALK_MAX_DEPTH 64

/* What a walk left out (see yolo_walk_files): folders reached a second time
 * (a symlink back into the tree, or a second link to one folder), files
 * reached a second time (a symlink or hard link to a file already listed).
 * The examples are the first of each, relative to the root. */
typedef struct yolo_walk_skips {
    int64_t folders, files;
    char folder_example[256]; /* "loop -> ." */
    char file_example[256];   /* "dup.jpg: the same file as a.jpg" */
} yolo_walk_skips;

/* Lists regular files below dir (recursive, following symlinks), as full
 * paths sorted bytewise; *out is a malloc'd array of malloc'd strings.
 * Each real file (device + inode) is listed once, under the path with the
 * fewest symlinks in it (then the bytewise first); a folder already walked,
 * or one the root is inside, is not walked (again), so a loop ends and a
 * second link to a folder adds nothing, while links to files or folders
 * elsewhere are followed.
 * Dangling links are passed over. skips may be NULL. */
yolo_status yolo_walk_files(const char *dir, char ***out, int64_t *n, yolo_walk_skips *skips);
/* yolo_walk_files without the report. */
yolo_status yolo_list_files(const char *dir, char ***out, int64_t *n);
/* keep[i] = false for each path naming a file another path names (device +
 * inode): of those, a symlink gives way to a path that is not one, then the
 * bytewise first is kept. The dropped are counted into skips (may be NULL;
 * not cleared); paths that cannot be examined are kept, for their reader to
 * report. For lists not made by one walk (list files, patterns). */
yolo_status yolo_files_once(char *const *paths, int64_t n, bool *keep, yolo_walk_skips *skips);
/* One line for what a walk of `dir` skipped ("images/train: skipped 2
 * symlinked folders ..."); false (buf "") when it skipped nothing. */
bool yolo_walk_skips_describe(const char *dir, const yolo_walk_skips *skips, char *buf, size_t size);
void yolo_free_strings(char **v, int64_t n);

#endif

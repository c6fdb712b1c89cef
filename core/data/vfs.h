/* vfs.h — one view of a dataset's files, whether in folders or an archive.
 *
 * A folder view takes ordinary paths. An archive view takes member names
 * ("coco8/images/train/x.jpg"); folders inside it are implied by names. */
#ifndef YOLO_DATA_VFS_H
#define YOLO_DATA_VFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"

typedef struct yolo_vfs yolo_vfs;

/* archive_path NULL: the real file system. */
yolo_status yolo_vfs_open(const char *archive_path, yolo_vfs **out);
void yolo_vfs_free(yolo_vfs *vfs);

bool yolo_vfs_is_archive(const yolo_vfs *vfs);
/* The archive's path ("" for folders), for messages. */
const char *yolo_vfs_name(const yolo_vfs *vfs);

bool yolo_vfs_is_file(const yolo_vfs *vfs, const char *path);
bool yolo_vfs_is_dir(const yolo_vfs *vfs, const char *path);
/* For a file that may be absent (a label file): *exists is true for a
 * regular file, false when nothing is there; anything else at the path (a
 * folder, a symlink loop or a dangling link, a file that cannot be
 * examined) is an error naming the path and what it is. */
yolo_status yolo_vfs_optional_file(const yolo_vfs *vfs, const char *path, bool *exists);
/* Regular files below dir (recursive), sorted bytewise. */
yolo_status yolo_vfs_list(const yolo_vfs *vfs, const char *dir, char ***out, int64_t *n);
/* The same, saying what a folder walk skipped (yolo_walk_files: links back
 * into the tree, files reached twice); an archive has no links: none. */
struct yolo_walk_skips;
yolo_status yolo_vfs_walk(const yolo_vfs *vfs, const char *dir, char ***out, int64_t *n,
                          struct yolo_walk_skips *skips);
/* Whole file, malloc'd, NUL after len. Thread-safe. */
yolo_status yolo_vfs_read(const yolo_vfs *vfs, const char *path, uint8_t **out, size_t *len);
/* Size and modification time hashed (0 when missing), for cache keys. */
uint64_t yolo_vfs_stamp(const yolo_vfs *vfs, const char *path);
/* For archives: the single top-level folder all members share, or "". */
const char *yolo_vfs_top_folder(const yolo_vfs *vfs);

#endif

/* archive.h — datasets read straight from .zip and .tar[.gz|.bz2|.xz|.zst].
 *
 * Strategy: index once, then decode members on demand, from any thread.
 * The archive is memory-mapped. For zip the central directory is parsed
 * here (it has every member's offset); a member is read by handing
 * libarchive's streaming zip reader the byte range of that one member, so
 * a read costs only that member's decompression. For an uncompressed tar
 * the index records each member's header offset (one pass over the
 * headers) and a read parses from there. A compressed tar cannot seek: it
 * is decompressed once, as a single .tar file (not extracted), into the
 * cache folder (YOLO_CACHE_DIR/archives, named by the archive's path, size
 * and mtime, so a changed archive gets a new copy) and then read as an
 * uncompressed tar. Other formats (7z, rar) are refused. */
#ifndef YOLO_DATA_ARCHIVE_H
#define YOLO_DATA_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"

typedef struct yolo_archive yolo_archive;

/* The largest member read: 256 MiB, far above any image or label file, so
 * a member of zeros that inflates to gigabytes is refused from its
 * declared size, before anything is allocated. */
#define YOLO_ARCHIVE_MAX_MEMBER ((uint64_t)256 << 20)

typedef struct yolo_archive_member {
    char *name;          /* normalized: no leading "./" or "/" */
    uint64_t size;       /* uncompressed bytes */
    int64_t mtime;
    uint64_t offset;     /* zip: local header; tar: first header block */
    uint64_t comp_size;  /* zip only */
    int method;          /* zip only: 0 stored, 8 deflate, ... */
} yolo_archive_member;

yolo_status yolo_archive_open(const char *path, yolo_archive **out);
void yolo_archive_close(yolo_archive *archive);

/* Members sorted by name (regular files only). */
int64_t yolo_archive_count(const yolo_archive *archive);
const yolo_archive_member *yolo_archive_member_at(const yolo_archive *archive, int64_t i);
/* Index of the member with this name, or -1. */
int64_t yolo_archive_find(const yolo_archive *archive, const char *name);
/* Reads one member (thread-safe); *out is malloc'd (NUL after len). */
yolo_status yolo_archive_read(const yolo_archive *archive, int64_t i, uint8_t **out, size_t *len);
/* A stamp of the archive file (size, mtime) for cache keys. */
uint64_t yolo_archive_stamp(const yolo_archive *archive);
const char *yolo_archive_path(const yolo_archive *archive);

/* Writes the files under dir into an archive chosen by out_path's
 * extension (.zip, .tar, .tar.gz/.tgz), member names prefixed with
 * `prefix` + "/" when prefix is non-empty. For tests and exports. */
yolo_status yolo_archive_pack(const char *dir, const char *out_path, const char *prefix);

#endif

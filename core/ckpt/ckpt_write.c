/* Checkpoint writer: zip (libarchive, stored members) into "<path>.tmp",
 * fsync, rename, fsync of the folder (see ckpt_file.h). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt/ckpt_file.h"
#include "ckpt/crc32.h"

#define CHUNK ((size_t)4 << 20)

#ifdef YOLO_TEST_HOOKS
static _Thread_local int write_points;
static _Thread_local long crash_at;

int yolo_ckpt_write_points(void) { return write_points; }

/* A numbered point of the write; the fault test kills the process here. */
static void write_point(void) {
    write_points++;
    if (crash_at > 0 && write_points == crash_at) raise(SIGKILL);
}

static void start_write_points(void) {
    write_points = 0;
    const char *env = getenv("YOLO_CKPT_CRASH_AT");
    crash_at = env ? strtol(env, NULL, 10) : 0;
}
#else
static void write_point(void) {}
static void start_write_points(void) {}
#endif

typedef struct wctx {
    int fd;
    const char *tmp;
    int err; /* errno of the first failed write */
} wctx;

static la_ssize_t on_write(struct archive *a, void *user, const void *buf, size_t n) {
    (void)a;
    wctx *w = user;
    const char *p = buf;
    size_t left = n;
    while (left) {
        ssize_t k = write(w->fd, p, left);
        if (k < 0) {
            if (errno == EINTR) continue;
            w->err = errno;
            return -1;
        }
        p += k;
        left -= (size_t)k;
    }
    write_point();
    return (la_ssize_t)n;
}

static yolo_status arc_fail(struct archive *a, const wctx *w, const char *path, const char *doing) {
    if (w->err) return yolo_error(YOLO_ERR_IO, "writing %s: %s: %s", path, doing, strerror(w->err));
    return yolo_error(YOLO_ERR_IO, "writing %s: %s: %s", path, doing, archive_error_string(a) ? archive_error_string(a) : "libarchive error");
}

static yolo_status put_header(struct archive *a, const wctx *w, const char *path, const char *name, uint64_t size) {
    struct archive_entry *e = archive_entry_new();
    if (!e) return yolo_error(YOLO_ERR_NOMEM, "writing %s: out of memory", path);
    archive_entry_set_pathname(e, name);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, (la_int64_t)size);
    archive_entry_set_mtime(e, time(NULL), 0);
    int r = archive_write_header(a, e);
    archive_entry_free(e);
    if (r != ARCHIVE_OK) {
        char doing[128];
        snprintf(doing, sizeof doing, "member %s", name);
        return arc_fail(a, w, path, doing);
    }
    return YOLO_OK;
}

static yolo_status put_data(struct archive *a, const wctx *w, const char *path, const char *name, const void *data,
                            size_t n, uint32_t *crc) {
    const char *p = data;
    while (n) {
        size_t k = n < CHUNK ? n : CHUNK;
        la_ssize_t r = archive_write_data(a, p, k);
        if (r < 0 || (size_t)r != k) {
            char doing[128];
            snprintf(doing, sizeof doing, "member %s", name);
            return arc_fail(a, w, path, doing);
        }
        if (crc) *crc = yolo_crc32_update(*crc, p, k);
        p += k;
        n -= k;
    }
    return YOLO_OK;
}

static yolo_status write_blob(struct archive *a, const wctx *w, const char *path, const char *name,
                              const yolo_ckpt_blob *b, yolo_meta *members) {
    char what[512];
    snprintf(what, sizeof what, "%s of %s", name, path);
    yolo_st_plan plan;
    yolo_status st = yolo_st_plan_build(b->tensors, b->count, b->metadata, b->n_metadata, what, &plan);
    if (st) return st;
    uint64_t size = plan.head_size + plan.data_size;
    uint32_t crc = 0;
    st = put_header(a, w, path, name, size);
    if (!st) st = put_data(a, w, path, name, plan.head, plan.head_size, &crc);
    for (size_t k = 0; k < plan.n && !st; k++) {
        const yolo_st_tensor *t = &b->tensors[plan.order[k]];
        st = put_data(a, w, path, name, t->data, t->nbytes, &crc);
    }
    yolo_st_plan_free(&plan);
    if (st) return st;
    yolo_meta *m = yolo_meta_set_map(members, name);
    char hex[16];
    snprintf(hex, sizeof hex, "%08" PRIx32, crc);
    if (!m || yolo_meta_set_int(m, "size", (int64_t)size) || yolo_meta_set_str(m, "crc32", hex))
        return yolo_error_context(YOLO_ERR_NOMEM, "writing %s", path);
    return YOLO_OK;
}

static yolo_status sync_dir(const char *path) {
    char *copy = strdup(path);
    if (!copy) return yolo_error(YOLO_ERR_NOMEM, "writing %s: out of memory", path);
    const char *dir = dirname(copy);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    yolo_status st = YOLO_OK;
    if (fd < 0) {
        st = yolo_error(YOLO_ERR_IO, "writing %s: cannot open folder %s to sync it: %s", path, dir, strerror(errno));
    } else {
        if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
            st = yolo_error(YOLO_ERR_IO, "writing %s: fsync of folder %s: %s", path, dir, strerror(errno));
        close(fd);
    }
    free(copy);
    return st;
}

/* The zip body: blobs, then meta.yaml with their sizes and checksums. */
static yolo_status write_zip(struct archive *a, const wctx *w, const char *path, const yolo_ckpt_contents *c) {
    yolo_meta *meta = yolo_meta_new_map();
    if (!meta) return yolo_error_context(YOLO_ERR_NOMEM, "writing %s", path);
    yolo_status st = YOLO_OK;
    for (size_t i = 0; i < yolo_meta_size(c->meta) && !st; i++)
        if (strcmp(yolo_meta_key_at(c->meta, i), "members") != 0)
            st = yolo_meta_set_copy(meta, yolo_meta_key_at(c->meta, i), yolo_meta_at(c->meta, i));
    yolo_meta *members = st ? NULL : yolo_meta_set_map(meta, "members");
    if (!st && !members) st = YOLO_ERR_NOMEM;
    for (int id = 0; id < YOLO_CKPT_BLOB_COUNT && !st; id++)
        if (c->blobs[id]) st = write_blob(a, w, path, yolo_ckpt_member_name((yolo_ckpt_blob_id)id), c->blobs[id], members);
    char *text = NULL;
    size_t len = 0;
    if (!st) st = yolo_meta_to_yaml(meta, &text, &len);
    if (!st) st = put_header(a, w, path, "meta.yaml", len);
    if (!st) st = put_data(a, w, path, "meta.yaml", text, len, NULL);
    free(text);
    yolo_meta_free(meta);
    if (st) return st;
    if (archive_write_close(a) != ARCHIVE_OK) return arc_fail(a, w, path, "finishing the zip");
    return YOLO_OK;
}

yolo_status yolo_ckpt_write(const char *path, const yolo_ckpt_contents *c) {
    start_write_points();
    if (!path || !*path || !c) return yolo_error(YOLO_ERR_ARG, "yolo_ckpt_write: path and contents are required");
    char what[512];
    snprintf(what, sizeof what, "writing %s: meta", path);
    yolo_status st = yolo_ckpt_meta_check(c->meta, what, NULL);
    if (st) return st == YOLO_ERR_FORMAT ? YOLO_ERR_ARG : st;

    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    if (!tmp) return yolo_error(YOLO_ERR_NOMEM, "writing %s: out of memory", path);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    wctx w = {.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), .tmp = tmp};
    if (w.fd < 0) {
        st = yolo_error(YOLO_ERR_IO, "writing %s: cannot create %s: %s", path, tmp, strerror(errno));
        free(tmp);
        return st;
    }
    write_point();
    struct archive *a = archive_write_new();
    if (!a) {
        st = yolo_error(YOLO_ERR_NOMEM, "writing %s: out of memory", path);
    } else if (archive_write_set_format_zip(a) != ARCHIVE_OK ||
               archive_write_zip_set_compression_store(a) != ARCHIVE_OK ||
               archive_write_set_bytes_per_block(a, 0) != ARCHIVE_OK ||
               archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
               archive_write_open2(a, &w, NULL, on_write, NULL, NULL) != ARCHIVE_OK) {
        st = arc_fail(a, &w, path, "starting the zip");
    } else {
        st = write_zip(a, &w, path, c);
    }
    if (a) archive_write_free(a);
    if (!st) {
        write_point();
        if (fsync(w.fd) != 0) st = yolo_error(YOLO_ERR_IO, "writing %s: fsync: %s", path, strerror(errno));
        write_point();
    }
    if (close(w.fd) != 0 && !st) st = yolo_error(YOLO_ERR_IO, "writing %s: close: %s", path, strerror(errno));
    if (!st) {
        write_point();
        if (rename(tmp, path) != 0)
            st = yolo_error(YOLO_ERR_IO, "writing %s: cannot rename %s over it: %s", path, tmp, strerror(errno));
    }
    if (st) {
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    write_point();
    st = sync_dir(path);
    write_point();
    return st;
}

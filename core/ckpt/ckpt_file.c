/* Checkpoint reader: zip (libarchive, seekable: the central directory must
 * be intact) -> meta.yaml + safetensors blobs, everything validated. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/ckpt_file.h"
#include "ckpt/crc32.h"
#include "interop/pt_model.h"

#define META_MAX ((size_t)16 << 20)

struct yolo_ckpt {
    char *path;
    size_t file_size;
    yolo_meta *meta;
    yolo_ckpt_info info;
    uint8_t *data[YOLO_CKPT_BLOB_COUNT];
    size_t size[YOLO_CKPT_BLOB_COUNT];
    yolo_st_file *blob[YOLO_CKPT_BLOB_COUNT];
};

void yolo_ckpt_free(yolo_ckpt *ck) {
    if (!ck) return;
    for (int i = 0; i < YOLO_CKPT_BLOB_COUNT; i++) {
        yolo_st_file_free(ck->blob[i]);
        free(ck->data[i]);
    }
    yolo_meta_free(ck->meta);
    free(ck->path);
    free(ck);
}

const char *yolo_ckpt_path(const yolo_ckpt *ck) { return ck->path; }
const yolo_meta *yolo_ckpt_meta(const yolo_ckpt *ck) { return ck->meta; }
const yolo_ckpt_info *yolo_ckpt_get_info(const yolo_ckpt *ck) { return &ck->info; }
size_t yolo_ckpt_file_size(const yolo_ckpt *ck) { return ck->file_size; }
const yolo_st_file *yolo_ckpt_get_blob(const yolo_ckpt *ck, yolo_ckpt_blob_id id) {
    return (unsigned)id < YOLO_CKPT_BLOB_COUNT ? ck->blob[id] : NULL;
}
const yolo_st_tensor *yolo_ckpt_get_tensor(const yolo_ckpt *ck, yolo_ckpt_blob_id id, const char *name) {
    const yolo_st_file *f = yolo_ckpt_get_blob(ck, id);
    return f ? yolo_st_find(f, name) : NULL;
}

/* Reads one member into a malloc'd buffer; *len its size. */
static yolo_status read_member(struct archive *a, struct archive_entry *e, const char *path, const char *name,
                               size_t limit, uint8_t **out, size_t *len) {
    *out = NULL;
    *len = 0;
    size_t cap = 0;
    if (archive_entry_size_is_set(e)) {
        la_int64_t s = archive_entry_size(e);
        if (s < 0 || (uint64_t)s > limit)
            return yolo_error(YOLO_ERR_FORMAT, "%s: member %s claims %lld bytes, more than the file can hold (damaged?)",
                              path, name, (long long)s);
        cap = (size_t)s;
    }
    uint8_t *buf = malloc(cap + 1);
    if (!buf) return yolo_error(YOLO_ERR_NOMEM, "reading %s: out of memory for member %s (%zu bytes)", path, name, cap);
    size_t n = 0;
    for (;;) {
        if (n == cap) {
            if (cap >= limit) {
                free(buf);
                return yolo_error(YOLO_ERR_FORMAT, "%s: member %s is larger than the file can hold (damaged?)", path, name);
            }
            size_t nc = cap < 4096 ? 4096 : cap * 2;
            if (nc > limit) nc = limit;
            uint8_t *nb = realloc(buf, nc + 1);
            if (!nb) {
                free(buf);
                return yolo_error(YOLO_ERR_NOMEM, "reading %s: out of memory for member %s", path, name);
            }
            buf = nb;
            cap = nc;
        }
        la_ssize_t r = archive_read_data(a, buf + n, cap - n);
        if (r == 0) break;
        if (r < 0) {
            const char *msg = archive_error_string(a);
            free(buf);
            if (msg && strstr(msg, "CRC"))
                return yolo_error(YOLO_ERR_FORMAT, "checksum mismatch in member %s of %s (zip CRC-32: %s)", name, path, msg);
            return yolo_error(YOLO_ERR_FORMAT, "%s: member %s cannot be read (truncated or damaged?): %s", path, name,
                              msg ? msg : "libarchive error");
        }
        n += (size_t)r;
    }
    if (archive_entry_size_is_set(e) && (la_int64_t)n != archive_entry_size(e)) {
        free(buf);
        return yolo_error(YOLO_ERR_FORMAT, "%s: member %s holds %zu bytes, its header says %lld (truncated?)", path, name,
                          n, (long long)archive_entry_size(e));
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return YOLO_OK;
}

/* The members table the writer put in meta.yaml against what was read. */
static yolo_status check_members(yolo_ckpt *ck) {
    const char *path = ck->path;
    char what[1024];
    snprintf(what, sizeof what, "meta.yaml of %s", path);
    const yolo_meta *members;
    yolo_status st = yolo_meta_get_map(ck->meta, "members", what, &members);
    if (st) return st;
    for (size_t i = 0; i < yolo_meta_size(members); i++) {
        const char *key = yolo_meta_key_at(members, i);
        int id = -1;
        for (int k = 0; k < YOLO_CKPT_BLOB_COUNT; k++)
            if (strcmp(key, yolo_ckpt_member_name((yolo_ckpt_blob_id)k)) == 0) id = k;
        if (id < 0) return yolo_error(YOLO_ERR_FORMAT, "%s: members lists an unknown member '%.200s'", what, key);
        if (!ck->data[id]) return yolo_error(YOLO_ERR_FORMAT, "member %s listed in meta.yaml is missing from %s", key, path);
    }
    for (int id = 0; id < YOLO_CKPT_BLOB_COUNT; id++) {
        if (!ck->data[id]) continue;
        const char *name = yolo_ckpt_member_name((yolo_ckpt_blob_id)id);
        const yolo_meta *m = yolo_meta_get(members, name);
        if (!m) return yolo_error(YOLO_ERR_FORMAT, "%s: member %s is not listed in meta.yaml's members", path, name);
        char sub[1100];
        snprintf(sub, sizeof sub, "%s: members: %s", what, name);
        int64_t size;
        const char *crc_text;
        if (yolo_meta_kind_of(m) != YOLO_META_MAP) return yolo_error(YOLO_ERR_FORMAT, "%s is not a map", sub);
        if ((st = yolo_meta_get_int(m, "size", sub, &size))) return st;
        if ((st = yolo_meta_get_str(m, "crc32", sub, &crc_text))) return st;
        if (size < 0 || (uint64_t)size != ck->size[id])
            return yolo_error(YOLO_ERR_FORMAT, "size mismatch in member %s of %s: %zu bytes, meta.yaml says %lld", name,
                              path, ck->size[id], (long long)size);
        char *end;
        errno = 0;
        unsigned long want = strtoul(crc_text, &end, 16);
        if (!*crc_text || *end || errno || want > 0xFFFFFFFFul)
            return yolo_error(YOLO_ERR_FORMAT, "%s: crc32 \"%.40s\" is not a hexadecimal CRC", sub, crc_text);
        uint32_t got = yolo_crc32_update(0, ck->data[id], ck->size[id]);
        if (got != (uint32_t)want)
            return yolo_error(YOLO_ERR_FORMAT, "checksum mismatch in member %s of %s (crc32 %08" PRIx32 ", meta.yaml says %08lx)",
                              name, path, got, want);
    }
    return YOLO_OK;
}

/* meta_only: the blob members are skipped unread (yolo_ckpt_read_meta). */
static yolo_status read_zip(yolo_ckpt *ck, const void *data, size_t size, bool meta_only) {
    const char *path = ck->path;
    const uint8_t *b = data;
    if (size == 0) return yolo_error(YOLO_ERR_FORMAT, "%s is empty (not a checkpoint)", path);
    bool zip_magic = size >= 4 && b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4;
    struct archive *a = archive_read_new();
    if (!a) return yolo_error(YOLO_ERR_NOMEM, "reading %s: out of memory", path);
    archive_read_support_format_zip_seekable(a);
    if (archive_read_open_memory(a, data, size) != ARCHIVE_OK) {
        yolo_status st = zip_magic
            ? yolo_error(YOLO_ERR_FORMAT, "%s is truncated or damaged: its zip central directory cannot be read (%s)", path,
                         archive_error_string(a) ? archive_error_string(a) : "?")
            : yolo_error(YOLO_ERR_FORMAT, "%s is not a yolo checkpoint (not a zip archive)", path);
        archive_read_free(a);
        return st;
    }
    uint8_t *meta_text = NULL;
    size_t meta_len = 0;
    size_t limit = size > SIZE_MAX / 1100 ? SIZE_MAX - 1 : size * 1100 + 4096; /* deflate's ratio is at most ~1032 */
    yolo_status st = YOLO_OK;
    char seen[256] = "";
    bool had[YOLO_CKPT_BLOB_COUNT] = {0}; /* members met (meta_only reads none) */
    for (int count = 0; !st; count++) {
        struct archive_entry *e;
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF) break;
        if (r != ARCHIVE_OK) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s is damaged: zip entry %d: %s", path, count,
                            archive_error_string(a) ? archive_error_string(a) : "unreadable header");
            break;
        }
        const char *name = archive_entry_pathname(e);
        if (!name) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s is damaged: zip entry %d has no name", path, count);
            break;
        }
        size_t sl = strlen(seen);
        if (sl + 2 < sizeof seen) snprintf(seen + sl, sizeof seen - sl, "%s%.60s", sl ? ", " : "", name);
        int id = -1;
        bool is_meta = strcmp(name, "meta.yaml") == 0;
        for (int k = 0; k < YOLO_CKPT_BLOB_COUNT; k++)
            if (strcmp(name, yolo_ckpt_member_name((yolo_ckpt_blob_id)k)) == 0) id = k;
        if (!is_meta && id < 0) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s is not a yolo checkpoint: unexpected member '%.200s'", path, name);
            break;
        }
        if (archive_entry_filetype(e) != AE_IFREG) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s: member %s is not a regular file", path, name);
            break;
        }
        if ((is_meta && meta_text) || (id >= 0 && had[id])) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s: member %s appears twice", path, name);
            break;
        }
        if (id >= 0) had[id] = true;
        if (is_meta) st = read_member(a, e, path, name, META_MAX, &meta_text, &meta_len);
        else if (meta_only) archive_read_data_skip(a);
        else st = read_member(a, e, path, name, limit, &ck->data[id], &ck->size[id]);
    }
    archive_read_free(a);
    if (!st && !meta_text)
        st = yolo_error(YOLO_ERR_FORMAT, "%s is not a yolo checkpoint: no meta.yaml (members: %s)", path,
                        seen[0] ? seen : "none");
    if (!st) {
        char what[1024];
        snprintf(what, sizeof what, "meta.yaml of %s", path);
        st = yolo_meta_parse((const char *)meta_text, meta_len, what, &ck->meta);
        if (!st) st = yolo_ckpt_meta_check(ck->meta, what, &ck->info);
        if (!st && !meta_only) st = check_members(ck);
    }
    free(meta_text);
    for (int id = 0; id < YOLO_CKPT_BLOB_COUNT && !st; id++) {
        if (!ck->data[id]) continue;
        char what[1024];
        snprintf(what, sizeof what, "%s of %s", yolo_ckpt_member_name((yolo_ckpt_blob_id)id), path);
        st = yolo_st_decode(ck->data[id], ck->size[id], what, &ck->blob[id]);
    }
    return st;
}

/* An Ultralytics .pt (core/interop): its weights as the EMA member. */
static yolo_status read_pt(yolo_ckpt *ck, const void *data, size_t size, bool meta_only) {
    yolo_status st = meta_only ? yolo_pt_ckpt_meta(data, size, ck->path, &ck->meta)
                               : yolo_pt_ckpt_parts(data, size, ck->path, &ck->meta, &ck->data[YOLO_CKPT_EMA],
                                                    &ck->size[YOLO_CKPT_EMA]);
    char what[1024];
    snprintf(what, sizeof what, "the weights of %s", ck->path);
    if (!st) st = yolo_ckpt_meta_check(ck->meta, what, &ck->info);
    if (!st && !meta_only)
        st = yolo_st_decode(ck->data[YOLO_CKPT_EMA], ck->size[YOLO_CKPT_EMA], what, &ck->blob[YOLO_CKPT_EMA]);
    return st;
}

static yolo_ckpt *ckpt_new(const char *name) {
    yolo_ckpt *ck = calloc(1, sizeof *ck);
    if (ck && !(ck->path = strdup(name))) {
        free(ck);
        ck = NULL;
    }
    return ck;
}

static yolo_status read_memory(const void *data, size_t size, const char *name, bool meta_only, yolo_ckpt **out) {
    *out = NULL;
    if (!data && size) return yolo_error(YOLO_ERR_ARG, "yolo_ckpt_read_memory: NULL data");
    yolo_ckpt *ck = ckpt_new(name ? name : "(memory)");
    if (!ck) return yolo_error(YOLO_ERR_NOMEM, "reading %s: out of memory", name ? name : "(memory)");
    ck->file_size = size;
    yolo_status st = yolo_pt_is_path(name) ? read_pt(ck, data ? data : "", size, meta_only)
                                           : read_zip(ck, data ? data : "", size, meta_only);
    if (st) {
        yolo_ckpt_free(ck);
        return st;
    }
    *out = ck;
    return YOLO_OK;
}

yolo_status yolo_ckpt_read_memory(const void *data, size_t size, const char *name, yolo_ckpt **out) {
    return read_memory(data, size, name, false, out);
}

static yolo_status read_file(const char *path, bool meta_only, yolo_ckpt **out) {
    *out = NULL;
    if (!path) return yolo_error(YOLO_ERR_ARG, "yolo_ckpt_read: NULL path");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return yolo_error(YOLO_ERR_IO, "cannot open checkpoint %s: %s%s", path, strerror(errno),
                          yolo_pt_missing_hint(path, errno));
    struct stat sb;
    errno = 0;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int e = errno;
        close(fd);
        return yolo_error(YOLO_ERR_IO, "checkpoint %s is not a regular file%s%s", path, e ? ": " : "", e ? strerror(e) : "");
    }
    size_t size = (size_t)sb.st_size;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) {
        close(fd);
        return yolo_error(YOLO_ERR_NOMEM, "reading %s: out of memory for %zu bytes", path, size);
    }
    size_t n = 0;
    while (n < size) {
        ssize_t k = read(fd, buf + n, size - n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            int e = k < 0 ? errno : 0;
            close(fd);
            free(buf);
            return yolo_error(YOLO_ERR_IO, "reading %s: %s", path, e ? strerror(e) : "file shrank while reading");
        }
        n += (size_t)k;
    }
    close(fd);
    yolo_status st = read_memory(buf, size, path, meta_only, out);
    free(buf);
    return st;
}

yolo_status yolo_ckpt_read(const char *path, yolo_ckpt **out) { return read_file(path, false, out); }

yolo_status yolo_ckpt_read_meta(const char *path, yolo_ckpt **out) { return read_file(path, true, out); }

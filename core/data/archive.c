/* Random access into zip and tar archives (strategy: see archive.h). */
#include "data/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/fsutil.h"

struct yolo_archive {
    char *path;
    const uint8_t *map;
    size_t map_len;
    bool is_zip;
    yolo_archive_member *members;
    int64_t n, cap;
    uint64_t stamp;
};

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static char *normalize_name(const char *name, size_t len) {
    while (len >= 2 && name[0] == '.' && name[1] == '/')
        name += 2, len -= 2;
    while (len >= 1 && name[0] == '/')
        name++, len--;
    return strndup(name, len);
}

static yolo_status add_member(yolo_archive *a, const yolo_archive_member *m) {
    if (a->n == a->cap) {
        int64_t cap = a->cap ? a->cap * 2 : 256;
        yolo_archive_member *v = realloc(a->members, (size_t)cap * sizeof *v);
        if (!v)
            return yolo_error(YOLO_ERR_NOMEM, "%s: index", a->path);
        a->members = v;
        a->cap = cap;
    }
    a->members[a->n++] = *m;
    return YOLO_OK;
}

/* ---- zip: central directory ---------------------------------------------- */

static yolo_status index_zip(yolo_archive *a) {
    const uint8_t *b = a->map;
    size_t len = a->map_len;
    if (len < 22)
        return yolo_error(YOLO_ERR_FORMAT, "%s: zip too short", a->path);
    size_t eocd = SIZE_MAX;
    size_t stop = len > 22 + 65535 ? len - 22 - 65535 : 0;
    for (size_t i = len - 22 + 1; i-- > stop;)
        if (le32(b + i) == 0x06054b50) {
            eocd = i;
            break;
        }
    if (eocd == SIZE_MAX)
        return yolo_error(YOLO_ERR_FORMAT, "%s: zip end-of-directory record not found (truncated?)", a->path);
    uint64_t entries = le16(b + eocd + 10), cd_off = le32(b + eocd + 16);
    if ((entries == 0xFFFF || cd_off == 0xFFFFFFFF) && eocd >= 20 && le32(b + eocd - 20) == 0x07064b50) {
        uint64_t z64 = le64(b + eocd - 20 + 8);
        if (z64 + 56 > len || le32(b + z64) != 0x06064b50)
            return yolo_error(YOLO_ERR_FORMAT, "%s: bad zip64 end record", a->path);
        entries = le64(b + z64 + 32);
        cd_off = le64(b + z64 + 48);
    }
    size_t p = (size_t)cd_off;
    for (uint64_t e = 0; e < entries; e++) {
        if (p + 46 > len || le32(b + p) != 0x02014b50)
            return yolo_error(YOLO_ERR_FORMAT, "%s: bad zip central directory entry %llu", a->path,
                              (unsigned long long)e);
        uint32_t flags = le16(b + p + 8), method = le16(b + p + 10);
        uint64_t comp = le32(b + p + 20), size = le32(b + p + 24);
        uint32_t nlen = le16(b + p + 28), xlen = le16(b + p + 30), clen = le16(b + p + 32);
        uint64_t off = le32(b + p + 42);
        if (p + 46 + nlen + xlen > len)
            return yolo_error(YOLO_ERR_FORMAT, "%s: truncated zip central directory", a->path);
        /* zip64 extra field: the 0xFFFFFFFF fields, in order */
        for (size_t x = p + 46 + nlen; x + 4 <= p + 46 + nlen + xlen;) {
            uint32_t id = le16(b + x), sz = le16(b + x + 2);
            if (id == 1) {
                size_t q = x + 4;
                if (size == 0xFFFFFFFF && q + 8 <= x + 4 + sz)
                    size = le64(b + q), q += 8;
                if (comp == 0xFFFFFFFF && q + 8 <= x + 4 + sz)
                    comp = le64(b + q), q += 8;
                if (off == 0xFFFFFFFF && q + 8 <= x + 4 + sz)
                    off = le64(b + q);
            }
            x += 4 + sz;
        }
        const char *name = (const char *)b + p + 46;
        bool is_dir = nlen > 0 && name[nlen - 1] == '/';
        if (!is_dir) {
            if (flags & 1)
                return yolo_error(YOLO_ERR_UNSUPPORTED, "%s: member %.*s is encrypted", a->path, (int)nlen, name);
            yolo_archive_member m = {normalize_name(name, nlen), size, 0, off, comp, (int)method};
            if (!m.name)
                return yolo_error(YOLO_ERR_NOMEM, "%s: index", a->path);
            yolo_status st = add_member(a, &m);
            if (st != YOLO_OK) {
                free(m.name);
                return st;
            }
        }
        p += 46 + nlen + xlen + clen;
    }
    return YOLO_OK;
}

/* ---- tar: one pass over headers ------------------------------------------ */

static yolo_status index_tar(yolo_archive *a) {
    struct archive *ar = archive_read_new();
    archive_read_support_format_tar(ar);
    if (archive_read_open_memory(ar, a->map, a->map_len) != ARCHIVE_OK) {
        yolo_status st = yolo_error(YOLO_ERR_FORMAT, "%s: %s", a->path, archive_error_string(ar));
        archive_read_free(ar);
        return st;
    }
    struct archive_entry *entry;
    yolo_status st = YOLO_OK;
    int rc;
    while ((rc = archive_read_next_header(ar, &entry)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
        if (archive_entry_filetype(entry) != AE_IFREG)
            continue;
        const char *name = archive_entry_pathname(entry);
        if (!name)
            continue;
        yolo_archive_member m = {normalize_name(name, strlen(name)), (uint64_t)archive_entry_size(entry),
                                 archive_entry_mtime(entry), (uint64_t)archive_read_header_position(ar), 0, 0};
        if (!m.name || (st = add_member(a, &m)) != YOLO_OK) {
            free(m.name);
            st = yolo_error(YOLO_ERR_NOMEM, "%s: index", a->path);
            break;
        }
    }
    if (st == YOLO_OK && rc != ARCHIVE_EOF)
        st = yolo_error(YOLO_ERR_FORMAT, "%s: corrupt tar: %s", a->path, archive_error_string(ar));
    archive_read_free(ar);
    return st;
}

/* Decompresses a compressed tar once into the cache folder as a plain tar. */
static yolo_status decompress_tar(const char *path, const struct stat *sb, char **out_path) {
    char *cache = yolo_cache_dir();
    char *dir = cache ? yolo_path_join(cache, "archives") : NULL;
    free(cache);
    if (!dir)
        return yolo_error(YOLO_ERR_NOMEM, "cache path");
    yolo_status st = yolo_mkdirs(dir);
    if (st != YOLO_OK) {
        free(dir);
        return st;
    }
    uint64_t h = yolo_hash_str(0, path);
    h = yolo_hash64(h, &sb->st_size, sizeof sb->st_size);
    h = yolo_hash64(h, &sb->st_mtim, sizeof sb->st_mtim);
    char name[512];
    snprintf(name, sizeof name, "%.400s-%016llx.tar", yolo_path_basename(path), (unsigned long long)h);
    char *target = yolo_path_join(dir, name);
    free(dir);
    if (!target)
        return yolo_error(YOLO_ERR_NOMEM, "cache path");
    if (yolo_is_file(target)) {
        *out_path = target;
        return YOLO_OK;
    }
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.part%ld", target, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    struct archive *ar = archive_read_new();
    archive_read_support_filter_all(ar);
    archive_read_support_format_raw(ar);
    struct archive_entry *entry;
    st = YOLO_OK;
    if (!f)
        st = yolo_error(YOLO_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    else if (archive_read_open_filename(ar, path, 1 << 16) != ARCHIVE_OK ||
             archive_read_next_header(ar, &entry) != ARCHIVE_OK)
        st = yolo_error(YOLO_ERR_FORMAT, "%s: %s", path, archive_error_string(ar));
    char buf[1 << 16];
    while (st == YOLO_OK) {
        la_ssize_t r = archive_read_data(ar, buf, sizeof buf);
        if (r < 0)
            st = yolo_error(YOLO_ERR_FORMAT, "%s: corrupt compressed stream: %s", path, archive_error_string(ar));
        if (r <= 0)
            break;
        if (fwrite(buf, 1, (size_t)r, f) != (size_t)r)
            st = yolo_error(YOLO_ERR_IO, "%s: write failed (disk full?)", tmp);
    }
    archive_read_free(ar);
    if (f && fclose(f) != 0 && st == YOLO_OK)
        st = yolo_error(YOLO_ERR_IO, "%s: write failed", tmp);
    if (st == YOLO_OK && rename(tmp, target) != 0)
        st = yolo_error(YOLO_ERR_IO, "%s: cannot rename: %s", target, strerror(errno));
    if (st != YOLO_OK) {
        unlink(tmp);
        free(target);
        return st;
    }
    *out_path = target;
    return YOLO_OK;
}

static int cmp_member(const void *x, const void *y) {
    return strcmp(((const yolo_archive_member *)x)->name, ((const yolo_archive_member *)y)->name);
}

static yolo_status map_file(yolo_archive *a, const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return yolo_error(YOLO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size == 0) {
        close(fd);
        return yolo_error(YOLO_ERR_FORMAT, "%s: empty or unreadable archive", path);
    }
    void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return yolo_error(YOLO_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
    a->map = m;
    a->map_len = (size_t)sb.st_size;
    return YOLO_OK;
}

/* Is this a tar stream with no compression filter? */
static yolo_status probe_tar(const char *path, bool *compressed) {
    struct archive *ar = archive_read_new();
    archive_read_support_filter_all(ar);
    archive_read_support_format_tar(ar);
    struct archive_entry *entry;
    yolo_status st = YOLO_OK;
    int rc = archive_read_open_filename(ar, path, 1 << 16);
    if (rc == ARCHIVE_OK)
        rc = archive_read_next_header(ar, &entry);
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN && rc != ARCHIVE_EOF)
        st = yolo_error(YOLO_ERR_FORMAT, "%s: not a zip or tar archive: %s", path, archive_error_string(ar));
    else
        *compressed = archive_filter_count(ar) > 1 || archive_filter_code(ar, 0) != ARCHIVE_FILTER_NONE;
    archive_read_free(ar);
    return st;
}

yolo_status yolo_archive_open(const char *path, yolo_archive **out) {
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return yolo_error(YOLO_ERR_IO, "%s: %s", path, strerror(errno));
    yolo_archive *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(path))) {
        free(a);
        return yolo_error(YOLO_ERR_NOMEM, "archive");
    }
    a->stamp = yolo_hash64(yolo_hash64(yolo_hash_str(0, path), &sb.st_size, sizeof sb.st_size), &sb.st_mtim,
                           sizeof sb.st_mtim);
    yolo_status st = map_file(a, path);
    if (st == YOLO_OK) {
        a->is_zip = a->map_len >= 4 && (le32(a->map) == 0x04034b50 || le32(a->map) == 0x06054b50);
        if (a->is_zip) {
            st = index_zip(a);
        } else {
            bool compressed = false;
            st = probe_tar(path, &compressed);
            if (st == YOLO_OK && compressed) {
                char *plain = NULL;
                st = decompress_tar(path, &sb, &plain);
                if (st == YOLO_OK) {
                    munmap((void *)a->map, a->map_len);
                    a->map = NULL;
                    st = map_file(a, plain);
                }
                free(plain);
            }
            if (st == YOLO_OK)
                st = index_tar(a);
        }
    }
    if (st != YOLO_OK) {
        yolo_archive_close(a);
        return st;
    }
    if (a->n)
        qsort(a->members, (size_t)a->n, sizeof *a->members, cmp_member);
    *out = a;
    return YOLO_OK;
}

void yolo_archive_close(yolo_archive *a) {
    if (!a)
        return;
    for (int64_t i = 0; i < a->n; i++)
        free(a->members[i].name);
    free(a->members);
    if (a->map)
        munmap((void *)a->map, a->map_len);
    free(a->path);
    free(a);
}

int64_t yolo_archive_count(const yolo_archive *a) { return a->n; }
const yolo_archive_member *yolo_archive_member_at(const yolo_archive *a, int64_t i) { return &a->members[i]; }
uint64_t yolo_archive_stamp(const yolo_archive *a) { return a->stamp; }
const char *yolo_archive_path(const yolo_archive *a) { return a->path; }

int64_t yolo_archive_find(const yolo_archive *a, const char *name) {
    int64_t lo = 0, hi = a->n - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        int c = strcmp(a->members[mid].name, name);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Reads the first entry of a memory range with libarchive. */
static yolo_status read_first_entry(const yolo_archive *a, const yolo_archive_member *m, const uint8_t *start,
                                    size_t len, bool zip, uint8_t *buf) {
    struct archive *ar = archive_read_new();
    if (zip)
        archive_read_support_format_zip_streamable(ar);
    else
        archive_read_support_format_tar(ar);
    struct archive_entry *entry;
    yolo_status st = YOLO_OK;
    if (archive_read_open_memory(ar, start, len) != ARCHIVE_OK || archive_read_next_header(ar, &entry) < ARCHIVE_WARN) {
        st = yolo_error(YOLO_ERR_FORMAT, "%s: member %s: %s", a->path, m->name, archive_error_string(ar));
    } else {
        size_t got = 0;
        while (got < m->size) {
            la_ssize_t r = archive_read_data(ar, buf + got, m->size - got);
            if (r < 0) {
                st = yolo_error(YOLO_ERR_FORMAT, "%s: member %s: %s", a->path, m->name, archive_error_string(ar));
                break;
            }
            if (r == 0)
                break;
            got += (size_t)r;
        }
        if (st == YOLO_OK && got != m->size)
            st = yolo_error(YOLO_ERR_FORMAT, "%s: member %s: %zu of %llu bytes", a->path, m->name, got,
                            (unsigned long long)m->size);
    }
    archive_read_free(ar);
    return st;
}

yolo_status yolo_archive_read(const yolo_archive *a, int64_t i, uint8_t **out, size_t *len) {
    *out = NULL;
    *len = 0;
    if (i < 0 || i >= a->n)
        return yolo_error(YOLO_ERR_ARG, "%s: member index %lld", a->path, (long long)i);
    const yolo_archive_member *m = &a->members[i];
    if (m->offset >= a->map_len)
        return yolo_error(YOLO_ERR_FORMAT, "%s: member %s lies past the end", a->path, m->name);
    if (m->size > YOLO_ARCHIVE_MAX_MEMBER) /* checked before allocating or inflating anything */
        return yolo_error(YOLO_ERR_FORMAT, "%s: member %s declares %llu bytes, more than the %llu MiB a dataset file "
                          "may have; not extracted (a zip bomb, or not a dataset)", a->path, m->name,
                          (unsigned long long)m->size, (unsigned long long)(YOLO_ARCHIVE_MAX_MEMBER >> 20));
    uint8_t *buf = malloc((size_t)m->size + 1);
    if (!buf)
        return yolo_error(YOLO_ERR_NOMEM, "%s: member %s (%llu bytes)", a->path, m->name, (unsigned long long)m->size);
    yolo_status st = YOLO_OK;
    const uint8_t *start = a->map + m->offset;
    size_t avail = a->map_len - (size_t)m->offset;
    if (a->is_zip && m->method == 0) {
        /* stored: the bytes follow the local header */
        if (avail < 30 || le32(start) != 0x04034b50) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s: member %s: bad local header", a->path, m->name);
        } else {
            size_t data = 30 + le16(start + 26) + le16(start + 28);
            if (data + m->size > avail)
                st = yolo_error(YOLO_ERR_FORMAT, "%s: member %s is truncated", a->path, m->name);
            else
                memcpy(buf, start + data, (size_t)m->size);
        }
    } else {
        st = read_first_entry(a, m, start, avail, a->is_zip, buf);
    }
    if (st != YOLO_OK) {
        free(buf);
        return st;
    }
    buf[m->size] = 0;
    *out = buf;
    *len = (size_t)m->size;
    return YOLO_OK;
}

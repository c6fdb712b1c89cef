/* Folder or archive file access behind one interface (see vfs.h). */
#include "data/vfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/archive.h"
#include "data/fsutil.h"

struct yolo_vfs {
    yolo_archive *archive; /* NULL: real file system */
    char *top;             /* archive's single top folder, or "" */
};

static char *find_top_folder(const yolo_archive *a) {
    int64_t n = yolo_archive_count(a);
    if (n == 0)
        return strdup("");
    const char *first = yolo_archive_member_at(a, 0)->name;
    const char *slash = strchr(first, '/');
    if (!slash)
        return strdup("");
    size_t len = (size_t)(slash - first);
    for (int64_t i = 1; i < n; i++) {
        const char *name = yolo_archive_member_at(a, i)->name;
        if (strncmp(name, first, len + 1) != 0)
            return strdup("");
    }
    return strndup(first, len);
}

yolo_status yolo_vfs_open(const char *archive_path, yolo_vfs **out) {
    yolo_vfs *v = calloc(1, sizeof *v);
    if (!v)
        return yolo_error(YOLO_ERR_NOMEM, "vfs");
    if (archive_path) {
        yolo_status st = yolo_archive_open(archive_path, &v->archive);
        if (st != YOLO_OK) {
            free(v);
            return st;
        }
        v->top = find_top_folder(v->archive);
    } else {
        v->top = strdup("");
    }
    *out = v;
    return YOLO_OK;
}

void yolo_vfs_free(yolo_vfs *v) {
    if (!v)
        return;
    yolo_archive_close(v->archive);
    free(v->top);
    free(v);
}

bool yolo_vfs_is_archive(const yolo_vfs *v) { return v->archive != NULL; }
const char *yolo_vfs_name(const yolo_vfs *v) { return v->archive ? yolo_archive_path(v->archive) : ""; }
const char *yolo_vfs_top_folder(const yolo_vfs *v) { return v->top; }

/* Member names are stored without "./" and without a trailing "/". */
static char *clean(const char *path) {
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    if (strcmp(path, ".") == 0)
        path = "";
    size_t n = strlen(path);
    while (n > 0 && path[n - 1] == '/')
        n--;
    return strndup(path, n);
}

bool yolo_vfs_is_file(const yolo_vfs *v, const char *path) {
    if (!v->archive)
        return yolo_is_file(path);
    char *p = clean(path);
    bool found = p && yolo_archive_find(v->archive, p) >= 0;
    free(p);
    return found;
}

yolo_status yolo_vfs_optional_file(const yolo_vfs *v, const char *path, bool *exists) {
    *exists = false;
    if (v->archive) {
        if (yolo_vfs_is_file(v, path)) {
            *exists = true;
            return YOLO_OK;
        }
        return yolo_vfs_is_dir(v, path) ? yolo_error(YOLO_ERR_FORMAT, "%s: is a folder inside %s, not a label file",
                                                     path, yolo_archive_path(v->archive))
                                        : YOLO_OK;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISREG(st.st_mode)) {
            *exists = true;
            return YOLO_OK;
        }
        return yolo_error(YOLO_ERR_FORMAT, "%s: is %s, not a label file", path,
                          S_ISDIR(st.st_mode) ? "a folder" : "not a regular file");
    }
    int err = errno;
    if (err == ENOENT && lstat(path, &st) == 0)
        return yolo_error(YOLO_ERR_FORMAT, "%s: a symbolic link to nothing, not a label file", path);
    if (err == ENOENT || err == ENOTDIR)
        return YOLO_OK;
    return yolo_error(YOLO_ERR_IO, "%s: cannot examine the label file: %s%s", path, strerror(err),
                      err == ELOOP ? " (a symbolic link loop)" : "");
}

/* First member whose name is >= prefix (members are sorted). */
static int64_t lower_bound(const yolo_archive *a, const char *prefix) {
    int64_t lo = 0, hi = yolo_archive_count(a);
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (strcmp(yolo_archive_member_at(a, mid)->name, prefix) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static char *dir_prefix(const char *path) {
    char *p = clean(path);
    if (!p || !p[0])
        return p;
    size_t n = strlen(p);
    char *out = malloc(n + 2);
    if (out) {
        memcpy(out, p, n);
        out[n] = '/';
        out[n + 1] = 0;
    }
    free(p);
    return out;
}

bool yolo_vfs_is_dir(const yolo_vfs *v, const char *path) {
    if (!v->archive)
        return yolo_is_dir(path);
    char *prefix = dir_prefix(path);
    if (!prefix)
        return false;
    bool found;
    if (!prefix[0]) {
        found = true;
    } else {
        int64_t i = lower_bound(v->archive, prefix);
        found = i < yolo_archive_count(v->archive) &&
                strncmp(yolo_archive_member_at(v->archive, i)->name, prefix, strlen(prefix)) == 0;
    }
    free(prefix);
    return found;
}

yolo_status yolo_vfs_list(const yolo_vfs *v, const char *dir, char ***out, int64_t *n) {
    return yolo_vfs_walk(v, dir, out, n, NULL);
}

yolo_status yolo_vfs_walk(const yolo_vfs *v, const char *dir, char ***out, int64_t *n, yolo_walk_skips *skips) {
    if (!v->archive)
        return yolo_walk_files(dir, out, n, skips);
    if (skips)
        memset(skips, 0, sizeof *skips);
    char *prefix = dir_prefix(dir);
    if (!prefix)
        return yolo_error(YOLO_ERR_NOMEM, "listing %s", dir);
    size_t pl = strlen(prefix);
    int64_t first = lower_bound(v->archive, prefix), last = first, total = yolo_archive_count(v->archive);
    while (last < total && strncmp(yolo_archive_member_at(v->archive, last)->name, prefix, pl) == 0)
        last++;
    free(prefix);
    char **list = malloc(sizeof(char *) * (size_t)(last - first + 1));
    if (!list)
        return yolo_error(YOLO_ERR_NOMEM, "listing %s", dir);
    for (int64_t i = first; i < last; i++) {
        list[i - first] = strdup(yolo_archive_member_at(v->archive, i)->name);
        if (!list[i - first]) {
            yolo_free_strings(list, i - first);
            return yolo_error(YOLO_ERR_NOMEM, "listing %s", dir);
        }
    }
    *out = list;
    *n = last - first;
    return YOLO_OK;
}

yolo_status yolo_vfs_read(const yolo_vfs *v, const char *path, uint8_t **out, size_t *len) {
    if (!v->archive)
        return yolo_read_file(path, out, len);
    char *p = clean(path);
    int64_t i = p ? yolo_archive_find(v->archive, p) : -1;
    free(p);
    if (i < 0)
        return yolo_error(YOLO_ERR_IO, "%s: no member %s", yolo_archive_path(v->archive), path);
    return yolo_archive_read(v->archive, i, out, len);
}

uint64_t yolo_vfs_stamp(const yolo_vfs *v, const char *path) {
    if (v->archive) {
        char *p = clean(path);
        int64_t i = p ? yolo_archive_find(v->archive, p) : -1;
        free(p);
        if (i < 0)
            return 0;
        const yolo_archive_member *m = yolo_archive_member_at(v->archive, i);
        uint64_t h = yolo_hash64(0, &m->size, sizeof m->size);
        return yolo_hash64(h, &m->offset, sizeof m->offset);
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    uint64_t h = yolo_hash64(0, &st.st_size, sizeof st.st_size);
    return yolo_hash64(h, &st.st_mtim, sizeof st.st_mtim);
}

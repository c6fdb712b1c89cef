/* File and path helpers (see fsutil.h). */
#include "data/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

yolo_status yolo_read_file(const char *path, uint8_t **out, size_t *len) {
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return yolo_error(YOLO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return yolo_error(YOLO_ERR_IO, "%s: not a regular file", path);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return yolo_error(YOLO_ERR_NOMEM, "%s: %zu bytes", path, size);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != size) {
        free(buf);
        return yolo_error(YOLO_ERR_IO, "%s: short read (%zu of %zu bytes)", path, got, size);
    }
    buf[size] = 0;
    *out = buf;
    *len = size;
    return YOLO_OK;
}

static yolo_status write_file(const char *path, const void *data, size_t len, bool sync) {
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return yolo_error(YOLO_ERR_NOMEM, "path");
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        yolo_status st = yolo_error(YOLO_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return st;
    }
    const uint8_t *p = data;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    bool ok = done == len && (!sync || fsync(fd) == 0);
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        yolo_status st = yolo_error(YOLO_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return YOLO_OK;
}

yolo_status yolo_write_file(const char *path, const void *data, size_t len) { return write_file(path, data, len, true); }

yolo_status yolo_write_file_nosync(const char *path, const void *data, size_t len) {
    return write_file(path, data, len, false);
}

yolo_status yolo_mkdirs(const char *path) {
    char *p = strdup(path);
    if (!p)
        return yolo_error(YOLO_ERR_NOMEM, "path");
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == 0) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0755) != 0 && errno != EEXIST) {
                yolo_status st = yolo_error(YOLO_ERR_IO, "%s: cannot create folder: %s", p, strerror(errno));
                free(p);
                return st;
            }
            *s = c;
            if (c == 0)
                break;
        }
    }
    free(p);
    return yolo_is_dir(path) ? YOLO_OK : yolo_error(YOLO_ERR_IO, "%s: not a folder", path);
}

char *yolo_path_join(const char *a, const char *b) {
    if (b[0] == '/' || !a || !a[0])
        return strdup(b);
    size_t la = strlen(a);
    while (la > 1 && a[la - 1] == '/')
        la--;
    while (b[0] == '.' && b[1] == '/')
        b += 2;
    if (strcmp(b, ".") == 0)
        b = "";
    char *out = malloc(la + strlen(b) + 2);
    if (!out)
        return NULL;
    memcpy(out, a, la);
    if (b[0]) {
        out[la] = '/';
        strcpy(out + la + 1, b);
    } else {
        out[la] = 0;
    }
    return out;
}

char *yolo_path_dirname(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

const char *yolo_path_basename(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

bool yolo_path_has_ext(const char *path, const char *ext) {
    size_t lp = strlen(path), le = strlen(ext);
    return lp >= le && strcasecmp(path + lp - le, ext) == 0;
}

bool yolo_path_is_image(const char *path) {
    static const char *exts[] = {".bmp", ".dng", ".jpeg", ".jpg", ".mpo", ".png", ".tif", ".tiff", ".webp", ".pfm"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (yolo_path_has_ext(path, exts[i]))
            return true;
    return false;
}

bool yolo_path_is_video(const char *path) {
    static const char *exts[] = {".asf", ".avi", ".gif", ".m4v", ".mkv", ".mov", ".mp4", ".mpeg", ".mpg", ".ts",
                                 ".wmv", ".webm"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (yolo_path_has_ext(path, exts[i]))
            return true;
    return false;
}

bool yolo_path_is_archive(const char *path) {
    static const char *exts[] = {".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar.zst"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (yolo_path_has_ext(path, exts[i]))
            return true;
    return false;
}

char *yolo_label_path_for(const char *image_path) {
    size_t n = strlen(image_path);
    char *out = malloc(n + 8);
    if (!out)
        return NULL;
    strcpy(out, image_path);
    /* the last "/images/" ... */
    char *hit = NULL;
    for (char *p = strstr(out, "/images/"); p; p = strstr(p + 1, "/images/"))
        hit = p;
    if (hit)
        memcpy(hit, "/labels/", 8);
    else if (strncmp(out, "images/", 7) == 0) /* ... or a relative path starting there */
        memcpy(out, "labels/", 7);
    char *dot = strrchr(out, '.');
    char *slash = strrchr(out, '/');
    if (dot && (!slash || dot > slash))
        strcpy(dot, ".txt");
    else
        strcat(out, ".txt");
    return out;
}

bool yolo_is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool yolo_is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool yolo_dir_writable(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    if ((st.st_mode & 0222) == 0)
        return false;
    return access(path, W_OK) == 0;
}

char *yolo_cache_dir(void) {
    const char *env = getenv("YOLO_CACHE_DIR");
    if (env && env[0])
        return strdup(env);
    const char *home = getenv("HOME");
    if (home && home[0])
        return yolo_path_join(home, ".cache/yolo");
    return strdup("/tmp/yolo-cache");
}

uint64_t yolo_hash64(uint64_t h, const void *data, size_t len) {
    if (h == 0)
        h = 0xcbf29ce484222325ull;
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t yolo_hash_str(uint64_t h, const char *s) { return yolo_hash64(h, s, strlen(s) + 1); }

typedef struct string_list {
    char **v;
    int64_t n, cap;
} string_list;

static bool list_push(string_list *l, char *s) {
    if (!s)
        return false;
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 256;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) {
            free(s);
            return false;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return true;
}

static yolo_status walk(const char *dir, string_list *l, int depth) {
    if (depth > 64)
        return yolo_error(YOLO_ERR_IO, "%s: folders nested too deep (a symlink loop?)", dir);
    DIR *d = opendir(dir);
    if (!d)
        return yolo_error(YOLO_ERR_IO, "%s: cannot list: %s", dir, strerror(errno));
    struct dirent *e;
    yolo_status st = YOLO_OK;
    while (st == YOLO_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && e->d_name[2] == 0)))
            continue;
        char *full = yolo_path_join(dir, e->d_name);
        if (!full) {
            st = yolo_error(YOLO_ERR_NOMEM, "listing %s", dir);
            break;
        }
        struct stat sb;
        if (stat(full, &sb) != 0) {
            free(full); /* a dangling link: not a file */
            continue;
        }
        if (S_ISDIR(sb.st_mode)) {
            st = walk(full, l, depth + 1);
            free(full);
        } else if (S_ISREG(sb.st_mode)) {
            if (!list_push(l, full))
                st = yolo_error(YOLO_ERR_NOMEM, "listing %s", dir);
        } else {
            free(full);
        }
    }
    closedir(d);
    return st;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

yolo_status yolo_list_files(const char *dir, char ***out, int64_t *n) {
    string_list l = {0};
    yolo_status st = walk(dir, &l, 0);
    if (st != YOLO_OK) {
        yolo_free_strings(l.v, l.n);
        return st;
    }
    if (l.n)
        qsort(l.v, (size_t)l.n, sizeof *l.v, cmp_str);
    *out = l.v;
    *n = l.n;
    return YOLO_OK;
}

void yolo_free_strings(char **v, int64_t n) {
    for (int64_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

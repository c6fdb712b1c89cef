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

/* ---- walking a tree ------------------------------------------------------ */

typedef struct file_id {
    uint64_t dev, ino;
} file_id;

static bool same_id(file_id a, file_id b) { return a.dev == b.dev && a.ino == b.ino; }

/* Folders already walked: an open-addressing set of device + inode. */
typedef struct id_set {
    file_id *v;
    bool *used;
    size_t cap, n;
} id_set;

static size_t id_slot(const id_set *s, file_id id) {
    uint64_t h = (id.dev * 0x9e3779b97f4a7c15ull) ^ id.ino;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    size_t i = (size_t)h & (s->cap - 1);
    while (s->used[i] && !same_id(s->v[i], id))
        i = (i + 1) & (s->cap - 1);
    return i;
}

static bool id_set_has(const id_set *s, file_id id) { return s->cap && s->used[id_slot(s, id)]; }

/* Adds id; *added false when it was there. False only when out of memory. */
static bool id_set_add(id_set *s, file_id id, bool *added) {
    *added = false;
    if (id_set_has(s, id))
        return true;
    if (2 * (s->n + 1) > s->cap) { /* at most half full: short probes */
        id_set bigger = {NULL, NULL, s->cap ? 2 * s->cap : 64, 0};
        bigger.v = malloc(bigger.cap * sizeof *bigger.v);
        bigger.used = calloc(bigger.cap, 1);
        if (!bigger.v || !bigger.used) {
            free(bigger.v);
            free(bigger.used);
            return false;
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i]) {
                size_t j = id_slot(&bigger, s->v[i]);
                bigger.v[j] = s->v[i];
                bigger.used[j] = true;
            }
        bigger.n = s->n;
        free(s->v);
        free(s->used);
        *s = bigger;
    }
    size_t i = id_slot(s, id);
    s->v[i] = id;
    s->used[i] = true;
    s->n++;
    *added = true;
    return true;
}

/* A file found: links is how many symlinks its path goes through. */
typedef struct walk_file {
    char *path;
    file_id id;
    int links;
    int64_t index; /* yolo_files_once: the caller's position */
    bool repeat;   /* a path to a file already listed */
} walk_file;

/* A folder to walk; link: its own entry is a symlink. */
typedef struct walk_dir {
    char *path;
    file_id id;
    int depth, links;
    bool link;
} walk_dir;

typedef struct walker {
    const char *root;
    size_t root_len;
    walk_file *files;
    int64_t n_files, cap_files;
    walk_dir *todo; /* folders reached without a symlink of their own: walked first */
    int64_t n_todo, cap_todo;
    walk_dir *linked; /* symlinked folders, in the order met: walked once no other folder waits, so a
                         folder inside the tree is listed under its own path, not a link's */
    int64_t n_linked, cap_linked, next_linked;
    id_set seen;
    yolo_walk_skips *skips;
} walker;

/* Room for one more element in *v (doubling). */
static bool grow(void **v, int64_t n, int64_t *cap, size_t size) {
    if (n < *cap)
        return true;
    int64_t c = *cap ? *cap * 2 : 64;
    void *p = realloc(*v, (size_t)c * size);
    if (!p)
        return false;
    *v = p;
    *cap = c;
    return true;
}

static const char *relative(size_t root_len, const char *path) {
    return root_len && path[root_len] == '/' ? path + root_len + 1 : path;
}

static void skip_folder(walker *w, const walk_dir *d) {
    if (w->skips->folders++)
        return;
    const char *rel = relative(w->root_len, d->path);
    char target[200];
    ssize_t k = d->link ? readlink(d->path, target, sizeof target - 1) : -1;
    if (k >= 0) {
        target[k] = 0;
        snprintf(w->skips->folder_example, sizeof w->skips->folder_example, "%s -> %s", rel, target);
    } else {
        snprintf(w->skips->folder_example, sizeof w->skips->folder_example, "%s", rel);
    }
}

/* A path for a message: a long one keeps its first and last 400 bytes, so the
 * reason after it still fits the error message (2048 bytes). */
typedef struct short_path {
    char text[820];
} short_path;

static short_path for_message(const char *path) {
    short_path p;
    size_t n = strlen(path);
    if (n < sizeof p.text)
        snprintf(p.text, sizeof p.text, "%s", path);
    else
        snprintf(p.text, sizeof p.text, "%.400s...%s", path, path + n - 400);
    return p;
}

static int cmp_dir_path(const void *a, const void *b) {
    return strcmp(((const walk_dir *)a)->path, ((const walk_dir *)b)->path);
}

/* Queues the sub-folders of one folder (sorted, so which of two links to one
 * folder is walked does not depend on readdir's order). */
static yolo_status queue_folders(walker *w, walk_dir *subs, int64_t n) {
    if (n)
        qsort(subs, (size_t)n, sizeof *subs, cmp_dir_path);
    yolo_status st = YOLO_OK;
    for (int64_t i = 0; i < n; i++) {
        walk_dir *d = &subs[i];
        if (st != YOLO_OK) {
            free(d->path);
        } else if (id_set_has(&w->seen, d->id)) {
            skip_folder(w, d);
            free(d->path);
        } else if (d->depth > YOLO_WALK_MAX_DEPTH) {
            st = yolo_error(YOLO_ERR_IO, "%s: folders nested more than %d deep below %s; not listed",
                            for_message(d->path).text, YOLO_WALK_MAX_DEPTH, for_message(w->root).text);
            free(d->path);
        } else if (d->link ? grow((void **)&w->linked, w->n_linked, &w->cap_linked, sizeof *w->linked)
                           : grow((void **)&w->todo, w->n_todo, &w->cap_todo, sizeof *w->todo)) {
            if (d->link)
                w->linked[w->n_linked++] = *d;
            else
                w->todo[w->n_todo++] = *d;
        } else {
            st = yolo_error(YOLO_ERR_NOMEM, "listing %s", w->root);
            free(d->path);
        }
    }
    return st;
}

/* Reads one folder whole before going deeper: one folder open at a time. */
static yolo_status read_folder(walker *w, const walk_dir *d) {
    DIR *h = opendir(d->path);
    if (!h)
        return yolo_error(YOLO_ERR_IO, "%s: cannot list: %s", for_message(d->path).text, strerror(errno));
    walk_dir *subs = NULL;
    int64_t n_subs = 0, cap_subs = 0;
    yolo_status st = YOLO_OK;
    struct dirent *e;
    while (st == YOLO_OK && (e = readdir(h)) != NULL) {
        if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && e->d_name[2] == 0)))
            continue;
        struct stat sb;
        bool link = e->d_type == DT_LNK;
        if (e->d_type == DT_UNKNOWN) { /* file systems that do not say */
            if (fstatat(dirfd(h), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            link = S_ISLNK(sb.st_mode);
        }
        if (fstatat(dirfd(h), e->d_name, &sb, 0) != 0 || !(S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode)))
            continue; /* a dangling link, a link loop of its own (a -> a), a device */
        file_id id = {(uint64_t)sb.st_dev, (uint64_t)sb.st_ino};
        char *full = yolo_path_join(d->path, e->d_name);
        bool is_dir = S_ISDIR(sb.st_mode);
        if (!full || !(is_dir ? grow((void **)&subs, n_subs, &cap_subs, sizeof *subs)
                              : grow((void **)&w->files, w->n_files, &w->cap_files, sizeof *w->files))) {
            free(full);
            st = yolo_error(YOLO_ERR_NOMEM, "listing %s", d->path);
        } else if (is_dir) {
            subs[n_subs++] = (walk_dir){full, id, d->depth + 1, d->links + link, link};
        } else {
            w->files[w->n_files] = (walk_file){full, id, d->links + link, w->n_files, false};
            w->n_files++;
        }
    }
    closedir(h);
    for (int64_t i = 0; st != YOLO_OK && i < n_subs; i++)
        free(subs[i].path);
    if (st == YOLO_OK)
        st = queue_folders(w, subs, n_subs);
    free(subs);
    return st;
}

/* One file, several paths: the one with the fewest symlinks, then bytewise first, is kept. */
static int cmp_file_id(const void *a, const void *b) {
    const walk_file *x = a, *y = b;
    if (x->id.dev != y->id.dev)
        return x->id.dev < y->id.dev ? -1 : 1;
    if (x->id.ino != y->id.ino)
        return x->id.ino < y->id.ino ? -1 : 1;
    if (x->links != y->links)
        return x->links < y->links ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Sorts v by file and marks each repeat, counted into s (its example: the
 * bytewise first repeat, the same every run, unless s has one). */
static void mark_repeats(walk_file *v, int64_t n, size_t root_len, yolo_walk_skips *s) {
    if (n)
        qsort(v, (size_t)n, sizeof *v, cmp_file_id);
    bool fresh = !s->file_example[0];
    const char *example = NULL;
    for (int64_t i = 1, kept = 0; i < n; i++) {
        if (!same_id(v[i].id, v[kept].id)) {
            kept = i;
            continue;
        }
        s->files++;
        v[i].repeat = true;
        if (fresh && (!example || strcmp(v[i].path, example) < 0)) {
            example = v[i].path;
            snprintf(s->file_example, sizeof s->file_example, "%s: the same file as %s",
                     relative(root_len, v[i].path), relative(root_len, v[kept].path));
        }
    }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void free_walker(walker *w) {
    for (int64_t i = 0; i < w->n_files; i++)
        free(w->files[i].path);
    for (int64_t i = 0; i < w->n_todo; i++)
        free(w->todo[i].path);
    for (int64_t i = w->next_linked; i < w->n_linked; i++)
        free(w->linked[i].path);
    free(w->files);
    free(w->todo);
    free(w->linked);
    free(w->seen.v);
    free(w->seen.used);
}

/* The root's ancestors count as walked: a link up to one (train/a/b -> ../..)
 * loops back into the tree, and following it would list the folders beside
 * the root too. A parent that cannot be examined ends the climb. */
static bool mark_ancestors(walker *w, const char *root, file_id below) {
    char *up = yolo_path_join(root, "..");
    bool ok = up != NULL;
    struct stat sb;
    while (ok && stat(up, &sb) == 0) {
        file_id id = {(uint64_t)sb.st_dev, (uint64_t)sb.st_ino};
        bool added;
        if (same_id(id, below) || !(ok = id_set_add(&w->seen, id, &added)))
            break; /* "/.." is "/" */
        below = id;
        char *next = yolo_path_join(up, "..");
        free(up);
        ok = (up = next) != NULL;
    }
    free(up);
    return ok;
}

yolo_status yolo_walk_files(const char *dir, char ***out, int64_t *n, yolo_walk_skips *skips) {
    *out = NULL;
    *n = 0;
    yolo_walk_skips local;
    if (!skips)
        skips = &local;
    memset(skips, 0, sizeof *skips);
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return yolo_error(YOLO_ERR_IO, "%s: cannot list: %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return yolo_error(YOLO_ERR_IO, "%s: cannot list: not a folder", dir);
    char *root = yolo_path_join(dir, ""); /* as the paths below it begin: no trailing '/' */
    walker w = {.root = dir, .root_len = root ? strlen(root) : 0, .skips = skips};
    file_id root_id = {(uint64_t)sb.st_dev, (uint64_t)sb.st_ino};
    if (!root || !grow((void **)&w.todo, 0, &w.cap_todo, sizeof *w.todo) || !mark_ancestors(&w, root, root_id)) {
        free(root);
        free_walker(&w);
        return yolo_error(YOLO_ERR_NOMEM, "listing %s", dir);
    }
    w.todo[w.n_todo++] = (walk_dir){root, root_id, 0, 0, false};
    yolo_status st = YOLO_OK;
    while (st == YOLO_OK) {
        walk_dir d;
        if (w.n_todo)
            d = w.todo[--w.n_todo];
        else if (w.next_linked < w.n_linked)
            d = w.linked[w.next_linked++];
        else
            break;
        bool added;
        if (!id_set_add(&w.seen, d.id, &added))
            st = yolo_error(YOLO_ERR_NOMEM, "listing %s", dir);
        else if (!added) /* two links to one folder, both queued before either was walked */
            skip_folder(&w, &d);
        else
            st = read_folder(&w, &d);
        free(d.path);
    }
    char **list = NULL;
    if (st == YOLO_OK) {
        mark_repeats(w.files, w.n_files, w.root_len, skips);
        list = malloc((size_t)(w.n_files ? w.n_files : 1) * sizeof *list);
        if (!list)
            st = yolo_error(YOLO_ERR_NOMEM, "listing %s", dir);
    }
    int64_t k = 0;
    for (int64_t i = 0; st == YOLO_OK && i < w.n_files; i++) {
        if (w.files[i].repeat)
            free(w.files[i].path);
        else
            list[k++] = w.files[i].path;
        w.files[i].path = NULL;
    }
    free_walker(&w);
    if (st != YOLO_OK) {
        free(list);
        return st;
    }
    if (k)
        qsort(list, (size_t)k, sizeof *list, cmp_str);
    *out = list;
    *n = k;
    return YOLO_OK;
}

yolo_status yolo_list_files(const char *dir, char ***out, int64_t *n) { return yolo_walk_files(dir, out, n, NULL); }

yolo_status yolo_files_once(char *const *paths, int64_t n, bool *keep, yolo_walk_skips *skips) {
    yolo_walk_skips local = {0};
    if (!skips)
        skips = &local;
    walk_file *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return yolo_error(YOLO_ERR_NOMEM, "%lld paths", (long long)n);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        keep[i] = true;
        struct stat sb;
        bool link = lstat(paths[i], &sb) == 0 && S_ISLNK(sb.st_mode);
        if ((link && stat(paths[i], &sb) != 0) || (!link && lstat(paths[i], &sb) != 0))
            continue; /* its reader says what is wrong */
        v[m++] = (walk_file){paths[i], {(uint64_t)sb.st_dev, (uint64_t)sb.st_ino}, link, i, false};
    }
    mark_repeats(v, m, 0, skips);
    for (int64_t i = 0; i < m; i++)
        if (v[i].repeat)
            keep[v[i].index] = false;
    free(v);
    return YOLO_OK;
}

bool yolo_walk_skips_describe(const char *dir, const yolo_walk_skips *s, char *buf, size_t size) {
    if (size)
        buf[0] = 0;
    if (!s->folders && !s->files)
        return false;
    long long nd = (long long)s->folders, nf = (long long)s->files;
    char folders[400] = "", files[400] = "";
    if (nd)
        snprintf(folders, sizeof folders, "%lld symlinked folder%s that loop%s back into the tree or repeat%s one "
                 "already listed (%s)", nd, nd == 1 ? "" : "s", nd == 1 ? "s" : "", nd == 1 ? "s" : "",
                 s->folder_example);
    if (nf)
        snprintf(files, sizeof files, "%lld duplicate file%s (%s)", nf, nf == 1 ? "" : "s", s->file_example);
    snprintf(buf, size, "%s: skipped %s%s%s", dir, folders, nd && nf ? " and " : "", files);
    return true;
}

void yolo_free_strings(char **v, int64_t n) {
    for (int64_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* Shared by the resume tests (test_resume_exact, test_resume_errors,
 * test_finetune): running `yolo` in the background, watching a run's
 * files, and comparing checkpoints tensor by tensor. Header-only
 * (static functions marked unused). */
#ifndef YOLO_TEST_RESUME_UTIL_H
#define YOLO_TEST_RESUME_UTIL_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include "ckpt/ckpt_file.h"
#include "data/shapes.h"
#include "test_util.h"

#define RESUME_UNUSED __attribute__((unused))

/* snprintf for paths (a too long path is cut; the tests' paths are short). */
__attribute__((unused, format(printf, 3, 4))) static void resume_fmt(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

/* `$YOLO_BINARY_DIR/bin/yolo <args>` in `dir`, output to dir/<log>, in
 * the background; the pid is yolo's own (the shell execs it). */
RESUME_UNUSED static pid_t resume_spawn(const char *dir, const char *args, const char *log) {
    const char *bin = getenv("YOLO_BINARY_DIR");
    if (!bin) return -1;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && exec '%s/bin/yolo' %s > '%s' 2>&1", dir, bin, args, log);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Exit code, 128 + signal when killed by one, -1 on error. */
RESUME_UNUSED static int resume_wait(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

/* Whether the process has ended (then *code is as resume_wait's). */
RESUME_UNUSED static bool resume_ended(pid_t pid, int *code) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r != pid) return false;
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
    return true;
}

RESUME_UNUSED static double resume_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

RESUME_UNUSED static void resume_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Data rows of a CSV (lines after the header); -1 if missing. */
RESUME_UNUSED static int resume_csv_rows(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int lines = 0, c, last = '\n';
    while ((c = fgetc(f)) != EOF) {
        if (c == '\n') lines++;
        last = c;
    }
    if (last != '\n') lines++;
    fclose(f);
    return lines > 0 ? lines - 1 : 0;
}

/* Modification time in ns (-1 if missing). */
RESUME_UNUSED static long long resume_mtime(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return -1;
    return (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
}

RESUME_UNUSED static bool resume_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Whether `dir/name` contains `needle`. */
RESUME_UNUSED static bool resume_file_mentions(const char *dir, const char *name, const char *needle) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

/* Whether two files hold the same bytes. */
RESUME_UNUSED static bool resume_same_file(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = false;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* Whether two results.csv files are equal but for their time column (the
 * second: wall seconds, the one column equal runs do not share). */
RESUME_UNUSED static bool resume_same_results(const char *a, const char *b) {
    FILE *f[2] = {fopen(a, "r"), fopen(b, "r")};
    bool same = f[0] && f[1];
    char line[2][8192];
    while (same) {
        char *got[2] = {fgets(line[0], sizeof line[0], f[0]), fgets(line[1], sizeof line[1], f[1])};
        if (!got[0] || !got[1]) {
            same = !got[0] && !got[1];
            break;
        }
        char *rest[2];
        for (int i = 0; i < 2; i++) {
            char *c1 = strchr(line[i], ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
            rest[i] = c2 ? c2 : line[i];
            if (c1) c1[1] = '\0'; /* keep the epoch */
        }
        same = strcmp(line[0], line[1]) == 0 && strcmp(rest[0], rest[1]) == 0;
    }
    for (int i = 0; i < 2; i++)
        if (f[i]) fclose(f[i]);
    return same;
}

/* Whether the task plugin's table sets `.hooks` (training is built). */
RESUME_UNUSED static bool resume_plugin_has_hooks(const char *task) {
    const char *src = getenv("YOLO_SOURCE_DIR");
    if (!src) return false;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/plugins/%s", src, task);
    return resume_file_mentions(dir, "plugin.c", ".hooks");
}

/* Compares member `id` of two checkpoints tensor by tensor, bytes exact.
 * Returns the number of differing or missing tensors (prints the first
 * few), -1 if a file cannot be read or lacks the member. */
RESUME_UNUSED static int resume_compare_member(const yolo_ckpt *a, const yolo_ckpt *b, yolo_ckpt_blob_id id) {
    const yolo_st_file *fa = yolo_ckpt_get_blob(a, id), *fb = yolo_ckpt_get_blob(b, id);
    if (!fa || !fb) return -1;
    int bad = 0;
    if (yolo_st_count(fa) != yolo_st_count(fb)) {
        fprintf(stderr, "%s: %zu tensors vs %zu\n", yolo_ckpt_member_name(id), yolo_st_count(fa), yolo_st_count(fb));
        bad++;
    }
    for (size_t i = 0; i < yolo_st_count(fa); i++) {
        const yolo_st_tensor *ta = yolo_st_at(fa, i);
        const yolo_st_tensor *tb = yolo_st_find(fb, ta->name);
        bool same = tb && ta->dtype == tb->dtype && ta->nbytes == tb->nbytes &&
                    memcmp(ta->data, tb->data, ta->nbytes) == 0;
        if (!same && bad++ < 5)
            fprintf(stderr, "%s: tensor %s %s\n", yolo_ckpt_member_name(id), ta->name, tb ? "differs" : "missing");
    }
    return bad;
}

/* Last completed epoch of a checkpoint (-2 if it cannot be read). */
RESUME_UNUSED static long long resume_ckpt_epoch(const char *path, long long *sampler_batch) {
    yolo_ckpt *ck = NULL;
    if (yolo_ckpt_read(path, &ck) != YOLO_OK) return -2;
    long long e = (long long)yolo_ckpt_get_info(ck)->epoch;
    if (sampler_batch) *sampler_batch = (long long)yolo_ckpt_get_info(ck)->sampler_batch;
    yolo_ckpt_free(ck);
    return e;
}

/* Compares model, EMA and optimizer of two checkpoints; returns the number
 * of differences (-1 unreadable). */
RESUME_UNUSED static int resume_compare_ckpts(const char *pa, const char *pb) {
    yolo_ckpt *a = NULL, *b = NULL;
    int bad = -1;
    if (yolo_ckpt_read(pa, &a) != YOLO_OK) fprintf(stderr, "%s: %s\n", pa, yolo_last_error());
    else if (yolo_ckpt_read(pb, &b) != YOLO_OK) fprintf(stderr, "%s: %s\n", pb, yolo_last_error());
    else {
        bad = 0;
        for (int id = 0; id < YOLO_CKPT_BLOB_COUNT; id++) {
            int d = resume_compare_member(a, b, (yolo_ckpt_blob_id)id);
            if (d < 0) fprintf(stderr, "member %s missing\n", yolo_ckpt_member_name((yolo_ckpt_blob_id)id));
            bad += d < 0 ? 1 : d;
        }
        const yolo_ckpt_info *ia = yolo_ckpt_get_info(a), *ib = yolo_ckpt_get_info(b);
        if (ia->epoch != ib->epoch || ia->optimizer_steps != ib->optimizer_steps || ia->ema_updates != ib->ema_updates) {
            fprintf(stderr, "counters differ: epoch %lld/%lld, optimizer steps %lld/%lld, EMA updates %lld/%lld\n",
                    (long long)ia->epoch, (long long)ib->epoch, (long long)ia->optimizer_steps,
                    (long long)ib->optimizer_steps, (long long)ia->ema_updates, (long long)ib->ema_updates);
            bad++;
        }
    }
    yolo_ckpt_free(a);
    yolo_ckpt_free(b);
    return bad;
}

/* ---- small datasets cut from `shapes` (seconds per epoch) ---- */
static int resume_name_filter(const struct dirent *e) { return e->d_name[0] != '.'; }

RESUME_UNUSED static bool resume_copy_file(const char *from, const char *to, int remap_nc) {
    FILE *in = fopen(from, "rb");
    if (!in) return false;
    FILE *out = fopen(to, "wb");
    if (!out) {
        fclose(in);
        return false;
    }
    if (remap_nc > 0) { /* label rows: the class becomes (row + class) % remap_nc, so every class occurs */
        char line[4096];
        for (int row = 0; fgets(line, sizeof line, in); row++) {
            char *rest = NULL;
            long cls = strtol(line, &rest, 10);
            if (rest == line) continue;
            fprintf(out, "%ld%s", (row + cls) % remap_nc, rest);
        }
    } else {
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
    }
    fclose(in);
    return fclose(out) == 0;
}

/* Copies the first n entries (name order) of folder src into dst (created);
 * `labels`: the matching .txt of each image from labels_src instead. */
RESUME_UNUSED static bool resume_copy_first(const char *src, const char *dst, int n, const char *labels_src,
                                            const char *labels_dst, int remap_nc) {
    struct dirent **list = NULL;
    int count = scandir(src, &list, resume_name_filter, alphasort);
    if (count < 0) return false;
    mkdir(dst, 0777);
    if (labels_dst) mkdir(labels_dst, 0777);
    bool ok = true;
    for (int i = 0; i < count; i++) {
        if (i < n && ok) {
            char from[1200], to[1200];
            resume_fmt(from, sizeof from, "%s/%s", src, list[i]->d_name);
            resume_fmt(to, sizeof to, "%s/%s", dst, list[i]->d_name);
            ok = resume_copy_file(from, to, 0);
            char *dot = strrchr(list[i]->d_name, '.');
            if (ok && labels_src && dot) {
                *dot = '\0';
                resume_fmt(from, sizeof from, "%s/%s.txt", labels_src, list[i]->d_name);
                resume_fmt(to, sizeof to, "%s/%s.txt", labels_dst, list[i]->d_name);
                if (resume_exists(from)) ok = resume_copy_file(from, to, remap_nc);
            }
        }
        free(list[i]);
    }
    free(list);
    return ok;
}

/* A detection/segmentation dataset at dst (dst/data.yaml) holding the
 * first n_train / n_val images of `shapes`; remap_nc > 0 relabels it into
 * that many classes (names c0, c1, ...). */
RESUME_UNUSED static bool resume_shapes_subset(const char *dst, int n_train, int n_val, int remap_nc) {
    char *yaml = NULL, *cls = NULL;
    if (yolo_shapes_ensure(&yaml, &cls) != YOLO_OK) return false;
    char root[1024];
    resume_fmt(root, sizeof root, "%s", yaml);
    char *slash = strrchr(root, '/');
    if (slash) *slash = '\0';
    free(yaml);
    free(cls);
    char a[1200], b[1200], la[1200], lb[1200];
    mkdir(dst, 0777);
    resume_fmt(a, sizeof a, "%s/images", dst);
    mkdir(a, 0777);
    resume_fmt(a, sizeof a, "%s/labels", dst);
    mkdir(a, 0777);
    bool ok = true;
    const char *splits[2] = {"train", "val"};
    for (int s = 0; s < 2 && ok; s++) {
        resume_fmt(a, sizeof a, "%s/images/%s", root, splits[s]);
        resume_fmt(b, sizeof b, "%s/images/%s", dst, splits[s]);
        resume_fmt(la, sizeof la, "%s/labels/%s", root, splits[s]);
        resume_fmt(lb, sizeof lb, "%s/labels/%s", dst, splits[s]);
        ok = resume_copy_first(a, b, s == 0 ? n_train : n_val, la, lb, remap_nc);
    }
    resume_fmt(a, sizeof a, "%s/data.yaml", dst);
    FILE *f = ok ? fopen(a, "w") : NULL;
    if (!f) return false;
    fprintf(f, "path: %s\ntrain: images/train\nval: images/val\nnames:\n", dst);
    if (remap_nc > 0)
        for (int i = 0; i < remap_nc; i++) fprintf(f, "  %d: c%d\n", i, i);
    else
        fprintf(f, "  0: circle\n  1: rectangle\n  2: triangle\n");
    return fclose(f) == 0;
}

/* A classification folder at dst ({train,val}/<class>/) with the first
 * n_train / n_val images of each of the first n_classes (<= 3) classes of
 * `shapes`. */
RESUME_UNUSED static bool resume_shapes_classify_classes(const char *dst, int n_train, int n_val, int n_classes) {
    char *yaml = NULL, *cls = NULL;
    if (yolo_shapes_ensure(&yaml, &cls) != YOLO_OK) return false;
    static const char *const classes[3] = {"circle", "rectangle", "triangle"};
    const char *splits[2] = {"train", "val"};
    char a[1200], b[1200];
    mkdir(dst, 0777);
    bool ok = true;
    for (int s = 0; s < 2 && ok; s++) {
        resume_fmt(b, sizeof b, "%s/%s", dst, splits[s]);
        mkdir(b, 0777);
        for (int c = 0; c < n_classes && c < 3 && ok; c++) {
            resume_fmt(a, sizeof a, "%s/%s/%s", cls, splits[s], classes[c]);
            resume_fmt(b, sizeof b, "%s/%s/%s", dst, splits[s], classes[c]);
            ok = resume_copy_first(a, b, s == 0 ? n_train : n_val, NULL, NULL, 0);
        }
    }
    free(yaml);
    free(cls);
    return ok;
}

RESUME_UNUSED static bool resume_shapes_classify_subset(const char *dst, int n_train, int n_val) {
    return resume_shapes_classify_classes(dst, n_train, n_val, 3);
}

#endif

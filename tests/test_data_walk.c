/* File-system walks that terminate (issue 41): image discovery visits each
 * real file once and never follows a folder link back into its own tree.
 *   - a detect split with `loop -> .`, `a/b -> ../..` (up to the root's
 *     parent), a file link to an image already there, links to a folder
 *     and a file outside (followed), a second link to that folder and a
 *     link from it back into the tree: exact image counts, one warning;
 *   - two loops side by side (exponential before), a thousand of them;
 *   - classification class folders with a loop, a txt list naming one
 *     image three ways, a pattern matching one file twice;
 *   - bounds: folders nested past YOLO_WALK_MAX_DEPTH are refused naming
 *     the path; thousands of files in one folder; listing errors name the path;
 *   - `yolo detect predict` on a looped folder and pattern: the right
 *     count, and it ends.
 * Each case must finish in under 10 s. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "data/dataset.h"
#include "data/fsutil.h"
#include "data/vfs.h"
#include "test_util.h"

static char root[256];
static char warned[8192];

static char *at(const char *rel) { return yolo_path_join(root, rel); }

/* yolo_walk_files of root/rel. */
static yolo_status walk(const char *rel, char ***files, int64_t *n, yolo_walk_skips *skips) {
    char *dir = at(rel);
    yolo_status st = dir ? yolo_walk_files(dir, files, n, skips) : YOLO_ERR_NOMEM;
    free(dir);
    return st;
}
static void write_jpeg(const char *rel, unsigned seed) { test_write_jpeg(root, rel, 48, 32, seed); }

static void link_at(const char *target, const char *rel) {
    char *path = at(rel);
    CHECK_MSG(path && symlink(target, path) == 0, "symlink %s -> %s", rel, target);
    free(path);
}

static void mkdir_at(const char *rel) {
    char *path = at(rel);
    CHECK_MSG(path && yolo_mkdirs(path) == YOLO_OK, "%s", yolo_last_error());
    free(path);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Makes a case's files (make may be NULL), then runs it, checking it ends
 * within 10 s (a loop would not end at all). */
static void timed(const char *name, void (*make)(void), void (*fn)(void)) {
    if (make) make();
    double t0 = now();
    fn();
    double s = now() - t0;
    printf("%s: %.2f s\n", name, s);
    CHECK_MSG(s < 10.0, "%s took %.1f s", name, s);
}

static bool listed(char **files, int64_t n, const char *suffix) {
    size_t ls = strlen(suffix);
    for (int64_t i = 0; i < n; i++) {
        size_t lf = strlen(files[i]);
        if (lf >= ls && strcmp(files[i] + lf - ls, suffix) == 0 && files[i][lf - ls - 1] == '/') return true;
    }
    return false;
}

static yolo_dataset *open_split(const char *data, unsigned needs, yolo_data_config *cfg) {
    char *path = at(data);
    yolo_dataset *ds = NULL;
    yolo_status st = yolo_data_config_load(path, needs, cfg);
    CHECK_MSG(st == YOLO_OK, "%s: %s", data, yolo_last_error());
    yolo_data_spec spec = {needs, NULL, NULL};
    yolo_dataset_options opt = {.no_cache = true};
    if (st == YOLO_OK && yolo_dataset_open(cfg, YOLO_SPLIT_TRAIN, &spec, &opt, &ds) != YOLO_OK)
        CHECK_MSG(0, "%s: open: %s", data, yolo_last_error());
    free(path);
    return ds;
}

/* det/images/train: a b c d.jpg (labelled), loop -> ., a/b -> ../.., dup.jpg -> a.jpg,
 * ext -> ../../../outside (e.jpg, and back -> the split), ext2 -> the same, f.jpg -> outside f.jpg. */
static void make_looped_split(void) {
    const char *stems[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        char rel[96];
        snprintf(rel, sizeof rel, "det/images/train/%s.jpg", stems[i]);
        write_jpeg(rel, (unsigned)i);
        snprintf(rel, sizeof rel, "det/labels/train/%s.txt", stems[i]);
        test_write_text(root, rel, "0 0.5 0.5 0.4 0.4\n");
    }
    write_jpeg("outside/e.jpg", 7);
    write_jpeg("elsewhere/f.jpg", 8);
    test_write_text(root, "det.yaml", "path: det\ntrain: images/train\nval: images/train\nnames: [x]\n");
    mkdir_at("det/images/train/a");
    link_at(".", "det/images/train/loop");
    link_at("../..", "det/images/train/a/b");
    link_at("a.jpg", "det/images/train/dup.jpg");
    link_at("../../../outside", "det/images/train/ext");
    link_at("../../../outside", "det/images/train/ext2");
    link_at("../det/images/train", "outside/back");
    link_at("../../../elsewhere/f.jpg", "det/images/train/f.jpg");
}

static const char *folders_line = "skipped 4 symlinked folders that loop back into the tree or repeat one already "
                                  "listed (loop -> .) and 1 duplicate file (dup.jpg: the same file as a.jpg)";

static void test_walk_rule(void) {
    char **files = NULL;
    int64_t n = 0;
    yolo_walk_skips skips;
    CHECK_MSG(walk("det/images/train", &files, &n, &skips) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(n == 6, "%lld files listed", (long long)n);
    const char *want[] = {"a.jpg", "b.jpg", "c.jpg", "d.jpg", "ext/e.jpg", "f.jpg"};
    for (int i = 0; i < 6; i++) CHECK_MSG(listed(files, n, want[i]), "%s not listed", want[i]);
    for (int64_t i = 1; i < n; i++) CHECK(strcmp(files[i - 1], files[i]) < 0);
    CHECK_MSG(skips.folders == 4 && skips.files == 1, "%lld folders, %lld files skipped", (long long)skips.folders,
              (long long)skips.files);
    char line[1200];
    CHECK(yolo_walk_skips_describe("images/train", &skips, line, sizeof line));
    CHECK_MSG(strncmp(line, "images/train: ", 14) == 0 && strcmp(line + 14, folders_line) == 0, "%s", line);
    yolo_free_strings(files, n);
    /* a walk that skips nothing says nothing */
    CHECK(walk("elsewhere", &files, &n, &skips) == YOLO_OK && n == 1);
    CHECK(!yolo_walk_skips_describe("elsewhere", &skips, line, sizeof line) && !line[0]);
    yolo_free_strings(files, n);
    /* yolo_list_files and the folder vfs walk by the same rule */
    char *dir = at("det/images/train");
    CHECK(yolo_list_files(dir, &files, &n) == YOLO_OK && n == 6);
    yolo_free_strings(files, n);
    yolo_vfs *vfs = NULL;
    CHECK(yolo_vfs_open(NULL, &vfs) == YOLO_OK);
    CHECK(vfs && yolo_vfs_list(vfs, dir, &files, &n) == YOLO_OK && n == 6);
    yolo_free_strings(files, n);
    yolo_vfs_free(vfs);
    free(dir);
}

static void test_detect_dataset(void) {
    warned[0] = 0;
    yolo_data_config cfg;
    yolo_dataset *ds = open_split("det.yaml", YOLO_NEED_BOXES, &cfg);
    CHECK_MSG(ds && ds->n == 6 && ds->stats.backgrounds == 2, "%lld images, %lld backgrounds",
              ds ? (long long)ds->n : -1LL, ds ? (long long)ds->stats.backgrounds : -1LL);
    CHECK_MSG(strstr(warned, "det/images/train: ") && strstr(warned, folders_line), "warnings: %s", warned);
    for (int64_t i = 0; ds && i < ds->n; i++)
        CHECK_MSG(!strstr(ds->samples[i].path, "/loop/") && !strstr(ds->samples[i].path, "/ext2/"), "%s",
                  ds->samples[i].path);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
}

/* Two loops side by side: 2^40 paths before; a thousand: one pass. */
static void make_many_loops(void) {
    write_jpeg("loops/images/train/x.jpg", 1);
    link_at(".", "loops/images/train/l1");
    link_at(".", "loops/images/train/l2");
    mkdir_at("loops/images/train/many");
    for (int i = 0; i < 1000; i++) {
        char rel[96];
        snprintf(rel, sizeof rel, "loops/images/train/many/up%04d", i);
        link_at("..", rel);
    }
}

static void test_many_loops(void) {
    char **files = NULL;
    int64_t n = 0;
    yolo_walk_skips skips;
    CHECK_MSG(walk("loops/images/train", &files, &n, &skips) == YOLO_OK, "%s", yolo_last_error());
    CHECK_MSG(n == 1 && skips.folders == 1002 && skips.files == 0, "%lld files, %lld folders skipped", (long long)n,
              (long long)skips.folders);
    CHECK_MSG(!strcmp(skips.folder_example, "l1 -> ."), "%s", skips.folder_example);
    yolo_free_strings(files, n);
}

/* Class folders: cat/loop -> .. would have listed every class again below cat. */
static void test_class_folders(void) {
    write_jpeg("cls/train/cat/1.jpg", 1);
    write_jpeg("cls/train/cat/2.jpg", 2);
    write_jpeg("cls/train/dog/3.jpg", 3);
    write_jpeg("cls/val/cat/4.jpg", 4);
    write_jpeg("cls/val/dog/5.jpg", 5);
    link_at("..", "cls/train/cat/loop");
    link_at("1.jpg", "cls/train/cat/again.jpg");
    warned[0] = 0;
    yolo_data_config cfg;
    yolo_dataset *ds = open_split("cls", YOLO_NEED_IMAGE_CLASS, &cfg);
    CHECK_MSG(cfg.nc == 2, "%d classes", cfg.nc);
    CHECK_MSG(ds && ds->n == 3 && ds->stats.corrupt == 0, "%lld images", ds ? (long long)ds->n : -1LL);
    CHECK_MSG(strstr(warned, "cls/train: skipped 1 symlinked folder that loops back into the tree or repeats one "
                             "already listed (cat/loop -> ..) and 1 duplicate file (cat/again.jpg: the same file as "
                             "cat/1.jpg)"), "warnings: %s", warned);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
}

/* A list file naming one image three ways, and a second entry walking the same folder. */
static void test_list_and_entries(void) {
    write_jpeg("lst/images/p.jpg", 1);
    write_jpeg("lst/images/q.jpg", 2);
    link_at("p.jpg", "lst/images/p2.jpg");
    test_write_text(root, "lst/train.txt", "images/p.jpg\n./images/p.jpg\nimages/p2.jpg\nimages/q.jpg\n");
    test_write_text(root, "lst.yaml", "path: lst\ntrain: train.txt\nval: train.txt\nnames: [x]\n");
    link_at("images", "lst/same");
    test_write_text(root, "two.yaml", "path: lst\ntrain: [images, same]\nval: images\nnames: [x]\n");
    warned[0] = 0;
    yolo_data_config cfg;
    yolo_dataset *ds = open_split("lst.yaml", YOLO_NEED_BOXES, &cfg);
    CHECK_MSG(ds && ds->n == 2, "list: %lld images", ds ? (long long)ds->n : -1LL);
    CHECK_MSG(strstr(warned, "train split: skipped 1 duplicate file ("), "warnings: %s", warned);
    CHECK_MSG(strstr(warned, "p2.jpg: the same file as ") && strstr(warned, "lst/images/p.jpg)"), "warnings: %s", warned);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
    warned[0] = 0;
    ds = open_split("two.yaml", YOLO_NEED_BOXES, &cfg);
    CHECK_MSG(ds && ds->n == 2, "two entries: %lld images", ds ? (long long)ds->n : -1LL);
    CHECK_MSG(strstr(warned, "train split: skipped 2 duplicate files"), "warnings: %s", warned);
    yolo_dataset_free(ds);
    yolo_data_config_free(&cfg);
    /* yolo_files_once keeps what it cannot examine, for its reader to name */
    char *paths[3] = {at("lst/images/q.jpg"), at("lst/images/none.jpg"), at("lst/same/q.jpg")};
    bool keep[3];
    yolo_walk_skips skips = {0};
    CHECK(yolo_files_once(paths, 3, keep, &skips) == YOLO_OK);
    CHECK(keep[0] && keep[1] && !keep[2] && skips.files == 1);
    for (int i = 0; i < 3; i++) free(paths[i]);
}

/* Deep trees: the limit is refused naming the path; one level less is listed. */
static void test_depth(void) {
    char rel[1024] = "deep";
    for (int i = 0; i < YOLO_WALK_MAX_DEPTH; i++) strcat(rel, "/d");
    strcat(rel, "/x.jpg");
    write_jpeg(rel, 1);
    char **files = NULL;
    int64_t n = 0;
    CHECK_MSG(walk("deep", &files, &n, NULL) == YOLO_OK && n == 1, "depth %d: %s", YOLO_WALK_MAX_DEPTH,
              yolo_last_error());
    yolo_free_strings(files, n);
    CHECK(walk("deep/d", &files, &n, NULL) == YOLO_OK && n == 1);
    yolo_free_strings(files, n);
    mkdir_at("deep2/d");
    link_at("../../deep", "deep2/d/in"); /* one more level, through a link */
    CHECK(walk("deep2", &files, &n, NULL) == YOLO_ERR_IO && files == NULL && n == 0);
    CHECK_MSG(test_error_mentions("deep2/d/in/d/") && test_error_mentions("folders nested more than 64 deep below") &&
              test_error_mentions("not listed"), "%s", yolo_last_error());
}

/* WIDE entries in one folder: listed whole and sorted, one folder open at a
 * time and no recursion per entry (more would mostly time the file system
 * making them: about 0.5 ms each on a busy test machine). */
enum { WIDE = 5000 };
static void make_wide(void) {
    mkdir_at("wide");
    char *dir = at("wide");
    for (int i = 0; i < WIDE; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%05d.jpg", dir, i);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) fclose(f);
    }
    free(dir);
}

static void test_wide(void) {
    char **files = NULL;
    int64_t n = 0;
    CHECK(walk("wide", &files, &n, NULL) == YOLO_OK && n == WIDE);
    char last[32];
    snprintf(last, sizeof last, "/%05d.jpg", WIDE - 1);
    CHECK(n == WIDE && strstr(files[0], "/00000.jpg") && strstr(files[WIDE - 1], last));
    yolo_free_strings(files, n);
}

/* Listing errors name the path. */
static void test_errors(void) {
    char **files = (char **)1;
    int64_t n = 1;
    CHECK(walk("no-such-folder", &files, &n, NULL) == YOLO_ERR_IO && files == NULL && n == 0);
    CHECK_MSG(test_error_mentions("no-such-folder: cannot list"), "%s", yolo_last_error());
    CHECK(walk("outside/e.jpg", &files, &n, NULL) == YOLO_ERR_IO);
    CHECK_MSG(test_error_mentions("outside/e.jpg: cannot list: not a folder"), "%s", yolo_last_error());
    /* a folder whose path outgrows PATH_MAX cannot be opened, even by root: 20 levels of 250-byte names */
    char *base = at("long");
    CHECK(base && yolo_mkdirs(base) == YOLO_OK);
    int back = open(".", O_RDONLY | O_DIRECTORY);
    bool made = back >= 0 && chdir(base) == 0;
    char name[251];
    memset(name, 'n', 250);
    name[250] = 0;
    for (int i = 0; made && i < 20; i++) made = mkdir(name, 0755) == 0 && chdir(name) == 0;
    CHECK(made && back >= 0 && fchdir(back) == 0);
    if (back >= 0) close(back);
    free(base);
    CHECK(walk("long", &files, &n, NULL) == YOLO_ERR_IO && files == NULL && n == 0);
    CHECK_MSG(test_error_mentions("/nnnnnnnnnn") && test_error_mentions("n...n") &&
              test_error_mentions(": cannot list: File name too long"), "%s",
              yolo_last_error());
    if (geteuid() == 0) return; /* root opens any folder */
    mkdir_at("shut/inner");
    char *inner = at("shut/inner");
    chmod(inner, 0);
    CHECK(walk("shut", &files, &n, NULL) == YOLO_ERR_IO);
    CHECK_MSG(test_error_mentions("shut/inner: cannot list"), "%s", yolo_last_error());
    chmod(inner, 0755);
    free(inner);
}

/* `yolo detect predict` on the looped folder and on a pattern matching one image twice. */
static char log_text[1 << 16];
static int predict(const char *source) {
    char args[512];
    snprintf(args, sizeof args, "detect predict model=yolov8n.yaml source=%s imgsz=32 save=False", source);
    int rc = test_run_yolo(root, args);
    char *log = at("log.txt"), *text = log ? test_read_text(log) : NULL;
    snprintf(log_text, sizeof log_text, "%s", text ? text : "(no log.txt)");
    free(text);
    free(log);
    return rc;
}

static void test_cli_predict(void) {
    int rc = predict("det/images/train");
    CHECK_MSG(rc == 0 && strstr(log_text, "6 images predicted, 0 skipped"), "exit %d:\n%s", rc, log_text);
    CHECK_MSG(strstr(log_text, "WARNING: source=det/images/train: skipped 4 symlinked folders") &&
              strstr(log_text, "1 duplicate file (dup.jpg: the same file as a.jpg)"), "%s", log_text);
    rc = predict("'loops/images/train/*/x.jpg'"); /* l1/x.jpg and l2/x.jpg: train/x.jpg twice */
    CHECK_MSG(rc == 0 && strstr(log_text, "1 images predicted"), "exit %d:\n%s", rc, log_text);
    rc = predict("'det/images/train/*.jpg'"); /* dup.jpg is a.jpg */
    CHECK_MSG(rc == 0 && strstr(log_text, "5 images predicted") && strstr(log_text, "1 duplicate file"), "exit %d:\n%s",
              rc, log_text);
}

int main(void) {
    if (!test_temp_run_dir(root, sizeof root)) return test_skip("cannot make a temporary folder");
    test_capture_warnings(warned, sizeof warned);
    timed("walk rule", make_looped_split, test_walk_rule);
    timed("detect dataset", NULL, test_detect_dataset);
    timed("many loops", make_many_loops, test_many_loops);
    timed("class folders", NULL, test_class_folders);
    timed("list file and entries", NULL, test_list_and_entries);
    timed("depth", NULL, test_depth);
    timed("wide folder", make_wide, test_wide);
    timed("errors", NULL, test_errors);
    if (getenv("YOLO_BINARY_DIR"))
        timed("cli predict", NULL, test_cli_predict);
    else
        printf("cli predict: skipped (YOLO_BINARY_DIR is not set)\n");
    return test_result("test_data_walk");
}

/* Hostile inputs through the built `yolo` binary (issue 14): each case
 * must exit 1 or 2 (never a signal: test_run_yolo answers -1 for one) with
 * a message naming what was given, or succeed doing the right thing:
 *   - `yolo foo`, integers that would wrap (epochs, imgsz), nc: -3;
 *   - a model yaml without its task's head (refused at build time);
 *   - a run directory held by another process (flock, its pid named);
 *   - a dataset folder holding Ultralytics' train.cache trains and leaves
 *     it byte-identical, a label path that is a folder is named;
 *   - the checkpoint of a custom model predicts after its yaml is gone;
 *   - predict counts what it skipped (a text file named .jpg, a PNG that
 *     declares 20000x20000) and keeps both outputs of a/x.jpg and b/x.jpg. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/fsutil.h"
#include "test_util.h"

static char dir[512];
static char log_text[1 << 17];

static void write_text(const char *rel, const char *text) { test_write_text(dir, rel, text); }
static void write_jpeg(const char *rel, unsigned seed) { test_write_jpeg(dir, rel, 64, 48, seed); }
static bool file_exists(const char *rel) { return test_file_exists(dir, rel); }

/* Runs yolo in dir; the exit code must be `want` and the log hold every needle. */
static void expect(int line, const char *args, int want, const char *const *needles) {
    int rc = test_run_yolo(dir, args);
    char *log = yolo_path_join(dir, "log.txt");
    FILE *f = fopen(log, "rb");
    size_t n = f ? fread(log_text, 1, sizeof log_text - 1, f) : 0;
    log_text[n] = 0;
    if (f) fclose(f);
    free(log);
    if (rc != want) {
        fprintf(stderr, "test_cli_hostile.c:%d: yolo %s: exit %d (-1: a signal), expected %d\n%s\n", line, args, rc,
                want, log_text);
        test_failures++;
    }
    for (int i = 0; needles[i]; i++)
        if (!strstr(log_text, needles[i])) {
            fprintf(stderr, "test_cli_hostile.c:%d: yolo %s: output lacks '%s':\n%s\n", line, args, needles[i], log_text);
            test_failures++;
        }
}
#define EXPECT(args, want, ...) expect(__LINE__, (args), (want), (const char *const[]){__VA_ARGS__, NULL})

static const char *tiny_model =
    "nc: 2\n"
    "backbone:\n"
    "  - [-1, 1, Conv, [8, 3, 2]]\n"
    "  - [-1, 1, Conv, [16, 3, 2]]\n"
    "  - [-1, 1, Conv, [16, 3, 2]]\n"
    "  - [-1, 1, Conv, [16, 3, 2]]\n"
    "  - [-1, 1, Conv, [16, 3, 2]]\n"
    "head:\n"
    "  - [[2, 3, 4], 1, Detect, [nc]]\n";

static void make_fixture(void) {
    write_text("fix.yaml", "path: fix\ntrain: images/train\nval: images/train\nnames: [a, b]\n");
    for (unsigned i = 0; i < 4; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "fix/images/train/im%u.jpg", i);
        write_jpeg(rel, i);
        snprintf(rel, sizeof rel, "fix/labels/train/im%u.txt", i);
        write_text(rel, i % 2 ? "0 0.5 0.5 0.4 0.3\n" : "1 0.3 0.4 0.2 0.2\n0 0.7 0.6 0.3 0.3\n");
    }
    write_jpeg("fix/images/train/folder.jpg", 9);
    char *folder = yolo_path_join(dir, "fix/labels/train/folder.txt");
    yolo_mkdirs(folder);
    free(folder);
    write_text("fix/labels/train.cache", "\x93NUMPY Ultralytics' own cache: any bytes");
    write_text("mynet.yaml", tiny_model);
    char *nohead = strdup(tiny_model);
    *strstr(nohead, "head:") = 0; /* backbone only */
    write_text("nohead.yaml", nohead);
    free(nohead);
    write_text("negnc.yaml", "path: fix\ntrain: images/train\nnc: -3\n");
}

static void test_messages(void) {
    EXPECT("foo", 2, "'foo' is not a mode");
    EXPECT("train data=fix.yaml model=mynet.yaml epochs=4294967297", 2, "epochs=4294967297", "out of range",
           "integers must be within");
    EXPECT("train data=fix.yaml model=mynet.yaml imgsz=4294967328", 2, "imgsz=4294967328", "out of range");
    EXPECT("train data=fix.yaml model=mynet.yaml imgsz=100000", 2, "imgsz=100000", "[32, 16384]");
    EXPECT("train data=negnc.yaml model=mynet.yaml", 2, "negnc.yaml:3: nc: -3 is outside [1, 65536]");
    EXPECT("train data=fix.yaml model=nohead.yaml epochs=1 imgsz=32", 2, "nohead.yaml", "not a detect head",
           "Detect");
}

static void test_run_dir_lock(void) {
    char *locked = yolo_path_join(dir, "runs/locked");
    yolo_mkdirs(locked);
    char lock_path[700];
    snprintf(lock_path, sizeof lock_path, "%s/.yolo-run.lock", locked);
    int fd = open(lock_path, O_RDWR | O_CREAT, 0644);
    CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0);
    char pid[32], needle[64];
    snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    CHECK(write(fd, pid, strlen(pid)) == (ssize_t)strlen(pid));
    snprintf(needle, sizeof needle, "(pid %ld)", (long)getpid());
    EXPECT("train data=fix.yaml model=mynet.yaml epochs=1 imgsz=32 batch=2 workers=0 project=runs name=locked "
           "exist_ok=True", 2, "runs/locked is in use by another yolo process", needle);
    close(fd);
    free(locked);
}

/* 20000x20000 declared by a 45-byte PNG (an empty IDAT). */
static void write_png_bomb(const char *rel) {
    static const uint8_t png[45] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                    0, 0, 0x4e, 0x20, 0, 0, 0x4e, 0x20, 8, 2, 0, 0, 0, 0x6c, 0x12, 0xd1, 0x6e,
                                    0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    test_write_file(dir, rel, png, sizeof png);
}

static void test_train_then_predict(void) {
    const char *cache = "\x93NUMPY Ultralytics' own cache: any bytes";
    EXPECT("train data=fix.yaml model=mynet.yaml epochs=1 imgsz=32 batch=2 workers=0 project=runs name=t",
           0, "fix/labels/train/folder.txt: is a folder, not a label file");
    size_t n = 0;
    uint8_t *b = test_read_file(dir, "fix/labels/train.cache", &n);
    CHECK(b && n == strlen(cache) && memcmp(b, cache, n) == 0);
    free(b);
    CHECK(file_exists("fix/labels/train.yolo-cache"));
    CHECK(file_exists("runs/t/weights/last.ckpt"));
    /* the custom yaml goes away: the checkpoint carries it */
    char *yaml = yolo_path_join(dir, "mynet.yaml");
    unlink(yaml);
    free(yaml);
    write_jpeg("src/a/x.jpg", 1);
    write_jpeg("src/b/x.jpg", 2);
    write_text("src/fake.jpg", "this is text, not an image");
    write_png_bomb("src/bomb.png");
    EXPECT("predict model=runs/t/weights/last.ckpt source=src imgsz=32 save_txt=True project=runs name=p", 0,
           "2 images predicted, 2 skipped", "fake.jpg: not an image", "bomb.png: image of 20000x20000",
           "pixel limit", "share the name 'x'");
    CHECK(file_exists("runs/p/labels/x.txt") && file_exists("runs/p/labels/x_2.txt"));
    CHECK(file_exists("runs/p/x.jpg") && file_exists("runs/p/x_2.jpg")); /* each picture named as its labels */
}

int main(void) {
    if (!getenv("YOLO_BINARY_DIR")) return test_skip("YOLO_BINARY_DIR is not set");
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("cannot make a temporary folder");
    char cache[600];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", cache, 1);
    make_fixture();
    test_messages();
    test_run_dir_lock();
    test_train_then_predict();
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!test_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_result("test_cli_hostile");
}

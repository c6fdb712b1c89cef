/* `yolo val save_txt=True` (issue 14): Ultralytics' validators write
 * <val run>/labels/<image stem>.txt with the predictions of each image in
 * Results.save_txt's format, through the same predict hook as `yolo
 * predict`. On a tiny model trained one epoch (conf lowered so it
 * predicts something):
 *   detect    "cls cx cy w h" rows normalized to the original image, a 6th
 *             column (the confidence, in (0, 1]) with save_conf=True;
 *   segment   "cls x1 y1 x2 y2 ..." polygon rows (an odd count of fields);
 *   classify  min(5, nc) "conf name" rows, confidences descending;
 * and a labels path that cannot be made is an error naming it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static char dir[512];

static void fixture(void) {
    test_write_tiny_models(dir);
    for (unsigned i = 0; i < 4; i++) {
        char rel[128];
        test_write_tiny_sample(dir, (int)i, 64, 48);
        for (int split = 0; split < 2; split++) {
            snprintf(rel, sizeof rel, "classes/%s/%s/c%u.jpg", split ? "val" : "train", i % 2 ? "cat" : "dog", i);
            test_write_jpeg(dir, rel, 64, 48, i + 10 * (unsigned)split);
        }
    }
}

static void run_ok(const char *args) {
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "yolo %s exited %d (see %s/log.txt)", args, rc, dir);
}

/* Checks every row of labels file rel: `fields` per row (0: odd, >= 7),
 * numbers parsed; returns the rows (-1: no file). */
static int check_rows(const char *rel, int fields, bool classify) {
    size_t len = 0;
    char *text = (char *)test_read_file(dir, rel, &len);
    if (!text) {
        CHECK_MSG(0, "%s/%s missing", dir, rel);
        return -1;
    }
    int rows = 0;
    double last_conf = 2;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), rows++) {
        double v[4096];
        int n = 0;
        char *end = line;
        while (n < 4096) {
            char *p = end;
            double x = strtod(p, &end);
            if (end == p) break;
            v[n++] = x;
        }
        if (classify) { /* "0.73 cat" */
            CHECK_MSG(n == 1 && v[0] >= 0 && v[0] <= 1 && v[0] <= last_conf && (strstr(end, "cat") || strstr(end, "dog")),
                      "%s: classify row '%s'", rel, line);
            last_conf = v[0];
            continue;
        }
        bool ok = fields ? n == fields : n >= 7 && n % 2 == 1;
        ok = ok && (v[0] == 0 || v[0] == 1);
        int coords = fields == 6 ? 4 : fields ? fields - 1 : n - 1;
        for (int k = 1; k <= coords; k++) ok = ok && v[k] >= -1e-6 && v[k] <= 1 + 1e-6;
        if (fields == 6) ok = ok && v[5] > 0 && v[5] <= 1;
        CHECK_MSG(ok, "%s: row %d '%s' (%d fields, want %d)", rel, rows, line, n, fields);
    }
    free(text);
    return rows;
}

int main(void) {
    if (getenv("YOLO_SANITIZED")) return test_skip("end-to-end trainings: the Release run covers them");
    if (!test_temp_run_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    fixture();
    const char *train = "train epochs=1 batch=2 nbs=2 workers=1 val=False plots=False project=runs";
    char args[1024];
    snprintf(args, sizeof args, "detect %s imgsz=64 model=det.yaml data=boxes.yaml name=det", train);
    run_ok(args);
    snprintf(args, sizeof args, "segment %s imgsz=64 model=seg.yaml data=polys.yaml name=seg", train);
    run_ok(args);
    snprintf(args, sizeof args, "classify %s model=cls.yaml data=classes imgsz=32 name=cls", train);
    run_ok(args);

    const char *val = "val batch=2 workers=0 plots=False project=runs conf=0.00001 save_txt=True";
    snprintf(args, sizeof args, "detect %s model=runs/det/weights/last.ckpt data=boxes.yaml imgsz=64 name=v", val);
    run_ok(args);
    int rows = 0;
    for (int i = 0; i < 4; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "runs/v/labels/%d.txt", i);
        int r = check_rows(rel, 5, false);
        rows += r > 0 ? r : 0;
    }
    CHECK_MSG(rows > 0, "detect val save_txt: no rows at conf=1e-5");
    snprintf(args, sizeof args, "detect %s model=runs/det/weights/last.ckpt data=boxes.yaml imgsz=64 save_conf=True name=vc", val);
    run_ok(args);
    CHECK(check_rows("runs/vc/labels/1.txt", 6, false) == check_rows("runs/v/labels/1.txt", 5, false));

    snprintf(args, sizeof args, "segment %s model=runs/seg/weights/last.ckpt data=polys.yaml imgsz=64 name=vs", val);
    run_ok(args);
    for (int i = 0; i < 4; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "runs/vs/labels/%d.txt", i);
        check_rows(rel, 0, false);
    }

    snprintf(args, sizeof args, "classify %s model=runs/cls/weights/last.ckpt data=classes imgsz=32 name=vk", val);
    run_ok(args);
    CHECK_MSG(check_rows("runs/vk/labels/c0.txt", 0, true) == 2, "classify val: not 2 rows (nc 2)");
    CHECK(check_rows("runs/vk/labels/c3.txt", 0, true) == 2);

    /* rect=False given: square batches (Ultralytics' Model.val defaults rect to True) */
    snprintf(args, sizeof args, "detect %s model=runs/det/weights/last.ckpt data=boxes.yaml imgsz=64 rect=False name=sq",
             val);
    run_ok(args);
    char *sq = (char *)test_read_file(dir, "log.txt", &(size_t){0});
    CHECK_MSG(sq && strstr(sq, "rect=False: 64x64 letterboxed batches"), "val rect=False: %s", sq ? sq : "");
    free(sq);

    /* labels/ is a file: the error names it */
    test_write_text(dir, "runs/bad/labels", "not a folder\n");
    snprintf(args, sizeof args, "detect %s model=runs/det/weights/last.ckpt data=boxes.yaml imgsz=64 name=bad exist_ok=True", val);
    int rc = test_run_yolo(dir, args);
    size_t len = 0;
    char *log = (char *)test_read_file(dir, "log.txt", &len);
    CHECK_MSG(rc != 0 && rc < 128 && log && strstr(log, "runs/bad/labels"), "labels/ a file: exit %d: %s", rc,
              log ? log : "");
    free(log);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!test_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_result("test_val_save_txt");
}

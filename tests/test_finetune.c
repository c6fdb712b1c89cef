/* Fine-tune: `model=x.ckpt` without resume. A detect model
 * trained on 3 classes (cut from `shapes`) is fine-tuned on a 5-class
 * dataset (the same images relabelled): the tensors matching by name and
 * shape are transferred ("Transferred N/M items", N < M: the head's class
 * outputs differ), and a new run trains from epoch 1 with a fresh
 * optimizer. */
#include "resume_util.h"

int main(void) {
    if (getenv("YOLO_SANITIZED"))
        return test_skip("two trainings take minutes under sanitizers; the Release run covers it");
    char dir[512], path[1200];
    if (!test_temp_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    snprintf(path, sizeof path, "%s/cache", dir);
    setenv("YOLO_CACHE_DIR", path, 1);
    snprintf(path, sizeof path, "%s/nc3", dir);
    CHECK(resume_shapes_subset(path, 32, 8, 0));
    snprintf(path, sizeof path, "%s/nc5", dir);
    CHECK(resume_shapes_subset(path, 32, 8, 5));
    if (test_failures) return test_result("test_finetune");
    double t0 = resume_now();

    char args[2048];
    snprintf(args, sizeof args,
             "detect train data=%s/nc3/data.yaml imgsz=64 batch=8 epochs=1 workers=0 device=cpu name=base", dir);
    int rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "base run exited %d (see %s/log.txt)", rc, dir);
    if (rc != 0) return test_result("test_finetune");

    snprintf(args, sizeof args,
             "detect train model=runs/detect/base/weights/last.ckpt data=%s/nc5/data.yaml imgsz=64 batch=8 epochs=1 "
             "workers=0 device=cpu name=tuned",
             dir);
    rc = test_run_yolo(dir, args);
    CHECK_MSG(rc == 0, "fine-tune exited %d (see %s/log.txt)", rc, dir);
    snprintf(path, sizeof path, "%s/log.txt", dir);
    FILE *f = fopen(path, "r");
    char line[1024];
    long n = -1, m = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Transferred %ld/%ld items from", &n, &m) == 2) {
            printf("%s", line);
            break;
        }
    if (f) fclose(f);
    CHECK_MSG(n > 0 && m > 0 && n < m, "no 'Transferred N/M items' line with 0 < N < M (N %ld, M %ld)", n, m);
    CHECK(m - n >= 2 && m - n <= 12); /* the class convolutions (weight, bias) of each detection level */
    CHECK(!resume_file_mentions(dir, "log.txt", "Resuming"));
    snprintf(path, sizeof path, "%s/runs/detect/tuned/results.csv", dir);
    double epochs[4] = {0};
    CHECK_MSG(test_csv_column(path, "epoch", epochs, 4) == 1 && epochs[0] == 1.0, "%s: expected one row, epoch 1",
              path);
    snprintf(path, sizeof path, "%s/runs/detect/tuned/weights/last.ckpt", dir);
    yolo_ckpt *ck = NULL;
    CHECK_MSG(yolo_ckpt_read(path, &ck) == YOLO_OK, "%s: %s", path, yolo_last_error());
    if (ck) {
        int64_t nc = 0;
        CHECK(yolo_meta_get_int(yolo_ckpt_meta(ck), "nc", "meta.yaml", &nc) == YOLO_OK && nc == 5);
        CHECK(yolo_ckpt_get_info(ck)->epoch == 0);
        yolo_ckpt_free(ck);
    }
    printf("%.0f s\n", resume_now() - t0);
    return test_result("test_finetune");
}

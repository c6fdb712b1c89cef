/* AutoBatch (batch=-1, 0 or a fraction in (0, 1)), end to end:
 *   - on the CPU backend, Ultralytics' rule: the default 16, said so, and
 *     args.yaml records 16 (a resume keeps the batch the run had);
 *   - on a Vulkan device (lavapipe in CI), the batch the planned training
 *     graph fits in the fraction, recorded in args.yaml, and the run trains
 *     at it;
 *   - a batch past 1 that is not whole, and val with AutoBatch, are refused
 *     naming the value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "test_util.h"

static char dir[512];

static char *read_log(void) { return (char *)test_read_file(dir, "log.txt", &(size_t){0}); }

/* batch: N in runs/detect/<name>/args.yaml (-1: none) */
static long args_batch(const char *name) {
    char rel[128];
    snprintf(rel, sizeof rel, "runs/detect/%s/args.yaml", name);
    char *text = (char *)test_read_file(dir, rel, &(size_t){0});
    const char *at = text ? strstr(text, "\nbatch: ") : NULL;
    long b = at ? strtol(at + 8, NULL, 10) : -1;
    free(text);
    return b;
}

static void check_cpu(void) {
    int rc = test_run_yolo(dir, "detect train data=shapes model=yolov8n.yaml imgsz=64 epochs=1 fraction=0.125 "
                                "batch=-1 device=cpu plots=False name=cpu");
    char *log = read_log();
    CHECK_MSG(rc == 0 && log && strstr(log, "at 60.0% device memory") &&
                  strstr(log, "trains in host memory: using default batch-size 16"),
              "batch=-1 on the CPU: exit %d: %s", rc, log ? log : "");
    free(log);
    CHECK_MSG(args_batch("cpu") == 16, "args.yaml batch %ld", args_batch("cpu"));
}

static void check_vulkan(void) {
    yolo_backend *vk = NULL;
    if (yolo_backend_create("vulkan", 0, &vk) != YOLO_OK) {
        printf("no Vulkan device: the device-memory path is not checked here\n");
        return;
    }
    double heap_gib = (double)yolo_backend_device_memory_bytes(vk) / (1024.0 * 1024.0 * 1024.0);
    yolo_backend_free(vk);
    CHECK_MSG(heap_gib > 0, "a Vulkan device without device memory");
    int rc = test_run_yolo(dir, "detect train data=shapes model=yolov8n.yaml imgsz=64 epochs=1 fraction=0.25 "
                                "batch=0.05 device=vulkan amp=False plots=False val=False name=vk");
    char *log = read_log();
    const char *at = log ? strstr(log, "AutoBatch: Using batch-size ") : NULL;
    long chosen = at ? strtol(at + strlen("AutoBatch: Using batch-size "), NULL, 10) : -1;
    char total[64];
    snprintf(total, sizeof total, "/%.2fG (5%%)", heap_gib);
    CHECK_MSG(rc == 0 && chosen >= 1 && chosen <= 1024 && strstr(log, total), "batch=0.05 on Vulkan: exit %d: %s", rc,
              log ? log : "");
    CHECK_MSG(args_batch("vk") == chosen, "args.yaml batch %ld, AutoBatch chose %ld", args_batch("vk"), chosen);
    printf("AutoBatch at 5%% of %.2f GiB (Vulkan, imgsz 64): batch %ld\n", heap_gib, chosen);
    free(log);
}

static void check_refused(void) {
    int rc = test_run_yolo(dir, "detect train data=shapes model=yolov8n.yaml imgsz=64 epochs=1 batch=2.5 name=bad");
    char *log = read_log();
    CHECK_MSG(rc == 2 && log && strstr(log, "batch=2.5: a batch of 1 or more images must be a whole number"),
              "batch=2.5: exit %d: %s", rc, log ? log : "");
    free(log);
    rc = test_run_yolo(dir, "detect val data=shapes model=yolov8n.yaml imgsz=64 batch=-1");
    log = read_log();
    CHECK_MSG(rc == 2 && log && strstr(log, "batch=-1 (command line): AutoBatch chooses training batches"),
              "val batch=-1: exit %d: %s", rc, log ? log : "");
    free(log);
}

int main(void) {
    if (!test_e2e_dir(dir, sizeof dir)) return test_skip("no temporary directory");
    check_refused();
    if (getenv("YOLO_SANITIZED")) {
        printf("training runs skipped under sanitizers (minutes each); the Release run covers them\n");
        return test_result("test_autobatch");
    }
    check_cpu();
    check_vulkan();
    return test_result("test_autobatch");
}

/* The trainer's step is backend-neutral: YOLOv8n detect (nc 3) at 64 px,
 * batch 2, trained 5 steps (forward, detect loss on the host, backward,
 * SGD step, EMA) on the CPU and on Vulkan from the same initial weights;
 * the step losses must agree to 1e-3 relative. */
#include <math.h>
#include <string.h>

#include "plugin/plugin_loader.h"
#include "train/ema.h"
#include "train/model_graph.h"
#include "train/optimizer.h"
#include "vulkan_test_common.h"
#include "yolo/config.h"
#include "yolo/task.h"

#define STEPS 5

static yolo_status train_steps(const char *device, const yolo_task *task, yolo_config *cfg, double *losses) {
    yolo_backend *be = NULL;
    yolo_model *model = NULL, *ema_model = NULL;
    yolo_ema *ema = NULL;
    yolo_optimizer *opt = NULL;
    yolo_model_graph *mg = NULL;
    void *loss_state = NULL;
    const yolo_task *tasks[1] = {task};
    yolo_model_options mo = {.tasks = tasks, .n_tasks = 1, .nc = 3, .seed = 7};
    yolo_status st = yolo_backend_create(device, 2, &be);
    if (!st) st = yolo_model_load("yolov8n.yaml", be, &mo, &model);
    if (!st) st = yolo_model_load("yolov8n.yaml", be, &mo, &ema_model);
    if (!st) st = yolo_ema_create(model, ema_model, &ema);
    if (!st) st = yolo_optimizer_create(model, YOLO_OPTIMIZER_SGD, 0.001f, 0.9f, 5e-4f, &opt);
    if (!st) st = yolo_model_graph_build(model, 2, 64, 64, true, &mg);
    const char *names[3] = {"a", "b", "c"};
    yolo_task_context tctx = {.cfg = cfg, .model = model, .nc = 3, .names = names, .imgsz = 64, .world = 1};
    if (!st) st = task->hooks->loss_create(&tctx, &loss_state);
    yolo_batch batch;
    test_synthetic_batch(&batch, 2, 64, 3);
    for (int step = 0; step < STEPS && !st; step++) {
        float items[YOLO_TASK_MAX_ITEMS];
        st = yolo_model_graph_forward(mg, &batch);
        for (int k = 0; !st && k < mg->out.n; k++)
            memset(mg->host_grad[k].data, 0, (size_t)yolo_tensor_numel(mg->out.t[k]) * sizeof(float));
        if (!st) st = task->hooks->loss_compute(loss_state, &batch, mg->out.n, mg->host_out, mg->host_grad,
                                                &losses[step], items);
        if (!st) st = yolo_model_graph_backward(mg);
        if (!st) st = yolo_optimizer_step(opt, 10.0f, NULL);
        if (!st) st = yolo_ema_step(ema);
    }
    test_synthetic_batch_free(&batch);
    if (loss_state) task->hooks->loss_destroy(loss_state);
    yolo_model_graph_free(mg);
    yolo_optimizer_free(opt);
    yolo_ema_free(ema);
    yolo_model_free(model);
    yolo_backend_free(be);
    return st;
}

int main(void) {
    yolo_backend *probe = NULL;
    int rc = vk_test_open("vulkan", &probe);
    if (rc) return rc;
    yolo_backend_free(probe);
    const yolo_task *task = NULL;
    yolo_config *cfg = NULL;
    if (yolo_plugin_load_task("detect", &task) || yolo_config_new(&cfg)) {
        fprintf(stderr, "setup: %s\n", yolo_last_error());
        return 1;
    }
    double cpu[STEPS] = {0}, vk[STEPS] = {0};
    CHECK_MSG(train_steps("cpu", task, cfg, cpu) == YOLO_OK, "cpu: %s", yolo_last_error());
    CHECK_MSG(train_steps("vulkan", task, cfg, vk) == YOLO_OK, "vulkan: %s", yolo_last_error());
    for (int i = 0; i < STEPS; i++) {
        double rel = fabs(cpu[i] - vk[i]) / fmax(fabs(cpu[i]), 1e-12);
        printf("step %d: cpu %.6f vulkan %.6f (relative difference %.2e)\n", i + 1, cpu[i], vk[i], rel);
        CHECK_MSG(rel <= 1e-3 && isfinite(cpu[i]), "step %d losses differ", i + 1);
    }
    yolo_config_free(cfg);
    return vk_test_finish("test_vulkan_train_detect");
}

/* Session setup shared by the train, val and predict modes (session.h). */
#include "train/session.h"

#include "nn/model_yaml.h"
#include "dist/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "backend/backend.h"

int64_t yolo_cfg_int(const yolo_config *cfg, const char *key, yolo_status *st) {
    int64_t v = 0;
    yolo_status s = yolo_config_get_int(cfg, key, &v);
    if (s && !*st) *st = s;
    return v;
}

double yolo_cfg_float(const yolo_config *cfg, const char *key, yolo_status *st) {
    double v = 0;
    yolo_status s = yolo_config_get_float(cfg, key, &v);
    if (s && !*st) *st = s;
    return v;
}

bool yolo_cfg_bool(const yolo_config *cfg, const char *key, yolo_status *st) {
    bool v = false;
    yolo_status s = yolo_config_get_bool(cfg, key, &v);
    if (s && !*st) *st = s;
    return v;
}

const char *yolo_cfg_string(const yolo_config *cfg, const char *key, yolo_status *st) {
    const char *v = NULL;
    if (yolo_config_is_null(cfg, key)) return NULL;
    yolo_status s = yolo_config_get_string(cfg, key, &v);
    if (s && !*st) *st = s;
    return v;
}

static bool is_file(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static yolo_status open_compute(yolo_session *s);

/* device=null: the first GPU when Vulkan has one, else the CPU. */
static yolo_status open_backend(yolo_session *s, const char *device, int threads) {
    if (device && *device) return yolo_backend_create(device, threads, &s->backend);
    if (yolo_backend_create("vulkan", threads, &s->backend) == YOLO_OK) {
        if (strstr(yolo_backend_name(s->backend), "llvmpipe") == NULL) return YOLO_OK;
        yolo_backend_free(s->backend); /* a software Vulkan device is slower than the CPU backend */
        s->backend = NULL;
    }
    return yolo_backend_create("cpu", threads, &s->backend);
}

yolo_status yolo_session_open(const yolo_mode_context *ctx, yolo_session *s, bool need_data, yolo_dist *dist) {
    memset(s, 0, sizeof *s);
    s->dist = dist;
    s->cfg = ctx->config;
    s->task = ctx->task;
    s->hooks = ctx->task->hooks;
    if (!s->hooks)
        return yolo_error(YOLO_ERR_UNSUPPORTED, "task '%s' (%s) has no training/validation hooks yet",
                          ctx->task->name, yolo_config_source(s->cfg, "task"));
    const yolo_task_hooks *h = s->hooks;
    bool complete = h->loss_create && h->loss_destroy && h->loss_compute && h->metrics_create &&
                    h->metrics_destroy && h->metrics_update && h->metrics_summarize && h->predict &&
                    h->n_loss_items <= YOLO_TASK_MAX_ITEMS && h->n_metrics <= 32;
    if (!complete)
        return yolo_error(YOLO_ERR_PLUGIN,
                          "task '%s': its hooks table is incomplete (every loss, metrics and predict hook is "
                          "required; at most %d loss items and 32 metrics)",
                          ctx->task->name, YOLO_TASK_MAX_ITEMS);
    yolo_status st = YOLO_OK;
    const char *data = yolo_cfg_string(s->cfg, "data", &st);
    /* predict reads data only when the user names it (the task's default data is not needed) */
    if (!need_data && (!data || yolo_config_layer_of(s->cfg, "data") <= YOLO_CONFIG_LAYER_TASK)) return open_compute(s);
    if (!data) data = ctx->task->default_data;
    if (!data) return yolo_error(YOLO_ERR_CONFIG, "data: no dataset given (data=...) and task '%s' has no default",
                                 ctx->task->name);
    st = yolo_data_config_load(data, s->hooks->data.needs, &s->data);
    if (st) return yolo_error_context(st, "data=%s", data);
    s->data_loaded = true;
    if (s->data.yaml_path) {
        st = yolo_config_merge_yaml_file(s->cfg, YOLO_CONFIG_LAYER_DATA, s->data.yaml_path,
                                         YOLO_CONFIG_KNOWN_ONLY | YOLO_CONFIG_DATA_YAML);
        if (st) return st;
    }
    s->tctx.nc = s->data.nc;
    s->tctx.names = (const char *const *)s->data.names;
    return open_compute(s);
}

/* Size, batch, seed and the backend: what every mode needs. */
static yolo_status open_compute(yolo_session *s) {
    yolo_status st = YOLO_OK;
    s->imgsz = (int)yolo_cfg_int(s->cfg, "imgsz", &st);
    s->batch = (int)yolo_cfg_int(s->cfg, "batch", &st);
    s->workers = (int)yolo_cfg_int(s->cfg, "workers", &st);
    s->seed = (uint64_t)yolo_cfg_int(s->cfg, "seed", &st);
    int threads = (int)yolo_cfg_int(s->cfg, "threads", &st);
    const char *device = yolo_cfg_string(s->cfg, "device", &st);
    if (st) return st;
    if (s->imgsz < 32 || s->imgsz % 32)
        return yolo_error(YOLO_ERR_CONFIG, "imgsz=%d: must be a positive multiple of 32 (the model's largest stride)",
                          s->imgsz);
    if (s->batch < 1) return yolo_error(YOLO_ERR_CONFIG, "batch=%d: must be >= 1 (AutoBatch is not built yet)", s->batch);
    char rank_device[256];
    int local_world = yolo_dist_local_world(s->dist);
    st = yolo_dist_rank_device(device, yolo_dist_local_rank(s->dist), local_world, rank_device, sizeof rank_device);
    if (!st && threads == 0 && local_world > 1) { /* the cores shared by this machine's ranks */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > local_world ? (int)(cores / local_world) : 1;
    }
    if (!st) st = open_backend(s, device ? rank_device : NULL, threads);
    if (st) return st;
    s->tctx.cfg = s->cfg;
    s->tctx.imgsz = s->imgsz;
    s->tctx.world = yolo_dist_world(s->dist);
    s->tctx.rank = yolo_dist_rank(s->dist);
    return YOLO_OK;
}

yolo_status yolo_session_build_model(yolo_session *s, const char *model, yolo_model **out) {
    if (!model) model = s->task->default_model;
    if (!model) return yolo_error(YOLO_ERR_CONFIG, "model: no model given and task '%s' has no default", s->task->name);
    snprintf(s->model_name, sizeof s->model_name, "%s", model);
    const yolo_task *tasks[1] = {s->task};
    yolo_model_options opt = {.tasks = tasks, .n_tasks = 1, .nc = s->data.nc, .seed = s->seed};
    yolo_status st;
    if (s->model_yaml) {
        st = yolo_model_load_text(model, s->model_yaml, strlen(s->model_yaml), s->backend, &opt, out);
    } else {
        st = is_file(model) ? yolo_config_merge_yaml_file(s->cfg, YOLO_CONFIG_LAYER_MODEL, model, YOLO_CONFIG_KNOWN_ONLY)
                            : YOLO_OK;
        if (!st) st = yolo_model_load(model, s->backend, &opt, out);
    }
    if (!st && (st = yolo_model_check_head(*out, s->task))) {
        yolo_model_free(*out);
        *out = NULL;
    }
    return st;
}

yolo_status yolo_session_lock_run_dir(yolo_session *s) {
    char path[1100];
    snprintf(path, sizeof path, "%s/.yolo-run.lock", s->run_dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return yolo_error(YOLO_ERR_IO, "%s: cannot create the run lock: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        close(fd);
        return yolo_error(YOLO_ERR_CONFIG, "run directory %s is in use by another yolo process (pid %s): two runs "
                          "writing one last.ckpt and results.csv would corrupt both; give another name= (or drop "
                          "exist_ok=True) or wait for it to finish", s->run_dir, pid[0] ? pid : "unknown");
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) { /* the pid is only for the message */
    }
    if (s->run_lock_fd > 0) close(s->run_lock_fd);
    s->run_lock_fd = fd; /* held until the session closes (or the process ends) */
    return YOLO_OK;
}

yolo_status yolo_session_make_run_dir(yolo_session *s) {
    yolo_status st = yolo_config_make_run_dir(s->cfg, s->run_dir, sizeof s->run_dir);
    if (!st) st = yolo_session_lock_run_dir(s);
    if (!st) st = yolo_config_save_args(s->cfg, s->run_dir);
    return st;
}

void yolo_session_close(yolo_session *s) {
    for (int i = 0; i < s->n_names; i++) free(s->names[i]);
    free(s->names);
    yolo_model_free(s->model);
    free(s->model_yaml);
    if (s->run_lock_fd > 0) close(s->run_lock_fd);
    if (s->data_loaded) yolo_data_config_free(&s->data);
    yolo_backend_free(s->backend);
    memset(s, 0, sizeof *s);
}

/* Session setup shared by the train, val and predict modes (session.h). */
#include "train/session.h"

#include "nn/model_yaml.h"
#include "nn/exported_model.h"
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
#include "backend/cpu/cpu_backend.h"
#include "train/checkpoint.h"

static bool is_file(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static yolo_status open_compute(yolo_session *s);

/* device=null: the first GPU when Vulkan has one, else the CPU. */
static yolo_status open_backend(yolo_session *s, const char *device, int threads) {
    if (device && *device) return yolo_backend_create(device, threads, &s->backend);
    if (yolo_backend_create("vulkan", threads, &s->backend) == YOLO_OK) {
        if (!yolo_backend_supports(s->backend, YOLO_BACKEND_CAP_EMULATED_ON_CPU)) return YOLO_OK;
        yolo_backend_free(s->backend); /* a software Vulkan device is slower than the CPU backend */
        s->backend = NULL;
    }
    return yolo_backend_create("cpu", threads, &s->backend);
}

/* The model yaml's keys join the configuration (a checkpoint's do not:
 * they come with it). NULL: the task's default model. */
static yolo_status merge_model_yaml(yolo_session *s, const char *model) {
    if (!model) model = s->task->default_model;
    yolo_status st = model ? yolo_refuse_exported_model(model) : YOLO_OK;
    if (st) return st;
    if (!model || !is_file(model) || yolo_is_checkpoint_path(model)) return YOLO_OK;
    return yolo_config_merge_yaml_file(s->cfg, YOLO_CONFIG_LAYER_MODEL, model, YOLO_CONFIG_KNOWN_ONLY);
}

/* model=CHECKPOINT's train args as defaults (yolo_checkpoint_default_args).
 * A file that cannot be read is left to the model loader, which names what
 * is wrong with it. */
static void merge_checkpoint_args(yolo_session *s, const char *model) {
    if (!yolo_is_checkpoint_path(model) || !is_file(model)) return;
    yolo_ckpt *ck = NULL;
    if (yolo_ckpt_read_meta(model, &ck) != YOLO_OK) {
        yolo_error_clear();
        return;
    }
    yolo_checkpoint_default_args(ck, s->cfg);
    yolo_ckpt_free(ck);
}

/* The data yaml named by data= (or the task's default) joins the configuration. */
static yolo_status load_data(const yolo_mode_context *ctx, yolo_session *s, const char *data) {
    if (!data) data = ctx->task->default_data;
    if (!data) return yolo_error(YOLO_ERR_CONFIG, "data: no dataset given (data=...) and task '%s' has no default",
                                 ctx->task->name);
    yolo_status st = yolo_data_config_load(data, s->hooks->data.needs, &s->data);
    if (st) return yolo_error_context(st, "data=%s", data);
    s->data_loaded = true;
    if (s->data.yaml_path) {
        st = yolo_config_merge_yaml_file(s->cfg, YOLO_CONFIG_LAYER_DATA, s->data.yaml_path,
                                         YOLO_CONFIG_KNOWN_ONLY | YOLO_CONFIG_DATA_YAML);
        if (st) return st;
    }
    s->tctx.nc = s->data.nc;
    s->tctx.names = (const char *const *)s->data.names;
    return YOLO_OK;
}

yolo_status yolo_session_open(const yolo_mode_context *ctx, yolo_session *s, const yolo_session_options *opt) {
    memset(s, 0, sizeof *s);
    s->dist = opt->dist;
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
    /* which data and model yamls to merge: the keys as they stand before each merge */
    yolo_settings given;
    yolo_status st = yolo_settings_fill(s->cfg, YOLO_SETTINGS_RUN, &given);
    /* predict reads data only when the user names it (the task's default data is not needed) */
    bool data_named = given.run.data && yolo_config_layer_of(s->cfg, "data") > YOLO_CONFIG_LAYER_TASK;
    const char *model_given = opt->model ? opt->model : given.run.model;
    if (!st && model_given) st = yolo_refuse_exported_model(model_given); /* before the data: the first thing wrong */
    if (!st && model_given && opt->checkpoint_args) {
        char path[1024];
        snprintf(path, sizeof path, "%s", model_given); /* the merge may replace the configuration's strings */
        merge_checkpoint_args(s, path);
        st = yolo_settings_fill(s->cfg, YOLO_SETTINGS_RUN, &given);
    }
    if (!st && (opt->need_data || data_named)) st = load_data(ctx, s, given.run.data);
    if (!st) st = yolo_settings_fill(s->cfg, YOLO_SETTINGS_RUN, &given); /* after the data yaml's keys */
    char model[1024] = ""; /* a copy: the merge replaces the configuration's strings */
    const char *model_key = opt->model ? opt->model : given.run.model;
    if (model_key) snprintf(model, sizeof model, "%s", model_key);
    if (!st) st = merge_model_yaml(s, model_key ? model : NULL);
    if (!st) st = yolo_settings_read(s->cfg, opt->concerns | YOLO_SETTINGS_RUN, &s->set);
    if (!st) st = open_compute(s);
    return st;
}

/* The backend (device, threads) and the task context: what every mode needs. */
static yolo_status open_compute(yolo_session *s) {
    const yolo_run_settings *run = &s->set.run;
    int threads = run->threads;
    char rank_device[256];
    int local_world = yolo_dist_local_world(s->dist);
    yolo_status st =
        yolo_dist_rank_device(run->device, yolo_dist_local_rank(s->dist), local_world, rank_device, sizeof rank_device);
    if (!st && threads == 0 && local_world > 1) { /* the cores shared by this machine's ranks */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > local_world ? (int)(cores / local_world) : 1;
    }
    if (!st) st = open_backend(s, run->device ? rank_device : NULL, threads);
    if (st) return st;
    if (run->profile && yolo_backend_supports(s->backend, YOLO_BACKEND_CAP_OP_PROFILE)) yolo_cpu_profile_enable();
    else if (run->profile)
        fprintf(stderr, "WARNING: profile=True: the per-op timing table is built for the CPU backend only, not %s\n",
                yolo_backend_name(s->backend));
    s->tctx.cfg = s->cfg;
    s->tctx.imgsz = run->imgsz;
    s->tctx.world = yolo_dist_world(s->dist);
    s->tctx.rank = yolo_dist_rank(s->dist);
    return YOLO_OK;
}

int yolo_model_grid_stride(const yolo_model *model) {
    int strides[8], n = yolo_model_strides(model, strides, 8), gs = 32;
    for (int i = 0; i < n && i < 8; i++)
        if (strides[i] > gs) gs = strides[i];
    return gs;
}

void yolo_session_square_imgsz(yolo_session *s) {
    yolo_run_settings *run = &s->set.run;
    if (run->imgsz_h == run->imgsz_w) return;
    fprintf(stderr, "WARNING: updating to 'imgsz=%d'. 'train' and 'val' imgsz must be an integer, while 'predict' and "
                    "'export' imgsz may be a [h, w] list or an integer, i.e. 'yolo export imgsz=640,480' or 'yolo "
                    "export imgsz=640'\n", run->imgsz);
    run->imgsz_h = run->imgsz_w = run->imgsz;
}

yolo_status yolo_session_check_imgsz(const yolo_session *s) {
    const int gs = yolo_model_grid_stride(s->model), h = s->set.run.imgsz_h, w = s->set.run.imgsz_w;
    const int imgsz = h % gs ? h : w;
    if (h % gs == 0 && w % gs == 0) return YOLO_OK;
    return yolo_error(YOLO_ERR_CONFIG, "imgsz=%d (%s): must be a multiple of %d, the largest stride of %s (imgsz=%d "
                      "or %d)", imgsz, yolo_config_source(s->cfg, "imgsz"), gs, s->model_name,
                      imgsz / gs * gs > 0 ? imgsz / gs * gs : gs, (imgsz / gs + 1) * gs);
}

yolo_status yolo_session_build_model(yolo_session *s, const char *model, yolo_model **out) {
    if (!model) model = s->task->default_model;
    if (!model) return yolo_error(YOLO_ERR_CONFIG, "model: no model given and task '%s' has no default", s->task->name);
    snprintf(s->model_name, sizeof s->model_name, "%s", model);
    const yolo_task *tasks[1] = {s->task};
    yolo_model_options opt = {.tasks = tasks, .n_tasks = 1, .nc = s->data.nc, .seed = (uint64_t)s->set.run.seed};
    yolo_status st;
    if (s->model_yaml) {
        st = yolo_model_load_text(model, s->model_yaml, strlen(s->model_yaml), s->backend, &opt, out);
    } else {
        st = yolo_model_load(model, s->backend, &opt, out); /* its yaml was merged by yolo_session_open */
    }
    if (!st && s->model_bn_eps > 0) yolo_model_set_bn_constants(*out, s->model_bn_eps, s->model_bn_momentum);
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
    if (s->set.run.profile && s->backend && yolo_backend_supports(s->backend, YOLO_BACKEND_CAP_OP_PROFILE)) {
        printf("profile=True: time per op on the CPU backend\n");
        yolo_cpu_profile_report(stdout);
    }
    for (int i = 0; i < s->n_names; i++) free(s->names[i]);
    free(s->names);
    yolo_model_free(s->model);
    free(s->model_yaml);
    if (s->run_lock_fd > 0) close(s->run_lock_fd);
    if (s->data_loaded) yolo_data_config_free(&s->data);
    yolo_backend_free(s->backend);
    memset(s, 0, sizeof *s);
}

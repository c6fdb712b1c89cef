/* What the trainer does across ranks (trainer.h; the collectives are
 * train/ddp.h and dist/dist.h): open the communicator, start every rank
 * from rank 0's weights, reduce each batch's loss and stop request, and
 * synchronised batch norm. Alone (world 1) each is what one process does. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "backend/backend.h"
#include "dist/launch.h"
#include "train/stop.h"
#include "train/trainer.h"

yolo_status yolo_trainer_open_dist(yolo_trainer *t, const yolo_config *cfg) {
    const yolo_launch_settings *l = &t->launch;
    yolo_status st = yolo_dist_open(l->dist_timeout, &t->dist);
    if (st) return st;
    t->rank = yolo_dist_rank(t->dist);
    t->world = yolo_dist_world(t->dist);
    if (l->world > 1 && l->world != t->world)
        return yolo_error(YOLO_ERR_CONFIG, "world=%d (%s) but the launcher started %d ranks", l->world,
                          yolo_config_source(cfg, "world"), t->world);
    if (t->rank > 0) {
        fflush(stdout);
        int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        t->quiet_stdout = null_fd >= 0 ? dup(STDOUT_FILENO) : -1;
        if (t->quiet_stdout >= 0) dup2(null_fd, STDOUT_FILENO);
        if (null_fd >= 0) close(null_fd);
    }
    if (t->world > 1)
        printf("DDP: %d ranks (%s), dist_timeout=%gs\n", t->world, yolo_dist_env_detect().launcher, l->dist_timeout);
    return YOLO_OK;
}

static yolo_status sync_bn_allreduce(void *dist, double *data, int64_t n, const char *what) {
    return yolo_dist_allreduce_f64(dist, data, n, YOLO_DIST_SUM, what);
}

yolo_status yolo_trainer_setup_sync_bn(yolo_trainer *t) {
    if (!t->s.set.dist.sync_bn || t->world == 1) return YOLO_OK;
    if (!yolo_backend_supports(t->s.backend, YOLO_BACKEND_CAP_COLLECTIVE_IN_GRAPH))
        return yolo_error(YOLO_ERR_UNSUPPORTED, "sync_bn=True (%s): synchronised batch norm needs a backend that can "
                          "all-reduce mid-graph, and %s records whole command buffers; train with sync_bn=False "
                          "or device=cpu",
                          yolo_config_source(t->s.cfg, "sync_bn"), yolo_backend_name(t->s.backend));
    t->sync_bn = (yolo_graph_collective){t->world, sync_bn_allreduce, t->dist};
    t->graphs.collective = &t->sync_bn;
    return YOLO_OK;
}

yolo_status yolo_trainer_start_ranks(yolo_trainer *t) {
    if (t->world == 1) return YOLO_OK;
    t->buckets.bucket = (int64_t)(t->s.set.dist.bucket_mb * 1024 * 1024 / sizeof(float));
    yolo_status st = yolo_ddp_broadcast_model(t->dist, t->s.model, "broadcast(model)");
    if (!st) st = yolo_ddp_broadcast_model(t->dist, t->ema->ema, "broadcast(EMA)");
    return st;
}

/* Each rank's items are its share's: their mean is the global batch's. A
 * NaN loss on any rank stops every rank. Alone: only the stop request. */
yolo_status yolo_trainer_reduce_step(yolo_trainer *t, double *loss, float *items) {
    t->stop_agreed = yolo_stop_requested();
    if (t->world == 1) return YOLO_OK;
    int n = t->s.hooks->n_loss_items;
    double v[YOLO_TASK_MAX_ITEMS + 2];
    for (int k = 0; k < n; k++) v[k] = items[k];
    v[n] = *loss;
    v[n + 1] = t->stop_agreed;
    yolo_status st = yolo_dist_allreduce_f64(t->dist, v, n + 2, YOLO_DIST_SUM, "allreduce(loss items)");
    for (int k = 0; k < n; k++) items[k] = (float)(v[k] / t->world);
    *loss = v[n];
    t->stop_agreed = v[n + 1] > 0;
    return st;
}

yolo_status yolo_trainer_agree_stop(yolo_trainer *t) {
    double v = yolo_stop_requested();
    yolo_status st = yolo_dist_allreduce_f64(t->dist, &v, 1, YOLO_DIST_SUM, "allreduce(stop request)");
    t->stop_agreed = v > 0;
    return st;
}

void yolo_trainer_close_dist(yolo_trainer *t) {
    yolo_dist_close(t->dist);
    if (t->quiet_stdout >= 0) {
        fflush(stdout);
        dup2(t->quiet_stdout, STDOUT_FILENO);
        close(t->quiet_stdout);
    }
}

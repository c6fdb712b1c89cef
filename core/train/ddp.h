/* ddp.h — what the trainer does differently under DDP (DESIGN.md "DDP"),
 * on top of the communicator of dist/dist.h. Alone (world 1) every call is
 * what a one-process run would do, so the trainer has a single path.
 *
 * Semantics: `batch` is the global batch, split evenly over the ranks;
 * each rank's loss is its share of the global batch's loss and the ranks'
 * gradients are SUMMED, so the update equals one rank's on the whole global
 * batch (accumulation and weight decay follow the global batch). */
#ifndef YOLO_TRAIN_DDP_H
#define YOLO_TRAIN_DDP_H

#include "ckpt/ckpt_file.h"
#include "dist/dist.h"
#include "train/optimizer.h"
#include "yolo/model.h"
#include "yolo/task.h"

/* Rank 0 reads the file and sends its bytes to every rank: no shared
 * filesystem is needed. path matters on rank 0 only. */
yolo_status yolo_ddp_read_checkpoint(yolo_dist *d, const char *path, yolo_ckpt **out);

/* Rank 0's string (a resolved path, "" for none) to every rank. */
yolo_status yolo_ddp_share_string(yolo_dist *d, char *text, size_t size, const char *what);

/* Rank 0's parameters and buffers to every rank. */
yolo_status yolo_ddp_broadcast_model(yolo_dist *d, yolo_model *model, const char *what);

/* Sums the optimizer's parameter gradients over the ranks, in buckets of
 * `bucket` floats (last layers first, all in flight together). The
 * gradients travel as one flat buffer: a
 * pack graph concatenates them on the device (one download), an unpack
 * graph writes the sums back (one upload), so a GPU backend pays two
 * transfers per step rather than two per parameter. Built on first use. */
typedef struct yolo_ddp_buckets {
    float *staging;     /* the flat host copy [total] */
    int64_t total;      /* floats */
    int64_t bucket;     /* floats per bucket */
    yolo_graph *pack, *unpack;
    yolo_tensor *packed, *unpacked;
    double seconds;     /* time spent in the last call (pack, reduce, unpack) */
    double copy_seconds; /* the part of it spent packing, copying and unpacking */
} yolo_ddp_buckets;
yolo_status yolo_ddp_allreduce_grads(yolo_dist *d, yolo_optimizer *opt, yolo_ddp_buckets *b);
void yolo_ddp_buckets_free(yolo_ddp_buckets *b);

/* The yolo_task_context.rank_mean of a training run (ctx->dist is the yolo_dist). */
yolo_status yolo_ddp_rank_mean(const yolo_task_context *ctx, double *values, int n);

#endif

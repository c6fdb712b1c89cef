/* ckpt_file.h — checkpoint files (last.ckpt, best.ckpt): a zip holding
 * meta.yaml and up to three safetensors blobs.
 *
 *   meta.yaml              format_version, yolo_version, date, task,
 *                          plugin_version, epoch, optimizer_steps,
 *                          ema_updates, best_fitness, seed,
 *                          sampler {epoch, batch}, train_args {..},
 *                          results [{..}, ..], anything the caller adds,
 *                          and members {NAME: {size, crc32}} (the writer's)
 *   model.safetensors      optional (last.ckpt: f32 live weights)
 *   ema.safetensors        optional (best.ckpt: fp16 EMA weights only)
 *   optimizer.safetensors  optional (moments keyed "<param>.momentum_buffer",
 *                          "<param>.exp_avg", "<param>.exp_avg_sq")
 *
 * Counters are integers in meta.yaml, so storing tensors in fp16 never
 * touches them. Members are stored uncompressed (weights do not deflate),
 * blobs first and meta.yaml last; Python reads every blob with
 * zipfile + safetensors.
 *
 * Writes are atomic: "<path>.tmp" in the same folder, fsync, rename over
 * <path>, fsync of the folder; a crash at any point leaves either the old
 * or the new file at <path>. One writer per path at a time.
 *
 * Reads are strict and never trust the file: a truncated, bit-flipped,
 * foreign (another zip, a text file) or incomplete checkpoint is
 * YOLO_ERR_FORMAT naming the file and what is wrong ("checksum mismatch in
 * member model.safetensors of runs/x/last.ckpt"). */
#ifndef YOLO_CKPT_FILE_H
#define YOLO_CKPT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ckpt/meta.h"
#include "ckpt/safetensors.h"
#include "yolo/error.h"

#define YOLO_CKPT_FORMAT_VERSION 1

typedef enum yolo_ckpt_blob_id {
    YOLO_CKPT_MODEL = 0,
    YOLO_CKPT_EMA,
    YOLO_CKPT_OPTIMIZER,
    YOLO_CKPT_BLOB_COUNT
} yolo_ckpt_blob_id;

/* "model.safetensors", "ema.safetensors", "optimizer.safetensors". */
const char *yolo_ckpt_member_name(yolo_ckpt_blob_id id);

/* The required scalars of meta.yaml. */
typedef struct yolo_ckpt_info {
    const char *task;           /* "detect" */
    const char *plugin_version; /* the task plugin's version string */
    int64_t epoch;              /* last completed epoch, 0-based (-1: none) */
    int64_t optimizer_steps;
    int64_t ema_updates;
    double best_fitness;        /* NaN: none yet (written as .nan) */
    int64_t seed;
    int64_t sampler_epoch;      /* where the data sampler resumes */
    int64_t sampler_batch;
    /* Set by yolo_ckpt_meta_new / the reader: */
    int64_t format_version;
    const char *yolo_version;
    const char *date;           /* ISO 8601 UTC, "2024-05-01T12:34:56Z" */
} yolo_ckpt_info;

/* A meta.yaml skeleton: format_version, yolo_version, date (now), the
 * fields of `info`, sampler {epoch, batch}, an empty `train_args` map and
 * an empty `results` list. The caller fills those (and may add keys, e.g.
 * rng state) through meta.h:
 *     yolo_meta *args = yolo_meta_get_mut(meta, "train_args");
 *     yolo_meta *row = yolo_meta_append_map(yolo_meta_get_mut(meta, "results")); */
yolo_status yolo_ckpt_meta_new(const yolo_ckpt_info *info, yolo_meta **out);

/* Checks the required keys and their types; fills *info (strings point
 * into meta). `what` prefixes errors ("meta.yaml of last.ckpt"). A
 * format_version newer than this build's is refused as such. */
yolo_status yolo_ckpt_meta_check(const yolo_meta *meta, const char *what, yolo_ckpt_info *info);

/* ---- writing ---- */
/* The tensors of one member (see ckpt_tensors.h to fill one from model
 * tensors). An empty blob (count 0) is still written. */
typedef struct yolo_ckpt_blob {
    const yolo_st_tensor *tensors;
    size_t count;
    const yolo_st_kv *metadata; /* the safetensors "__metadata__" (optional) */
    size_t n_metadata;
} yolo_ckpt_blob;

typedef struct yolo_ckpt_contents {
    const yolo_meta *meta;                           /* required; checked with yolo_ckpt_meta_check */
    const yolo_ckpt_blob *blobs[YOLO_CKPT_BLOB_COUNT]; /* NULL: member absent */
} yolo_ckpt_contents;

/* Writes atomically (see above). Errors name the path. */
yolo_status yolo_ckpt_write(const char *path, const yolo_ckpt_contents *contents);

/* ---- reading ---- */
typedef struct yolo_ckpt yolo_ckpt;

yolo_status yolo_ckpt_read(const char *path, yolo_ckpt **out);
/* meta.yaml alone (the blobs are skipped unread: yolo_ckpt_get_blob gives
 * NULL), for what needs no weights: the CLI's task, a checkpoint's args.
 * A .pt: its pickle alone. */
yolo_status yolo_ckpt_read_meta(const char *path, yolo_ckpt **out);
/* The same from memory (data is not kept); `name` stands for the path in
 * messages. */
yolo_status yolo_ckpt_read_memory(const void *data, size_t size, const char *name, yolo_ckpt **out);
void yolo_ckpt_free(yolo_ckpt *ckpt);

const char *yolo_ckpt_path(const yolo_ckpt *ckpt);
const yolo_meta *yolo_ckpt_meta(const yolo_ckpt *ckpt);
const yolo_ckpt_info *yolo_ckpt_get_info(const yolo_ckpt *ckpt);
/* A member's tensors; NULL if the checkpoint has no such member. */
const yolo_st_file *yolo_ckpt_get_blob(const yolo_ckpt *ckpt, yolo_ckpt_blob_id id);
/* One tensor of a member by name; NULL if absent. */
const yolo_st_tensor *yolo_ckpt_get_tensor(const yolo_ckpt *ckpt, yolo_ckpt_blob_id id, const char *name);
/* Total size of the file read (bytes). */
size_t yolo_ckpt_file_size(const yolo_ckpt *ckpt);

/* ---- testing (built with -DYOLO_TEST_HOOKS=ON only) ---- */
#ifdef YOLO_TEST_HOOKS
/* With env YOLO_CKPT_CRASH_AT=n (n >= 1) the writer raise(SIGKILL)s itself
 * on reaching its n-th write point (file created, each block written,
 * before/after fsync, after rename, after the folder's fsync). This
 * returns how many points the last write on this thread passed. */
int yolo_ckpt_write_points(void);
#endif

#endif

/* ckpt_tensors.h — moving yolo_tensors into and out of checkpoint blobs.
 *
 * Saving: a yolo_ckpt_tensors collects host copies of tensors (downloaded
 * from any backend), optionally stored as fp16 (best.ckpt's EMA), and lends
 * them to yolo_ckpt_write as a yolo_ckpt_blob:
 *
 *     yolo_ckpt_tensors ema = {0};
 *     for (i...) yolo_ckpt_tensors_add(&ema, NULL, t[i], YOLO_F16);
 *     contents.blobs[YOLO_CKPT_EMA] = yolo_ckpt_tensors_blob(&ema);
 *     yolo_ckpt_write(path, &contents);
 *     yolo_ckpt_tensors_free(&ema);
 *
 * Loading: yolo_ckpt_load_tensor copies one stored tensor into a model
 * tensor of the same shape (F16/F32/F64 convert to the tensor's float
 * dtype; integer dtypes must match). Two rules, for checkpoints and .pt
 * files alike (a .pt's state dict is viewed as a blob, pt_model.c):
 *   - exact (val, predict, export, info, resume): every tensor of the
 *     model is in the blob with its shape and a dtype that converts, and
 *     the blob holds nothing else but num_batches_tracked buffers (which
 *     no model here keeps: see ignored_extra); weights hold no NaN or Inf.
 *     All is checked before anything is loaded; the error names the first
 *     tensor that does not fit (missing, its shape in the file and the
 *     model's, unexpected, non-finite values) and counts the others.
 *   - transfer (fine-tuning, Ultralytics' intersect_dicts): the tensors
 *     that match by name and shape are copied ("Transferred 319/355
 *     items"), the rest reported by name; a tensor holding NaN or Inf is
 *     not copied (reported); none matching at all is an error. */
#ifndef YOLO_CKPT_TENSORS_H
#define YOLO_CKPT_TENSORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ckpt/ckpt_file.h"
#include "ckpt/safetensors.h"
#include "yolo/tensor.h"

typedef struct yolo_ckpt_tensors {
    yolo_ckpt_blob blob;        /* the view handed to yolo_ckpt_write */
    /* private */
    yolo_st_tensor *items;
    size_t count, cap;
    char **names;
    void **data;
} yolo_ckpt_tensors;

/* The safetensors dtype of a yolo dtype (F32, F16, I32, U8). */
yolo_st_dtype yolo_ckpt_st_dtype(yolo_dtype dtype);

/* Downloads `t` and adds it under `name` (NULL: t->name). `store` is the
 * stored dtype: YOLO_F16 stores f32/f16 tensors as F16 (round to nearest
 * even), YOLO_F32 stores them as F32; integer tensors are stored as they
 * are whatever `store` says. */
yolo_status yolo_ckpt_tensors_add(yolo_ckpt_tensors *ts, const char *name, const yolo_tensor *t, yolo_dtype store);
/* Adds a copy of host data (ndim <= YOLO_ST_MAX_DIMS). */
yolo_status yolo_ckpt_tensors_add_host(yolo_ckpt_tensors *ts, const char *name, yolo_st_dtype dtype, int ndim,
                                       const int64_t *shape, const void *data);
const yolo_ckpt_blob *yolo_ckpt_tensors_blob(yolo_ckpt_tensors *ts);
void yolo_ckpt_tensors_free(yolo_ckpt_tensors *ts);

/* Copies `src` into `dst` (shapes must be equal; see above for dtypes).
 * `what` names the blob in errors ("ema.safetensors of last.ckpt"). */
yolo_status yolo_ckpt_load_tensor(const yolo_st_tensor *src, yolo_tensor *dst, const char *what);
/* Whether load_tensor would accept the pair (same shape, convertible). */
bool yolo_ckpt_tensor_matches(const yolo_st_tensor *src, const yolo_tensor *dst);

/* What does not fit a rule: one line per tensor, the first kept
 * ("tensor 'model.0.conv.weight' is F32[16,3,3,3] in the file, the
 * model's is f32[32,3,3,3]"). */
#define YOLO_CKPT_REPORT_LINES 10
typedef struct yolo_ckpt_report {
    size_t n_listed;    /* tensors: the model's not loaded, the file's unexpected */
    size_t n_nonfinite; /* of them, the ones holding NaN or Inf */
    yolo_status first;  /* the first one's kind: YOLO_ERR_SHAPE or YOLO_ERR_FORMAT */
    char lines[YOLO_CKPT_REPORT_LINES][480];
} yolo_ckpt_report;
/* "heading (N):", the kept lines indented, "and K more"; nothing when empty. */
void yolo_ckpt_report_print(const yolo_ckpt_report *r, const char *heading, FILE *out);

/* The exact rule without the finite check (an optimizer's state): each of
 * the n tensors is looked up under its own name, or names[i] when given. */
yolo_status yolo_ckpt_load_all(const yolo_st_file *blob, yolo_tensor *const *tensors, const char *const *names,
                               size_t n, const char *what);
/* The exact rule for weights (NaN or Inf refused). */
yolo_status yolo_ckpt_load_weights(const yolo_st_file *blob, yolo_tensor *const *tensors, size_t n,
                                   const char *what);
/* The transfer rule; *transferred counts the copies (of n); report (may be
 * NULL) gets what was not copied and the blob's tensors left unused. */
yolo_status yolo_ckpt_load_matching_report(const yolo_st_file *blob, yolo_tensor *const *tensors, size_t n,
                                           const char *what, size_t *transferred, yolo_ckpt_report *report);
yolo_status yolo_ckpt_load_matching(const yolo_st_file *blob, yolo_tensor *const *tensors, size_t n,
                                    const char *what, size_t *transferred);

/* The same on a member of a read checkpoint, with messages naming the
 * member and the file ("ema.safetensors of runs/x/weights/last.ckpt"); a
 * missing member is YOLO_ERR_FORMAT saying so. restore is exact, with the
 * finite check on the weights (model, EMA), not on the optimizer's state. */
yolo_status yolo_ckpt_restore(const yolo_ckpt *ckpt, yolo_ckpt_blob_id id, yolo_tensor *const *tensors,
                              const char *const *names, size_t n);
yolo_status yolo_ckpt_transfer_report(const yolo_ckpt *ckpt, yolo_ckpt_blob_id id, yolo_tensor *const *tensors,
                                      size_t n, size_t *transferred, yolo_ckpt_report *report);
yolo_status yolo_ckpt_transfer(const yolo_ckpt *ckpt, yolo_ckpt_blob_id id, yolo_tensor *const *tensors, size_t n,
                               size_t *transferred);
/* The member to take weights from for inference or fine-tuning: the EMA
 * when the file has one (best.ckpt always does), else the live model. */
yolo_ckpt_blob_id yolo_ckpt_weights_member(const yolo_ckpt *ckpt);

#endif

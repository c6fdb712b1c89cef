/* pt_model.h — .pt checkpoints where the core takes a model or a
 * checkpoint: building our model from one, and presenting one as a
 * read-only yolo_ckpt (its weights as the EMA member), so val, predict,
 * info and fine-tuning take `model=x.pt` as they take `model=x.ckpt`. */
#ifndef YOLO_INTEROP_PT_MODEL_H
#define YOLO_INTEROP_PT_MODEL_H

#include <stddef.h>

#include "ckpt/meta.h"
#include "interop/pt_import.h"
#include "yolo/model.h"

/* Builds the .pt's architecture (its pickled yaml; opt->nc overrides the
 * class count as for a yaml) and loads its state dict by the exact rule
 * (ckpt/ckpt_tensors.h: every tensor with its shape, nothing unexpected,
 * no NaN or Inf; checked before anything loads), or fails naming the first
 * tensor that does not fit. With an opt->nc other than the file's the head
 * cannot load: the tensors that match by name and shape transfer instead
 * (a fine-tune's start; what does not goes to opt->log when given), and
 * none matching is an error. *loaded (may be NULL) counts the copies. */
yolo_status yolo_pt_build_model(const yolo_pt_model *pt, yolo_backend *backend, const yolo_model_options *opt,
                                yolo_model **out, size_t *loaded);
/* yolo_model_load for a path that yolo_pt_is_path. */
yolo_status yolo_pt_model_load(const char *path, yolo_backend *backend, const yolo_model_options *opt,
                               yolo_model **out);
/* The .pt's architecture alone (activations checked, batch-norm constants
 * set), its weights left at their initialisation and its storages not
 * read: for a model whose weights come from a checkpoint by its own rule
 * (a fine-tune's transfer, a resume). */
yolo_status yolo_pt_model_load_architecture(const char *path, yolo_backend *backend, const yolo_model_options *opt,
                                            yolo_model **out);

/* The parts of a checkpoint made from the .pt bytes: meta.yaml's tree
 * (task from the plugin that owns the head module, model_name = `name`,
 * nc, names, source_format "ultralytics-pt", batches_tracked) and an
 * ema.safetensors blob of the f32 weights. */
yolo_status yolo_pt_ckpt_parts(const void *data, size_t size, const char *name, yolo_meta **meta, uint8_t **blob,
                               size_t *blob_size);
/* meta.yaml's tree alone, from the pickle (the storages are not read). */
yolo_status yolo_pt_ckpt_meta(const void *data, size_t size, const char *name, yolo_meta **meta);

/* Ultralytics counts a fine-tune's "Transferred N/M items" over whole state
 * dicts, num_batches_tracked included: for a checkpoint made from a .pt
 * this adds one item per batch norm of `model` to *total, and to
 * *transferred when the .pt has a batch norm of that name (the scalar
 * matches whatever the channel count: yolov8n.pt onto 3 classes gives
 * Ultralytics' familiar 319/355). A no-op for other checkpoints. */
struct yolo_ckpt;
void yolo_pt_count_as_ultralytics(const struct yolo_ckpt *ck, const yolo_model *model, size_t *transferred,
                                  size_t *total);

#endif

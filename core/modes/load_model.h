/* The model val and predict evaluate: a checkpoint's, or a yaml's freshly
 * initialised one (said so). */
#ifndef YOLO_MODES_LOAD_MODEL_H
#define YOLO_MODES_LOAD_MODEL_H

#include "train/session.h"

yolo_status yolo_session_load_model(yolo_session *s);

/* end2end (Ultralytics 8.4; val, predict, export): null runs the model's
 * own head; False makes a YOLO26 model evaluate its one-to-many branch with
 * NMS; True on a model without the one-to-one head changes nothing (as in
 * Ultralytics) and says so. yolo_session_load_model calls it. */
yolo_status yolo_session_apply_end2end(yolo_session *s);

/* half=True (val, predict): runs the backend's reduced-precision kernels,
 * the ones amp=True trains with (bf16 convolutions on a CPU with
 * AVX512-BF16 or AMX, fp16 GEMM inputs on a Vulkan device with fp16), and
 * prints which; where the backend has none it runs fp32 and says why
 * (Ultralytics runs fp32 on a CPU without a word). Call before any graph
 * is built. */
yolo_status yolo_session_apply_half(yolo_session *s);

/* rect for val and predict: Ultralytics' Model.val and Model.predict default
 * it to True (default.yaml's False is train's), so only a rect=False given
 * in a cfg= file or on the command line turns it off. */
yolo_status yolo_session_eval_rect(const yolo_session *s, bool *rect);

#endif

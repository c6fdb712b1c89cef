/* safetensors_export.h — `yolo export format=safetensors` (see the .c). */
#ifndef YOLO_INTEROP_SAFETENSORS_EXPORT_H
#define YOLO_INTEROP_SAFETENSORS_EXPORT_H

#include <stdbool.h>

#include "yolo/model.h"

typedef struct yolo_safetensors_export_options {
    bool half;                /* store f16 */
    const char *task;
    const char *const *names; /* nc entries or NULL */
} yolo_safetensors_export_options;

/* Writes the (unfused) model's state dict to weights_path and its model
 * yaml (with nc and names) to yaml_path. */
yolo_status yolo_safetensors_export(const yolo_model *m, const yolo_safetensors_export_options *opt,
                                    const char *weights_path, const char *yaml_path);

#endif

/* The plugin ABI covers what a plugin sees: the layouts of the SDK's
 * structs (a plugin compiled against other headers reads other offsets).
 * Their sizes, and the offsets of yolo_tensor's fields, are recorded here
 * for the ABI version of sdk/include/yolo/plugin.h; a layout that changes
 * while the version stays fails this test. After a deliberate change: bump
 * YOLO_PLUGIN_ABI_MAJOR (MINOR only for fields appended to yolo_task or
 * yolo_task_hooks, which the core reads by minor, or to yolo_task_context,
 * which the core fills and a plugin of an older minor reads a prefix of)
 * and record the new layouts. LP64. */
#include <stddef.h>
#include <stdio.h>

#include "test_util.h"
#include "yolo/config.h"
#include "yolo/data.h"
#include "yolo/detection.h"
#include "yolo/graph.h"
#include "yolo/model.h"
#include "yolo/plugin.h"
#include "yolo/task.h"
#include "yolo/tensor.h"

#define RECORDED_ABI_MAJOR 1
#define RECORDED_ABI_MINOR 6 /* 1.6: yolo_task_hooks.predict_masks appended (the host API's segment masks); 1.5: a module flag (YOLO_MODULE_END2END, v10Detect), yolo_forward_ctx.inference and yolo_model_forward_inference; 1.4: functions only (yolo_module_reg_max, yolo_module_end2end, the model's end2end; detection's one-to-one head) */

typedef struct layout {
    const char *name;
    size_t now, recorded;
} layout;

#define LAYOUT(type, bytes) {#type, sizeof(type), bytes}
#define FIELD(field, at) {"yolo_tensor." #field, offsetof(yolo_tensor, field), at}

static const layout layouts[] = {
    LAYOUT(yolo_config_key, 56),
    LAYOUT(yolo_config_value, 48),
    LAYOUT(yolo_image, 16),
    LAYOUT(yolo_instances, 64),
    LAYOUT(yolo_label_context, 32),
    LAYOUT(yolo_label_repairs, 260),
    LAYOUT(yolo_data_spec, 24),
    LAYOUT(yolo_aug_record, 128),
    LAYOUT(yolo_image_meta, 24),
    LAYOUT(yolo_batch, 144),
    LAYOUT(yolo_graph_plan_info, 24),
    LAYOUT(yolo_arg, 64),
    LAYOUT(yolo_module_outputs, 136),
    LAYOUT(yolo_forward_ctx, 32), /* 1.5: inference appended; the core fills it, a plugin of an older minor reads a prefix */
    LAYOUT(yolo_module_type, 56),
    LAYOUT(yolo_param_init, 4),
    LAYOUT(yolo_conv_block, 80),
    LAYOUT(yolo_conv_layer, 40),
    LAYOUT(yolo_linear_layer, 24),
    LAYOUT(yolo_model_options, 48),
    LAYOUT(yolo_model_tensor, 16),
    LAYOUT(yolo_model_info, 32),
    LAYOUT(yolo_abi_version, 8),
    LAYOUT(yolo_task, 128), /* 1.2: task_keys_read appended, read by minor */
    LAYOUT(yolo_host_tensor, 48),
    LAYOUT(yolo_task_context, 72), /* 1.3: class_weights appended */
    LAYOUT(yolo_prediction_text, 16),
    LAYOUT(yolo_task_hooks, 160), /* 1.1: draw_predictions and metrics_plot appended, 1.6: predict_masks; read by minor */
    LAYOUT(yolo_tensor, 192),
    FIELD(dtype, 0),
    FIELD(ndim, 4),
    FIELD(shape, 8),
    FIELD(name, 40),
    FIELD(kind, 136),
    FIELD(requires_grad, 140),
    FIELD(grad, 144),
    FIELD(backend, 152),
    FIELD(buffer, 160),
    FIELD(offset, 168),
    FIELD(graph, 176),
    FIELD(node, 184),
    /* libyolo-detection's structs, which a box task's plugin allocates and
     * the library fills (yolo/detection.h): new data goes behind functions
     * (yolo_det_criterion_branch_of) or into padding (yolo_nms_params.end2end) */
    LAYOUT(yolo_tal_params, 16),
    LAYOUT(yolo_det_loss_params, 48),
    LAYOUT(yolo_det_gt_batch, 32),
    LAYOUT(yolo_det_assignment, 16),
    LAYOUT(yolo_det_loss_value, 48),
    LAYOUT(yolo_det_criterion_result, 136),
    LAYOUT(yolo_det_criterion_branch, 80),
    LAYOUT(yolo_nms_params, 40),
    LAYOUT(yolo_detection, 28),
    LAYOUT(yolo_ap_stats, 104),
    LAYOUT(yolo_ap_summary, 152),
    LAYOUT(yolo_det_eval, 72),
    LAYOUT(yolo_det_eval_view, 24),
    LAYOUT(yolo_det_task_eval, 432),
    LAYOUT(yolo_det_task_image, 32),
    LAYOUT(yolo_det_anchor_cache, 128),
    LAYOUT(yolo_det_branch, 368),
    LAYOUT(yolo_det_head, 4544),
    LAYOUT(yolo_det_one2one, 4416),
};

int main(void) {
    if (sizeof(void *) != 8 || sizeof(long) != 8) return test_skip("the layouts are recorded for LP64 targets");
    if (YOLO_PLUGIN_ABI_MAJOR != RECORDED_ABI_MAJOR || YOLO_PLUGIN_ABI_MINOR != RECORDED_ABI_MINOR) {
        CHECK_MSG(0, "plugin ABI %d.%d, layouts recorded for %d.%d: record them for the new version",
                  YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR, RECORDED_ABI_MAJOR, RECORDED_ABI_MINOR);
        return test_result("test_abi_layout");
    }
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        CHECK_MSG(layouts[i].now == layouts[i].recorded,
                  "%s: %zu bytes, %zu at plugin ABI %d.%d: plugins see this layout; bump the ABI and record it",
                  layouts[i].name, layouts[i].now, layouts[i].recorded, RECORDED_ABI_MAJOR, RECORDED_ABI_MINOR);
    printf("%zu layouts match plugin ABI %d.%d\n", sizeof layouts / sizeof *layouts, RECORDED_ABI_MAJOR,
           RECORDED_ABI_MINOR);
    return test_result("test_abi_layout");
}

/* Every key of default.yaml and what reads it (settings.h). A SETTING row
 * is the reader itself: yolo_settings_fill stores the key's value at that
 * offset. The other rows say who reads the key instead, or why a
 * non-default value is refused. */
#include <string.h>

#include "settings/settings.h"

#define FIELD(key, concern, type, field, kind)                                                                 \
    {key, YOLO_KEY_SETTING, concern, offsetof(type, field), kind, #type "." #field}
#define LAUNCH(key, field, kind) FIELD(key, YOLO_SETTINGS_LAUNCH, yolo_launch_settings, field, kind)
#define RUN(key, field, kind) FIELD(key, YOLO_SETTINGS_RUN, yolo_run_settings, field, kind)
#define OPTIM(key, field, kind) FIELD(key, YOLO_SETTINGS_OPTIM, yolo_optim_settings, field, kind)
#define LOADER(key, field, kind) FIELD(key, YOLO_SETTINGS_LOADER, yolo_loader_settings, field, kind)
#define AUGMENT(key) LOADER(#key, augment.key, YOLO_SETTING_FLOAT)
#define CKPT(key, field, kind) FIELD(key, YOLO_SETTINGS_CHECKPOINT, yolo_checkpoint_settings, field, kind)
#define VAL(key, field, kind) FIELD(key, YOLO_SETTINGS_VAL, yolo_val_settings, field, kind)
#define PREDICT(key, field, kind) FIELD(key, YOLO_SETTINGS_PREDICT, yolo_predict_settings, field, kind)
#define DIST(key, field, kind) FIELD(key, YOLO_SETTINGS_DIST, yolo_dist_settings, field, kind)
#define PICTURES(key, field, kind) FIELD(key, YOLO_SETTINGS_PICTURES, yolo_picture_settings, field, kind)
#define CORE(key, reader) {key, YOLO_KEY_CORE, 0, 0, 0, reader}
#define PLUGIN(key, reader) {key, YOLO_KEY_TASK_PLUGIN, 0, 0, 0, reader}
/* owned by open work (mixed precision, pictures): a value other than the
 * default prints one line saying it has no effect yet */
/* a value other than the default is an error saying `why` */
#define REFUSED(key, why) {key, YOLO_KEY_REFUSED, 0, 0, 0, why}
/* true is an error saying `why`; null and false are what runs */

#define I YOLO_SETTING_INT
#define I64 YOLO_SETTING_INT64
#define D YOLO_SETTING_DOUBLE
#define B YOLO_SETTING_BOOL
#define S YOLO_SETTING_STRING
#define V YOLO_SETTING_VALUE

/* The detection toolkit (libyolo-detection's eval and criterion) is read by
 * the box-based plugins, never by the core. */
#define DETECTION_EVAL "detection eval settings (yolo_det_eval), read by the detect/segment plugins"

const yolo_key_reader yolo_settings_keys[] = {
    CORE("task", "the CLI: which task plugin to load (cli/cli_config.c); the run directory's default project"),
    CORE("mode", "the CLI: which mode to run (cli/cli_config.c); the run directory's default name; the "
                 "detection eval settings (val or predict thresholds)"),
    LAUNCH("model", model, S),
    RUN("model", model, S),
    RUN("data", data, S),
    OPTIM("epochs", epochs, I),
    OPTIM("time", time, D),
    OPTIM("patience", patience, I),
    RUN("batch", batch_given, V),
    RUN("imgsz", imgsz_given, V),
    CKPT("save", save, B),
    PICTURES("save", save, B),
    CKPT("save_period", save_period, I),
    LOADER("cache", cache, V),
    RUN("device", device, S),
    CORE("device", "yolo_dist_requested_world (dist/launch.c): how many ranks the CLI re-launches under mpirun"),
    RUN("workers", workers, I),
    RUN("threads", threads, I),
    LAUNCH("project", project, S),
    CORE("project", "yolo_config_make_run_dir (cfg/config_output.c): the run directory"),
    CORE("name", "yolo_config_make_run_dir (cfg/config_output.c): the run directory"),
    CORE("exist_ok", "yolo_config_make_run_dir (cfg/config_output.c): the run directory"),
    CKPT("pretrained", pretrained, V),
    OPTIM("optimizer", optimizer, S),
    CORE("verbose", "yolo_mode_val (modes/mode_val.c): the confusion matrix printed; and the per-class rows of "
                    DETECTION_EVAL),
    RUN("seed", seed, I64),
    REFUSED("deterministic", "every path here is deterministic already (fixed reduction orders, seeded "
                             "augmentation); there is no faster non-deterministic path for false to allow"),
    PLUGIN("single_cls", DETECTION_EVAL),
    LOADER("rect", rect, B),
    CORE("rect", "yolo_session_eval_rect (modes/load_model.c): val's rect batches and predict's stride-padded "
                 "letterbox unless rect=False is given (Ultralytics' Model.val and Model.predict default it to True)"),
    OPTIM("cos_lr", cos_lr, B),
    LOADER("close_mosaic", augment.close_mosaic, I),
    LAUNCH("resume", resume, V),
    RUN("amp", amp_given, V),
    LOADER("fraction", fraction, D),
    RUN("profile", profile, B),
    OPTIM("freeze", freeze, V),
    LOADER("multi_scale", multi_scale_given, V),
    REFUSED("compile", "torch.compile is PyTorch's; the graphs here are planned once per batch shape already"),
    PLUGIN("overlap_mask", "the segment plugin (its loss and targets)"),
    PLUGIN("mask_ratio", "the segment plugin (its loss and targets)"),
    PLUGIN("dropout", "the classify plugin (its head)"),
    LAUNCH("world", world, I),
    CORE("world", "yolo_dist_requested_world (dist/launch.c): how many ranks the CLI re-launches under mpirun"),
    LAUNCH("dist_timeout", dist_timeout, D),
    DIST("dist_bucket_mb", bucket_mb, D),
    DIST("sync_bn", sync_bn, B),
    VAL("val", val, B),
    VAL("split", split_name, S),
    PICTURES("save_json", save_json, B),
    PLUGIN("conf", DETECTION_EVAL),
    PLUGIN("iou", DETECTION_EVAL),
    PLUGIN("max_det", DETECTION_EVAL),
    CKPT("half", half, B),
    REFUSED("dnn", "OpenCV DNN inference is not built: this build runs .pt and .ckpt models, not exported ones"),
    PICTURES("plots", plots, B),
    CORE("end2end", "yolo_session_apply_end2end (modes/load_model.c): YOLO26's one-to-one head or, False, its NMS one"),
    PREDICT("source", source, S),
    REFUSED("vid_stride", "videos are not built: extract frames (ffmpeg -i clip.mp4 -r 1 frames/%06d.jpg) and "
                          "predict on the folder"),
    REFUSED("stream_buffer", "streams are not built"),
    REFUSED("visualize", "feature-map pictures are not built"),
    REFUSED("augment", "test-time augmentation is not built"),
    PLUGIN("agnostic_nms", DETECTION_EVAL),
    PLUGIN("classes", DETECTION_EVAL "; the classify plugin"),
    PICTURES("retina_masks", retina_masks, B),
    REFUSED("embed", "feature embeddings are not built"),
    REFUSED("show", "no window is opened (no GUI code); save=True writes the pictures to the run directory"),
    REFUSED("save_frames", "videos are not built"),
    PREDICT("save_txt", save_txt, B),
    CORE("save_txt", "yolo_mode_val (modes/mode_val.c): labels/<stem>.txt per val image (train/prediction_txt.c)"),
    PLUGIN("save_conf", DETECTION_EVAL),
    PICTURES("save_crop", save_crop, B),
    PICTURES("show_labels", show_labels, B),
    PICTURES("show_conf", show_conf, B),
    PICTURES("show_boxes", show_boxes, B),
    CORE("line_width", "yolo_predict_pictures_open (train/predict_pictures.c): null, or pixels >= 1 (keys.c checks)"),
#define EXPORT "yolo export (interop/mode_export.c): "
    CORE("format", EXPORT "onnx or safetensors; any other format is refused by name"),
    CORE("keras", EXPORT "refused when true (TensorFlow formats are not built)"),
    CORE("optimize", EXPORT "refused when true (TorchScript is not built)"),
    CORE("int8", EXPORT "refused when true (int8 quantization is not built)"),
    CORE("dynamic", EXPORT "onnx: batch, height and width symbolic (Reshape targets and anchors from Shape ops)"),
    CORE("simplify", EXPORT "accepted: the traced graph has nothing left to fold; recorded in the metadata"),
    CORE("opset", EXPORT "the ONNX opset, 12 to 17"),
    CORE("workspace", EXPORT "refused when set (TensorRT is not built)"),
    CORE("nms", EXPORT "refused when true (NMS in the graph is not built)"),
#undef EXPORT
    OPTIM("lr0", lr0, D),
    OPTIM("lrf", lrf, D),
    OPTIM("momentum", momentum, D),
    OPTIM("weight_decay", weight_decay, D),
    OPTIM("warmup_epochs", warmup_epochs, D),
    OPTIM("warmup_momentum", warmup_momentum, D),
    OPTIM("warmup_bias_lr", warmup_bias_lr, D),
    PLUGIN("box", "the detection criterion (yolo_det_criterion), read by the detect/segment plugins"),
    PLUGIN("cls", "the detection criterion (yolo_det_criterion), read by the detect/segment plugins"),
    OPTIM("cls_pw", cls_pw, D),
    PLUGIN("dfl", "the detection criterion (yolo_det_criterion), read by the detect/segment plugins"),
    PLUGIN("label_smoothing", "the classify plugin (its loss)"),
    OPTIM("nbs", nbs, I),
    AUGMENT(hsv_h),
    AUGMENT(hsv_s),
    AUGMENT(hsv_v),
    AUGMENT(degrees),
    AUGMENT(translate),
    AUGMENT(scale),
    AUGMENT(shear),
    AUGMENT(perspective),
    AUGMENT(flipud),
    AUGMENT(fliplr),
    AUGMENT(bgr),
    AUGMENT(mosaic),
    AUGMENT(mixup),
    AUGMENT(cutmix),
    AUGMENT(copy_paste),
    LOADER("copy_paste_mode", copy_paste_mode, S),
    LOADER("auto_augment", auto_augment, S),
    AUGMENT(erasing),
    AUGMENT(crop_fraction),
    CORE("cfg", "the CLI: a yaml merged as the cfg layer (cli/cli_config.c)"),
    REFUSED("tracker", "the track mode is not built"),
};

const int yolo_settings_key_count = (int)(sizeof yolo_settings_keys / sizeof yolo_settings_keys[0]);

const yolo_key_reader *yolo_settings_find_key(const char *key, int *index) {
    for (; *index < yolo_settings_key_count; (*index)++)
        if (strcmp(yolo_settings_keys[*index].key, key) == 0) return &yolo_settings_keys[(*index)++];
    return NULL;
}

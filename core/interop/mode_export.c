/* `yolo export`: a model (a .pt, .ckpt or yaml) to ONNX or safetensors.
 *
 * Keys, as Ultralytics' exporter reads them:
 *   format     onnx | safetensors (any other format is refused by name)
 *   imgsz      the traced image size: an integer, or [h, w]; batch: the traced batch
 *              (1 unless given, as Ultralytics' Model.export sets it)
 *   opset      12..17 (null: 17)
 *   half       onnx: fp16 export needs a GPU in Ultralytics, which warns
 *              and exports fp32 on the CPU; we do the same. safetensors:
 *              the weights are stored in f16.
 *   simplify   accepted: BN is folded and the shapes are constants (or,
 *              with dynamic, computed once), which is what onnxslim would
 *              leave; nothing to do
 *   dynamic    onnx: batch, height and width symbolic (onnx_dynamic.c)
 *   nms, int8, keras, optimize, workspace   refused when set, each with its
 *              reason (not built / another format's option).
 * Files go beside the model: best.pt -> best.onnx (a yaml: into the current
 * folder). The model is fused (BN folded into the convolutions) for ONNX. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/modes.h"
#include "interop/export_meta.h"
#include "interop/onnx_export.h"
#include "interop/safetensors_export.h"
#include "modes/load_model.h"
#include "train/session.h"

/* The export keys are read here alone (settings_table.c: CORE rows). */
static bool cfg_bool(const yolo_config *cfg, const char *key, yolo_status *st) {
    bool v = false;
    yolo_status s = yolo_config_get_bool(cfg, key, &v);
    if (s && !*st) *st = s;
    return v;
}

static const char *cfg_string(const yolo_config *cfg, const char *key, yolo_status *st) {
    const char *v = NULL;
    if (yolo_config_is_null(cfg, key)) return NULL;
    yolo_status s = yolo_config_get_string(cfg, key, &v);
    if (s && !*st) *st = s;
    return v;
}

/* The output path: the model's path with the extension replaced. */
static void output_path(const char *model, const char *ext, bool is_yaml, char *out, size_t size) {
    const char *base = strrchr(model, '/');
    char stem[1024];
    snprintf(stem, sizeof stem, "%s", is_yaml ? (base ? base + 1 : model) : model);
    char *dot = strrchr(stem, '.');
    char *slash = strrchr(stem, '/');
    if (dot && (!slash || dot > slash)) *dot = '\0';
    snprintf(out, size, "%s%s", stem, ext);
}

static double file_mb(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (double)sb.st_size / 1e6 : 0.0;
}

/* Keys of other formats or features not built: refused when set. */
static yolo_status refuse_unbuilt(const yolo_config *cfg, const char *format) {
    static const struct {
        const char *key, *why;
    } flags[] = {
        {"dynamic", "dynamic input shapes are built for format=onnx only"},
        {"nms", "NMS inside the exported graph is not built (the output is the head's [B, 4+nc, anchors] map; run "
                "NMS on it as Ultralytics' predictor does)"},
        {"int8", "int8 quantization is not built (it applies to TensorRT, OpenVINO and TFLite formats)"},
        {"keras", "keras applies to TensorFlow SavedModel exports, which are not built"},
        {"optimize", "optimize applies to TorchScript mobile exports, which are not built"},
    };
    yolo_status st = YOLO_OK;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (!(i == 0 && !strcmp(format, "onnx")) && cfg_bool(cfg, flags[i].key, &st))
            return yolo_error(YOLO_ERR_CONFIG, "%s=True (%s) with format=%s: %s", flags[i].key,
                              yolo_config_source(cfg, flags[i].key), format, flags[i].why);
    if (st) return st;
    if (!yolo_config_is_null(cfg, "workspace"))
        return yolo_error(YOLO_ERR_CONFIG, "workspace (%s) is TensorRT's workspace size (format=engine, not built); "
                          "format=%s does not use it", yolo_config_source(cfg, "workspace"), format);
    return YOLO_OK;
}

static yolo_status export_onnx(yolo_session *s, const char *model_path, bool is_yaml, int batch, bool half,
                               char *wrote, size_t wrote_size) {
    yolo_status st = YOLO_OK;
    int opset = 17;
    int64_t opset_value = 17;
    if (!yolo_config_is_null(s->cfg, "opset")) st = yolo_config_get_int(s->cfg, "opset", &opset_value);
    opset = (int)opset_value;
    bool simplify = cfg_bool(s->cfg, "simplify", &st), dynamic = cfg_bool(s->cfg, "dynamic", &st);
    if (st) return st;
    /* opset's range, YOLO_ONNX_OPSET_MIN..MAX, is the key's (cfg/keys.c): checked where it was parsed */
    if (half)
        printf("WARNING: half=True only compatible with GPU export, i.e. use device=0 (Ultralytics' rule): "
               "exporting fp32\n");
    if ((st = yolo_model_fuse(s->model))) return st;
    /* YOLO26 running end2end (end2end=False exports the one-to-many output for NMS): output0 [B, max_det, 6] */
    const bool end2end = yolo_model_end2end(s->model);
    int64_t max_det = 300;
    if (end2end && !yolo_config_is_null(s->cfg, "max_det") && (st = yolo_config_get_int(s->cfg, "max_det", &max_det)))
        return st;
    const char *data = yolo_config_layer_of(s->cfg, "data") > YOLO_CONFIG_LAYER_TASK ? cfg_string(s->cfg, "data", &st)
                                                                                      : NULL;
    yolo_export_meta_input mi = {.model_name = yolo_model_name(s->model), .data = data, .version = YOLO_VERSION,
                                 .task = s->task->name, .stride = yolo_model_grid_stride(s->model), .batch = batch,
                                 .height = s->set.run.imgsz_h, .width = s->set.run.imgsz_w, .channels = yolo_model_in_channels(s->model),
                                 .opset = opset, .nc = yolo_model_nc(s->model), .half = false, .simplify = simplify,
                                 .dynamic = dynamic, .end2end = end2end,
                                 .names = s->tctx.names};
    yolo_export_meta meta;
    if ((st = yolo_export_meta_build(&mi, &meta))) return st;
    char path[1100];
    output_path(model_path, ".onnx", is_yaml, path, sizeof path);
    printf("ONNX: starting export with opset %d, input images [%d, %d, %d, %d]...\n", opset, batch,
           yolo_model_in_channels(s->model), s->set.run.imgsz_h, s->set.run.imgsz_w);
    yolo_onnx_options oo = {.batch = batch, .height = s->set.run.imgsz_h, .width = s->set.run.imgsz_w, .opset = opset,
                            .dynamic = dynamic, .metadata = meta.kv, .n_metadata = meta.n, .producer_version = YOLO_VERSION,
                            .end2end_k = end2end ? (int)max_det : 0};
    int n_out = 0;
    st = yolo_onnx_export(s->model, &oo, path, &n_out);
    yolo_export_meta_free(&meta);
    if (!st) printf("ONNX: export success, %d output%s, saved as '%s' (%.1f MB)\n", n_out, n_out == 1 ? "" : "s", path,
                    file_mb(path));
    if (!st && wrote) snprintf(wrote, wrote_size, "%s", path);
    return st;
}

static yolo_status export_safetensors(yolo_session *s, const char *model_path, bool is_yaml, bool half, char *wrote,
                                      size_t wrote_size) {
    char weights[1100], yaml[1100];
    output_path(model_path, ".safetensors", is_yaml, weights, sizeof weights);
    output_path(model_path, ".yaml", is_yaml, yaml, sizeof yaml);
    if (is_yaml && !strcmp(yaml, model_path))
        output_path(model_path, "-export.yaml", is_yaml, yaml, sizeof yaml); /* never over the source yaml */
    yolo_safetensors_export_options so = {.half = half, .task = s->task->name, .names = s->tctx.names};
    yolo_status st = yolo_safetensors_export(s->model, &so, weights, yaml);
    if (!st) printf("safetensors: export success (%s), saved as '%s' (%.1f MB) and '%s'\n", half ? "f16" : "f32",
                    weights, file_mb(weights), yaml);
    if (!st && wrote) snprintf(wrote, wrote_size, "%s", weights);
    return st;
}

yolo_status yolo_mode_export(const yolo_mode_context *ctx) {
    yolo_session s;
    yolo_session_options so = {.need_data = false, .checkpoint_args = true};
    yolo_status st = yolo_session_open(ctx, &s, &so);
    const char *format = NULL, *model = NULL;
    if (!st) format = cfg_string(s.cfg, "format", &st);
    if (!st) model = cfg_string(s.cfg, "model", &st);
    bool half = !st && cfg_bool(s.cfg, "half", &st);
    if (!st && (!format || (strcmp(format, "onnx") && strcmp(format, "safetensors"))))
        st = yolo_error(YOLO_ERR_CONFIG, "format=%s (%s): not built; built formats: onnx, safetensors",
                        format ? format : "null", yolo_config_source(s.cfg, "format"));
    if (!st) st = refuse_unbuilt(s.cfg, format);
    /* batch: 1 unless given, as Ultralytics' Model.export */
    int batch = !st && yolo_config_layer_of(s.cfg, "batch") > YOLO_CONFIG_LAYER_TASK ? s.set.run.batch : 1;
    if (!st && batch < 1) { /* AutoBatch's -1 / fraction sizes training batches only */
        char given[64] = "";
        yolo_config_format(s.cfg, "batch", given, sizeof given);
        st = yolo_error(YOLO_ERR_CONFIG, "batch=%s: export needs a batch of 1 or more images", given);
    }
    clock_t t0 = clock();
    if (!st) st = yolo_session_load_model(&s);
    if (!st && !model) model = s.model_name;
    bool is_yaml = model && strlen(model) > 5 && !strcmp(model + strlen(model) - 5, ".yaml");
    /* the host API's yolo_last_output: the file written */
    if (!st && !strcmp(format, "onnx")) st = export_onnx(&s, model, is_yaml, batch, half, ctx->wrote, ctx->wrote_size);
    else if (!st) st = export_safetensors(&s, model, is_yaml, half, ctx->wrote, ctx->wrote_size);
    if (!st) printf("Export complete (%.1fs CPU)\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
    yolo_session_close(&s);
    return st;
}

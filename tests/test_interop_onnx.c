/* Export (issue 16): the reference .pt models (YOLOv8n and YOLO11n detect,
 * segment, classify; yolo11n-cls from its yaml) exported to ONNX pass
 * onnx.checker (Debian's python3-onnx) and run in OpenCV's DNN module
 * (python3-opencv) and in ONNX Runtime (npm onnxruntime-node, CPU) with
 * outputs equal to our own fused forward to 1e-4 relative, at opsets 12
 * and 17; each consumer that is not installed is skipped with the reason.
 * `yolo export` writes Ultralytics' metadata and refuses what is not
 * built; format=safetensors writes weights and a yaml that rebuild the
 * same model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ckpt/safetensors.h"
#include "data/fsutil.h"
#include "interop/export_meta.h"
#include "interop/onnx_export.h"
#include "interop_util.h"
#include "plugin/plugin_loader.h"
#include "test_util.h"

static yolo_backend *be;
static const char *ref;
static char tmp[512];
static char python[64] = "python3";
static bool no_checker, no_opencv, no_ort;

static int run(const char *cmd) {
    int rc = system(cmd);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static bool read_f32(const char *path, float *out, int64_t n) {
    FILE *f = fopen(path, "rb");
    bool ok = f && fread(out, sizeof(float), (size_t)n, f) == (size_t)n && fgetc(f) == EOF;
    if (f) fclose(f);
    return ok;
}

/* One consumer's outputs against ours. */
static void compare(const char *consumer, const char *prefix, int n_out, float *const *ours, const int64_t *counts,
                    const char *label) {
    for (int k = 0; k < n_out; k++) {
        char path[1200];
        snprintf(path, sizeof path, "%s.output%d.f32", prefix, k);
        float *theirs = malloc(sizeof(float) * (size_t)counts[k]);
        bool ok = theirs && read_f32(path, theirs, counts[k]);
        CHECK_MSG(ok, "%s %s: output%d missing or of another size (%s)", label, consumer, k, path);
        if (ok) {
            double rel = interop_rel_diff(theirs, ours[k], counts[k]);
            printf("%-34s %-12s output%d: max |theirs - ours| / max |ours| = %.3g\n", label, consumer, k, rel);
            CHECK_MSG(rel <= 1e-4, "%s %s output%d: %.3g > 1e-4", label, consumer, k, rel);
        }
        free(theirs);
    }
}

/* ONNX Runtime on in_path (dims "N,C,H,W"), its outputs written to <prefix>.outputK.f32; 0 when it ran. */
static int ort_outputs(const char *onnx_path, const char *in_path, const char *dims, const char *prefix,
                       const char *label) {
    char cmd[8192];
    const char *ort_dir = getenv("YOLO_ORT_NODE_DIR");
    snprintf(cmd, sizeof cmd, "command -v node > /dev/null || exit 3; NODE_PATH='%s/node_modules' node "
             "'%s/tests/interop/ort_run.js' '%s' '%s' %s '%s' > '%s/ort.txt' 2>&1", ort_dir ? ort_dir : "",
             getenv("YOLO_SOURCE_DIR"), onnx_path, in_path, dims, prefix, tmp);
    int rc = run(cmd);
    if (rc == 3) no_ort = true;
    else CHECK_MSG(rc == 0, "%s: ONNX Runtime failed (see %s/ort.txt)", label, tmp);
    return rc;
}

/* ONNX Runtime's outputs against ours. */
static void run_ort(const char *onnx_path, const char *in_path, const char *dims, const char *prefix, int n_out,
                    float *const *ours, const int64_t *counts, const char *label) {
    if (ort_outputs(onnx_path, in_path, dims, prefix, label) == 0)
        compare("ONNXRuntime", prefix, n_out, ours, counts, label);
}

/* The input as raw f32 at in_path, and its dims "N,C,H,W". */
static void write_input(const char *in_path, const float *x, int64_t count, const int64_t *shape, char *dims,
                        size_t size) {
    FILE *f = fopen(in_path, "wb");
    if (f && x) fwrite(x, sizeof(float), (size_t)count, f);
    if (f) fclose(f);
    snprintf(dims, size, "%lld,%lld,%lld,%lld", (long long)shape[0], (long long)shape[1], (long long)shape[2],
             (long long)shape[3]);
}

/* python3-onnx's checker on the file. */
static void run_checker(const char *onnx_path, const char *label) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s '%s/tests/interop/onnx_consumers.py' check '%s' > '%s/check.txt' 2>&1", python,
             getenv("YOLO_SOURCE_DIR"), onnx_path, tmp);
    int rc = run(cmd);
    if (rc == 3) no_checker = true;
    else CHECK_MSG(rc == 0, "%s: onnx.checker failed (see %s/check.txt)", label, tmp);
}

static void check_export(const char *file, const char *input, int opset) {
    char path[1024], label[256];
    snprintf(label, sizeof label, "%s opset %d", file, opset);
    /* a model yaml (no reference checkpoint: yolo11n-cls) builds with its initial weights */
    if (strstr(file, ".yaml")) snprintf(path, sizeof path, "%s", file);
    else snprintf(path, sizeof path, "%s/%s", ref, file);
    yolo_model *m = NULL;
    CHECK_MSG(!yolo_model_load(path, be, NULL, &m) && !yolo_model_fuse(m), "%s: %s", path, yolo_last_error());
    if (!m) return;
    char ipath[1024];
    snprintf(ipath, sizeof ipath, "%s/%s", ref, input);
    int ndim = 0;
    int64_t shape[8], count = 0;
    float *x = npy_read_f32(ipath, &ndim, shape, &count);
    CHECK_MSG(x && ndim == 4, "cannot read %s", ipath);
    char onnx_path[1200], in_path[1200], prefix[1200], cmd[8192];
    snprintf(onnx_path, sizeof onnx_path, "%s/model-%d.onnx", tmp, opset);
    snprintf(in_path, sizeof in_path, "%s/input.f32", tmp);
    yolo_export_meta_input mi = {.model_name = yolo_model_name(m), .task = "test", .stride = 32, .batch = (int)shape[0],
                                 .height = (int)shape[2], .width = (int)shape[3], .channels = 3, .opset = opset,
                                 .nc = yolo_model_nc(m)};
    yolo_export_meta meta;
    CHECK(!yolo_export_meta_build(&mi, &meta));
    yolo_onnx_options oo = {.batch = (int)shape[0], .height = (int)shape[2], .width = (int)shape[3], .opset = opset,
                            .metadata = meta.kv, .n_metadata = meta.n};
    int n_out = 0;
    yolo_status st = x ? yolo_onnx_export(m, &oo, onnx_path, &n_out) : YOLO_ERR_IO;
    yolo_export_meta_free(&meta);
    CHECK_MSG(!st, "%s: export: %s", label, yolo_last_error());
    /* our own forward of the fused model, output by output */
    float *ours[2] = {0};
    int64_t counts[2] = {0}, oshape[4];
    yolo_graph *g = yolo_graph_new(be);
    yolo_tensor *in = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    yolo_model_outputs out;
    int last = !st && !yolo_model_forward(m, g, in, false, &out) ? out.n - 1 : 0;
    yolo_graph_free(g);
    for (int k = 0; !st && k < n_out; k++) ours[k] = interop_forward(m, x, shape, k == 0 ? 0 : last, &counts[k], oshape);
    const char *src = getenv("YOLO_SOURCE_DIR");
    char dims[64];
    write_input(in_path, x, count, shape, dims, sizeof dims);
    if (!st) {
        run_checker(onnx_path, label);
        snprintf(prefix, sizeof prefix, "%s/opencv", tmp);
        snprintf(cmd, sizeof cmd, "%s '%s/tests/interop/onnx_consumers.py' opencv '%s' '%s' %s '%s' output0%s > "
                 "'%s/opencv.txt' 2>&1", python, src, onnx_path, in_path, dims, prefix, n_out > 1 ? " output1" : "",
                 tmp);
        int rc = run(cmd);
        if (rc == 3) no_opencv = true;
        else CHECK_MSG(rc == 0, "%s: OpenCV failed (see %s/opencv.txt)", label, tmp);
        if (rc == 0) compare("OpenCV", prefix, n_out, ours, counts, label);
        snprintf(prefix, sizeof prefix, "%s/ort", tmp);
        run_ort(onnx_path, in_path, dims, prefix, n_out, ours, counts, label);
    }
    free(ours[0]);
    free(ours[1]);
    free(x);
    yolo_model_free(m);
}

/* The end2end models of tests/fixtures (`name`.pt: yolo26-e2e, YOLO26 at
 * reg_max 1; yolov10-e2e, YOLOv10 with DFL; yolo26-seg-e2e, YOLO26-seg):
 * exported end2end, output0 is Detect.postprocess's [B, k, 6] in the graph
 * (TopK, GatherElements), Segment.postprocess's [B, k, 6 + nm] with the
 * anchors' mask coefficients and output1 the prototypes for YOLO26-seg, as
 * Ultralytics exports them; ONNX Runtime's rows equal PyTorch's
 * postprocess (<name>.topk.npy), its prototypes <name>.proto.npy. OpenCV
 * 4.6 has no TopK layer: not run. */
static void check_export_end2end(const char *name, int opset) {
    const char *src = getenv("YOLO_SOURCE_DIR");
    if (!src) {
        printf("skipped the %s export: YOLO_SOURCE_DIR is not set (run through ctest)\n", name);
        return;
    }
    char path[1300], label[64], onnx_path[1200], in_path[1200], prefix[1200], dims[64];
    snprintf(label, sizeof label, "%s.pt opset %d", name, opset);
    snprintf(path, sizeof path, "%s/tests/fixtures/%s.pt", src, name);
    yolo_model *m = NULL;
    CHECK_MSG(!yolo_model_load(path, be, NULL, &m) && !yolo_model_fuse(m), "%s: %s", path, yolo_last_error());
    if (!m) return;
    int ndim = 0, rdim = 0;
    int64_t shape[8], rshape[8], count = 0, rcount = 0;
    snprintf(path, sizeof path, "%s/tests/fixtures/yolo26-input.npy", src);
    float *x = npy_read_f32(path, &ndim, shape, &count);
    snprintf(path, sizeof path, "%s/tests/fixtures/%s.topk.npy", src, name);
    float *ref = npy_read_f32(path, &rdim, rshape, &rcount);
    CHECK_MSG(x && ref && ndim == 4 && rdim == 3, "cannot read the %s fixtures in %s/tests/fixtures", name, src);
    snprintf(onnx_path, sizeof onnx_path, "%s/%s-%d.onnx", tmp, name, opset);
    snprintf(in_path, sizeof in_path, "%s/input26.f32", tmp);
    yolo_onnx_options oo = {.batch = (int)shape[0], .height = (int)shape[2], .width = (int)shape[3], .opset = opset,
                            .end2end_k = 300};
    int n_out = 0;
    const int width = ref ? (int)rshape[2] : 6, outputs = width > 6 ? 2 : 1; /* rows; the prototypes */
    yolo_status st = x && ref ? yolo_onnx_export(m, &oo, onnx_path, &n_out) : YOLO_ERR_IO;
    CHECK_MSG(!st && n_out == outputs, "%s: export: %d outputs (%s)", label, n_out, st ? yolo_last_error() : "");
    write_input(in_path, x, count, shape, dims, sizeof dims);
    if (!st) {
        run_checker(onnx_path, label);
        snprintf(prefix, sizeof prefix, "%s/ort26", tmp);
        int rc = ort_outputs(onnx_path, in_path, dims, prefix, label);
        float *theirs = malloc(sizeof(float) * (size_t)rcount);
        snprintf(path, sizeof path, "%s.output0.f32", prefix);
        if (rc == 0) {
            CHECK_MSG(theirs && read_f32(path, theirs, rcount), "%s: output0 is not [%lld, %lld, %d] (%s)", label,
                      (long long)rshape[0], (long long)rshape[1], width, path);
            double worst = 0;
            int unmatched = 0;
            for (int b = 0; theirs && b < rshape[0]; b++)
                unmatched += interop_match_rows(theirs + (size_t)b * rshape[1] * width,
                                                ref + (size_t)b * rshape[1] * width, (int)rshape[1], width,
                                                (float)shape[2], 1e-4, &worst);
            printf("%-34s %-12s output0: %lld rows [x1 y1 x2 y2 score class%s], unmatched %d, worst %.3g\n", label,
                   "ONNXRuntime", (long long)(rshape[0] * rshape[1]), width > 6 ? " coefficients" : "", unmatched,
                   worst);
            CHECK_MSG(unmatched == 0, "%s: %d rows of ONNX Runtime match none of Ultralytics' postprocess", label,
                      unmatched);
        }
        free(theirs);
        if (rc == 0 && outputs == 2) { /* the prototypes */
            int pdim = 0;
            int64_t pshape[8], pcount = 0;
            snprintf(path, sizeof path, "%s/tests/fixtures/%s.proto.npy", src, name);
            float *proto = npy_read_f32(path, &pdim, pshape, &pcount), *got = malloc(sizeof(float) * (size_t)pcount);
            snprintf(path, sizeof path, "%s.output1.f32", prefix);
            CHECK_MSG(proto && got && read_f32(path, got, pcount), "%s: output1 is not the %lld prototype values (%s)",
                      label, (long long)pcount, path);
            if (proto && got) {
                double rel = interop_rel_diff(got, proto, pcount);
                printf("%-34s %-12s output1: %lld prototype values, max |diff| / max |PyTorch| = %.3g\n", label,
                       "ONNXRuntime", (long long)pcount, rel);
                CHECK_MSG(rel <= 1e-4, "%s: output1 differs from PyTorch's prototypes by %.3g", label, rel);
            }
            free(proto);
            free(got);
        }
    }
    free(x);
    free(ref);
    yolo_model_free(m);
}

/* dynamic=True: one file exported at 1x3x320x320 runs in ONNX Runtime at
 * the reference input (2x3x320x320) and at 3x3x256x416 (a pattern), equal
 * to our forward at each size. OpenCV 4.6 cannot read Shape-computed
 * Reshape targets, so only ONNX Runtime runs it. */
static void check_dynamic(const char *file, int opset) {
    char path[1024], onnx_path[1200], in_path[1200], prefix[1200], label[256], dims[64];
    snprintf(path, sizeof path, "%s/%s", ref, file);
    yolo_model *m = NULL;
    CHECK_MSG(!yolo_model_load(path, be, NULL, &m) && !yolo_model_fuse(m), "%s: %s", path, yolo_last_error());
    if (!m) return;
    snprintf(onnx_path, sizeof onnx_path, "%s/dynamic-%d.onnx", tmp, opset);
    yolo_onnx_options oo = {.batch = 1, .height = 320, .width = 320, .opset = opset, .dynamic = true};
    int n_out = 0;
    yolo_status st = yolo_onnx_export(m, &oo, onnx_path, &n_out);
    CHECK_MSG(!st, "%s dynamic: export: %s", file, yolo_last_error());
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s '%s/tests/interop/onnx_consumers.py' check '%s' > '%s/check.txt' 2>&1", python,
             getenv("YOLO_SOURCE_DIR"), onnx_path, tmp);
    int rc = st ? 0 : run(cmd);
    if (rc == 3) no_checker = true;
    else CHECK_MSG(rc == 0, "%s dynamic: onnx.checker failed (see %s/check.txt)", file, tmp);
    static const int64_t sizes[2][4] = {{2, 3, 320, 320}, {3, 3, 256, 416}};
    for (int s = 0; !st && s < 2; s++) {
        int64_t n = sizes[s][0] * sizes[s][1] * sizes[s][2] * sizes[s][3], count = 0, oshape[4];
        float *x = NULL;
        if (s == 0) {
            char ipath[1024];
            int ndim = 0;
            int64_t shape[8];
            snprintf(ipath, sizeof ipath, "%s/input-2x3x320x320.npy", ref);
            x = npy_read_f32(ipath, &ndim, shape, &count);
        } else if ((x = malloc(sizeof(float) * (size_t)n))) {
            for (int64_t i = 0; i < n; i++) x[i] = (float)((i * 7919) % 1000) / 1000.0f;
            count = n;
        }
        CHECK_MSG(x && count == n, "%s dynamic: no input at size %d", file, s);
        if (!x || count != n) {
            free(x);
            continue;
        }
        snprintf(in_path, sizeof in_path, "%s/input-dyn.f32", tmp);
        FILE *f = fopen(in_path, "wb");
        if (f) fwrite(x, sizeof(float), (size_t)n, f);
        if (f) fclose(f);
        float *ours[2] = {0};
        int64_t counts[2] = {0};
        yolo_graph *g = yolo_graph_new(be);
        yolo_model_outputs out;
        int last = !yolo_model_forward(m, g, yolo_graph_input(g, "images", YOLO_F32, 4, sizes[s]), false, &out)
                       ? out.n - 1 : 0;
        yolo_graph_free(g);
        for (int k = 0; k < n_out; k++) ours[k] = interop_forward(m, x, sizes[s], k ? last : 0, &counts[k], oshape);
        snprintf(dims, sizeof dims, "%lld,%lld,%lld,%lld", (long long)sizes[s][0], (long long)sizes[s][1],
                 (long long)sizes[s][2], (long long)sizes[s][3]);
        snprintf(label, sizeof label, "%s dynamic at %s", file, dims);
        snprintf(prefix, sizeof prefix, "%s/ort-dyn", tmp);
        run_ort(onnx_path, in_path, dims, prefix, n_out, ours, counts, label);
        free(ours[0]);
        free(ours[1]);
        free(x);
    }
    yolo_model_free(m);
}

static bool file_has(const char *path, const char *needle) {
    uint8_t *text = NULL;
    size_t len = 0;
    bool found = !yolo_read_file(path, &text, &len) && strstr((const char *)text, needle);
    free(text);
    return found;
}

/* `yolo export` from the CLI: files, metadata, refusals. */
static void check_cli(void) {
    char args[2048], pt[1200], log[1200];
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    snprintf(args, sizeof args, "cp '%s/yolov8n-shapes.pt' '%s/shapes.pt'", ref, tmp);
    CHECK(run(args) == 0);
    snprintf(pt, sizeof pt, "%s/shapes.pt", tmp);
    snprintf(args, sizeof args, "detect export model=%s imgsz=160 opset=13", pt);
    CHECK_MSG(test_run_yolo(tmp, args) == 0, "export exited non-zero (see %s)", log);
    char onnx_path[1200], cmd[4096];
    snprintf(onnx_path, sizeof onnx_path, "%s/shapes.onnx", tmp);
    snprintf(cmd, sizeof cmd, "%s '%s/tests/interop/onnx_consumers.py' check '%s' > '%s/check.txt' 2>&1", python,
             getenv("YOLO_SOURCE_DIR"), onnx_path, tmp);
    int rc = run(cmd);
    if (rc != 3) {
        snprintf(log, sizeof log, "%s/check.txt", tmp);
        CHECK_MSG(rc == 0 && file_has(log, "metadata names: {0: 'circle', 1: 'rectangle', 2: 'triangle'}") &&
                      file_has(log, "metadata imgsz: [160, 160]") && file_has(log, "metadata stride: 32") &&
                      file_has(log, "metadata task: detect") && file_has(log, "metadata batch: 1") &&
                      file_has(log, "opset 13"),
                  "metadata of %s (see %s)", onnx_path, log);
    }
    /* imgsz=[h, w]: a rectangular input, and Ultralytics' metadata says it */
    snprintf(args, sizeof args, "detect export model=%s imgsz=96,160 opset=17", pt);
    CHECK_MSG(test_run_yolo(tmp, args) == 0, "export imgsz=96,160 exited non-zero (see %s/log.txt)", tmp);
    rc = run(cmd);
    if (rc != 3) {
        snprintf(log, sizeof log, "%s/check.txt", tmp);
        CHECK_MSG(rc == 0 && file_has(log, "metadata imgsz: [96, 160]") && file_has(log, "input images: [1, 3, 96, 160]"),
                  "imgsz=96,160: %s (see %s)", onnx_path, log);
    }
    /* YOLO26 (tests/fixtures/yolo26-e2e.pt): output0 [1, max_det, 6] and 'end2end': True; end2end=False the
     * one-to-many output [1, 4 + nc, anchors] for NMS, without the flag */
    snprintf(args, sizeof args, "cp '%s/tests/fixtures/yolo26-e2e.pt' '%s/y26.pt'", getenv("YOLO_SOURCE_DIR"), tmp);
    CHECK(run(args) == 0);
    snprintf(onnx_path, sizeof onnx_path, "%s/y26.onnx", tmp);
    snprintf(cmd, sizeof cmd, "%s '%s/tests/interop/onnx_consumers.py' check '%s' > '%s/check.txt' 2>&1", python,
             getenv("YOLO_SOURCE_DIR"), onnx_path, tmp);
    for (int e2e = 1; e2e >= 0; e2e--) {
        snprintf(args, sizeof args, "detect export model=%s/y26.pt imgsz=320 max_det=50%s", tmp,
                 e2e ? "" : " end2end=False");
        CHECK_MSG(test_run_yolo(tmp, args) == 0, "YOLO26 export%s exited non-zero (see %s/log.txt)",
                  e2e ? "" : " end2end=False", tmp);
        rc = run(cmd);
        if (rc != 3) {
            snprintf(log, sizeof log, "%s/check.txt", tmp);
            CHECK_MSG(rc == 0 && (e2e ? file_has(log, "output output0: [1, 50, 6]") && file_has(log, "metadata end2end: True")
                                      : file_has(log, "output output0: [1, 7, 2100]") && !file_has(log, "end2end")),
                      "YOLO26 export%s: %s (see %s)", e2e ? "" : " end2end=False", onnx_path, log);
        }
    }
    static const struct {
        const char *args, *needle;
    } refused[] = {{"format=tflite", "not built; built formats: onnx, safetensors"},
                   {"format=safetensors dynamic=True", "built for format=onnx only"},
                   {"nms=True", "NMS inside the exported graph is not built"},
                   {"int8=True", "int8 quantization is not built"},
                   {"opset=11", "'opset' must be in [12, 17]"},
                   {"workspace=4", "TensorRT"}};
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(args, sizeof args, "detect export model=%s imgsz=160 %s", pt, refused[i].args);
        rc = test_run_yolo(tmp, args);
        CHECK_MSG(rc != 0 && file_has(log, refused[i].needle), "%s: exit %d, no '%s' in %s", refused[i].args, rc,
                  refused[i].needle, log);
    }
}

/* format=safetensors: the yaml rebuilds the model, the weights load into it. */
static void check_safetensors(void) {
    char args[2048], path[1200], yaml[1200];
    char seg[1200];
    snprintf(seg, sizeof seg, "cp '%s/yolov8n-seg-coco8.pt' '%s/seg.pt'", ref, tmp);
    CHECK(run(seg) == 0);
    snprintf(args, sizeof args, "segment export format=safetensors half=True model=%s/seg.pt", tmp);
    CHECK_MSG(test_run_yolo(tmp, args) == 0, "safetensors export exited non-zero (see %s/log.txt)", tmp);
    snprintf(path, sizeof path, "%s/seg.safetensors", tmp);
    snprintf(yaml, sizeof yaml, "%s/seg.yaml", tmp);
    uint8_t *blob = NULL;
    size_t size = 0;
    yolo_st_file *st_file = NULL;
    CHECK_MSG(!yolo_read_file(path, &blob, &size) && !yolo_st_decode(blob, size, path, &st_file), "%s",
              yolo_last_error());
    yolo_model *rebuilt = NULL, *orig = NULL;
    char pt[1200];
    snprintf(pt, sizeof pt, "%s/seg.pt", tmp);
    CHECK_MSG(!yolo_model_load(yaml, be, NULL, &rebuilt), "%s: %s", yaml, yolo_last_error());
    CHECK_MSG(!yolo_model_load(pt, be, NULL, &orig), "%s", yolo_last_error());
    if (st_file && rebuilt && orig) {
        CHECK(yolo_model_tensor_count(rebuilt) == (int)yolo_st_count(st_file));
        const char *names = yolo_st_meta_get(st_file, "names");
        CHECK_MSG(names && !strncmp(names, "{0: 'person', 1: 'bicycle'", 26), "names metadata: %s", names);
        for (int i = 0; i < yolo_model_tensor_count(rebuilt); i++) {
            yolo_tensor *t = yolo_model_tensor_at(rebuilt, i)->tensor;
            const yolo_st_tensor *s = yolo_st_find(st_file, t->name);
            CHECK_MSG(s && s->dtype == YOLO_ST_F16 && yolo_st_numel(s) == yolo_tensor_numel(t), "%s", t->name);
            if (!s || yolo_st_numel(s) != yolo_tensor_numel(t)) continue;
            int64_t n = yolo_st_numel(s);
            float *v = malloc(sizeof(float) * (size_t)n), *o = malloc(sizeof(float) * (size_t)n);
            for (int64_t k = 0; k < n; k++) {
                uint16_t h;
                memcpy(&h, (const uint8_t *)s->data + 2 * k, 2);
                v[k] = yolo_f16_to_f32(h);
            }
            CHECK(!yolo_tensor_upload_f32(t, v, n));
            /* the .pt stores fp16 too: the round trip is exact */
            CHECK(!yolo_tensor_download_f32(yolo_model_find_tensor(orig, t->name), o, n));
            CHECK_MSG(interop_rel_diff(v, o, n) == 0, "%s differs after the f16 round trip", t->name);
            free(v);
            free(o);
        }
    }
    yolo_model_free(rebuilt);
    yolo_model_free(orig);
    yolo_st_file_free(st_file);
    free(blob);
}

int main(void) {
    if (!test_temp_dir(tmp, sizeof tmp)) return test_skip("no temporary directory");
    /* Debian's python3-onnx / python3-opencv live in the system python */
    if (run("test -x /usr/bin/python3") == 0) snprintf(python, sizeof python, "/usr/bin/python3");
    const yolo_task *task;
    if (yolo_plugin_load_task("detect", &task) || yolo_plugin_load_task("segment", &task) ||
        yolo_plugin_load_task("classify", &task) || yolo_backend_create("cpu", 0, &be)) {
        fprintf(stderr, "setup: %s\n", yolo_last_error());
        return 1;
    }
    /* the end2end models of tests/fixtures need no reference directory */
    check_export_end2end("yolo26-e2e", 17);
    check_export_end2end("yolo26-e2e", 12);
    check_export_end2end("yolov10-e2e", 17);
    check_export_end2end("yolo26-seg-e2e", 17);
    ref = interop_dir();
    if (!ref) {
        yolo_backend_free(be);
        if (test_failures) return test_result("test_interop_onnx");
        return test_skip("YOLO_INTEROP_DIR (default ../shared/interop) has no reference checkpoints; only the "
                         "end2end exports of tests/fixtures ran");
    }
    check_export("yolov8n-coco8.pt", "input-2x3x320x320.npy", 17);
    check_export("yolov8n-coco8.pt", "input-2x3x320x320.npy", 12);
    check_export("yolov8n-seg-coco8.pt", "input-2x3x320x320.npy", 17);
    check_export("yolov8n-cls-mnist160.pt", "input-2x3x64x64.npy", 12);
    check_export("yolov8n-cls-mnist160.pt", "input-2x3x64x64.npy", 17);
    /* YOLO11: C2PSA's attention as batched MatMul + Softmax */
    check_export("yolo11n-coco8.pt", "input-2x3x320x320.npy", 17);
    check_export("yolo11n-seg-coco8.pt", "input-2x3x320x320.npy", 12);
    check_export("yolo11n-cls.yaml", "input-2x3x64x64.npy", 13);
    /* YOLO12's area attention: bands cut by Slice, put back by Concat */
    check_export("yolo12n.yaml", "input-2x3x320x320.npy", 17);
    check_export("yolo12n.yaml", "input-2x3x320x320.npy", 12);
    /* YOLOv9's avg_pool2d (a depthwise conv of constant weights) and RepConvs merged by fusing */
    check_export("yolov9t.yaml", "input-2x3x320x320.npy", 17);
    /* activation: nn.Hardswish() (Ultralytics' DPU recipe): HardSwish from opset 14, x * HardSigmoid before */
    char hswish[700];
    snprintf(hswish, sizeof hswish, "%s/hswish-cls.yaml", tmp);
    FILE *y = fopen(hswish, "w");
    if (y) {
        fputs("nc: 10\nactivation: nn.Hardswish()\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n"
              "  - [-1, 1, Conv, [32, 3, 2]]\n  - [-1, 1, C2f, [32, True]]\nhead:\n  - [-1, 1, Classify, [nc]]\n",
              y);
        fclose(y);
    }
    check_export(hswish, "input-2x3x64x64.npy", 12);
    check_export(hswish, "input-2x3x64x64.npy", 17);
    check_dynamic("yolo11n-seg-coco8.pt", 17);
    check_dynamic("yolov8n-coco8.pt", 13);
    check_cli();
    check_safetensors();
    if (no_checker) printf("SKIPPED onnx.checker: python3-onnx is not installed (scripts/install-deps.sh)\n");
    if (no_opencv) printf("SKIPPED OpenCV: python3-opencv is not installed (scripts/install-deps.sh)\n");
    if (no_ort) printf("SKIPPED ONNX Runtime: node or onnxruntime-node is not installed (scripts/install-deps.sh)\n");
    yolo_backend_free(be);
    return test_result("test_interop_onnx");
}

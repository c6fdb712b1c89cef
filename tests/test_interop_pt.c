/* Ultralytics .pt import (core/interop): each reference checkpoint of
 * $YOLO_INTEROP_DIR builds and its eval forward on the reference input
 * equals PyTorch's stored output to 1e-4 relative (max |diff| / max |ref|);
 * the fixtures of tests/fixtures (make_pt_act_fixtures.py): a file whose
 * bare SPPF row holds an unactivated cv1 (Ultralytics' releases of 2026
 * before its fix) and an SPPF in 8.4's full form build what the file
 * holds, to PyTorch's output; one whose Convs run ReLU where its yaml says
 * nothing is refused, as a model and as a checkpoint;
 * the mid-training form (weights in `ema`) loads every tensor; a .pt reads
 * as a checkpoint (task, nc, names, weights); hostile or broken pickles are
 * refused with the file and what was found. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_file.h"
#include "data/fsutil.h"
#include "interop/pickle.h"
#include "interop/pt_import.h"
#include "interop/pt_model.h"
#include "interop_util.h"
#include "yolo/detection.h"
#include "plugin/plugin_loader.h"
#include "test_util.h"

static yolo_backend *be;
static const char *dir;

/* Builds <dir>/<name>.pt, runs it on `input` and compares output 0 (and the
 * prototypes of a segment model) with the stored PyTorch outputs. */
static void check_reference_in(const char *dir, const char *name, const char *input) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.pt", dir, name);
    yolo_model *m = NULL;
    yolo_status st = yolo_model_load(path, be, NULL, &m);
    CHECK_MSG(!st, "%s: %s", path, yolo_last_error());
    if (st) return;
    /* every state-dict tensor found a home, and every model tensor a source */
    yolo_pt_model *pt = NULL;
    CHECK_MSG(!yolo_pt_read(path, &pt), "%s", yolo_last_error());
    if (pt) {
        CHECK_MSG(pt->n_tensors == yolo_model_tensor_count(m), "%s: %d tensors in the .pt, %d in the model", name,
                  pt->n_tensors, yolo_model_tensor_count(m));
        for (int i = 0; i < yolo_model_tensor_count(m); i++) {
            const char *tn = yolo_model_tensor_at(m, i)->tensor->name;
            CHECK_MSG(yolo_pt_find(pt, tn), "%s: model tensor %s is not in the .pt", name, tn);
        }
        yolo_pt_free(pt);
    }
    char ipath[1024], opath[1024];
    snprintf(ipath, sizeof ipath, "%s/%s", dir, input);
    int ndim = 0, rdim = 0;
    int64_t ishape[8], rshape[8], icount = 0, rcount = 0, count = 0, oshape[4];
    float *x = npy_read_f32(ipath, &ndim, ishape, &icount);
    CHECK_MSG(x && ndim == 4, "cannot read %s", ipath);
    const char *suffix[2] = {"out0", "proto"};
    for (int which = 0; x && which < 2; which++) {
        snprintf(opath, sizeof opath, "%s/%s.%s.npy", dir, name, suffix[which]);
        float *ref = npy_read_f32(opath, &rdim, rshape, &rcount);
        if (!ref) {
            CHECK_MSG(which == 1, "cannot read %s", opath);
            break;
        }
        int k = 0;
        if (which == 1) { /* the prototypes are the segment head's last output */
            yolo_graph *g = yolo_graph_new(be);
            yolo_tensor *in = yolo_graph_input(g, "images", YOLO_F32, 4, ishape);
            yolo_model_outputs out;
            if (!yolo_model_forward(m, g, in, false, &out)) k = out.n - 1;
            yolo_graph_free(g);
        }
        float *got = interop_forward(m, x, ishape, k, &count, oshape);
        CHECK_MSG(got && count == rcount, "%s %s: forward gave %lld values, PyTorch %lld (%s)", name, suffix[which],
                  (long long)count, (long long)rcount, got ? "" : yolo_last_error());
        for (int d = 0; got && d < rdim && d < 4; d++)
            CHECK_MSG(oshape[d] == rshape[d], "%s %s: dim %d is %lld, PyTorch %lld", name, suffix[which], d,
                      (long long)oshape[d], (long long)rshape[d]);
        if (got && count == rcount) {
            double rel = interop_rel_diff(got, ref, count);
            printf("%-28s %-5s %lld values: max |ours - PyTorch| / max |PyTorch| = %.3g\n", name, suffix[which],
                   (long long)count, rel);
            CHECK_MSG(rel <= 1e-4, "%s %s: relative difference %.3g > 1e-4", name, suffix[which], rel);
        }
        free(got);
        free(ref);
    }
    free(x);
    yolo_model_free(m);
}

static void check_reference(const char *name, const char *input) { check_reference_in(dir, name, input); }

/* The inference forward of m on x: `outputs` outputs (a segment head's
 * prototypes after the first), output 0 the eval forward's (`eval`, count
 * values) bit for bit. */
static void check_inference_forward(yolo_model *m, const float *x, const int64_t ishape[4], const float *eval,
                                    int64_t count, int outputs, const char *name, const char *what) {
    int64_t n = 0, shape[4];
    int n_out = 0;
    float *y = x && eval ? interop_forward_mode(m, x, ishape, 0, true, &n, shape, &n_out) : NULL;
    const bool same = y && n == count && !memcmp(y, eval, sizeof(float) * (size_t)count);
    CHECK_MSG(n_out == outputs && same, "%s %s: the inference forward gave %d outputs, %lld values (%s the eval forward's bits)",
              name, what, n_out, (long long)n, same ? "with" : "not");
    free(y);
}

/* m's eval output 0 on x against <fixtures>/<name>.<suffix>.npy, to 1e-4
 * relative; `what` names it. With `outputs` > 0, the inference forward
 * too: that many outputs, output 0 the same bits. */
static void check_output0(yolo_model *m, const float *x, const int64_t ishape[4], const char *fixtures,
                          const char *name, const char *suffix, const char *what, int outputs) {
    char path[1200];
    int rdim = 0;
    int64_t rshape[8], rcount = 0, count = 0, oshape[4];
    float *got = x ? interop_forward(m, x, ishape, 0, &count, oshape) : NULL;
    if (outputs > 0) check_inference_forward(m, x, ishape, got, count, outputs, name, what);
    snprintf(path, sizeof path, "%s/%s.%s.npy", fixtures, name, suffix);
    float *ref = npy_read_f32(path, &rdim, rshape, &rcount);
    CHECK_MSG(got && ref && count == rcount, "%s %s: %lld values, PyTorch %lld", name, what, (long long)count,
              (long long)rcount);
    if (got && ref && count == rcount) {
        double rel = interop_rel_diff(got, ref, count);
        printf("%s %s: max |ours - PyTorch| / max |PyTorch| = %.3g\n", name, what, rel);
        CHECK_MSG(rel <= 1e-4, "%s %s: relative difference %.3g", name, what, rel);
    }
    free(got);
    free(ref);
}

/* <name>.pt fused (batch norms folded, re-parameterised blocks merged): its output is still PyTorch's */
static void check_fused_reference(const char *fixtures, const char *name, const char *input) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.pt", fixtures, name);
    yolo_model *m = NULL;
    if (yolo_model_load(path, be, NULL, &m) || yolo_model_fuse(m)) {
        CHECK_MSG(0, "%s: %s", path, yolo_last_error());
        yolo_model_free(m);
        return;
    }
    int ndim = 0;
    int64_t ishape[8], icount = 0;
    snprintf(path, sizeof path, "%s/%s", fixtures, input);
    float *x = npy_read_f32(path, &ndim, ishape, &icount);
    CHECK_MSG(x && ndim == 4, "cannot read %s", path);
    if (x) check_output0(m, x, ishape, fixtures, name, "out0", "fused", 0);
    free(x);
    yolo_model_free(m);
}

/* The end2end models of tests/fixtures, <name>.pt with <name>.out0/.topk/.o2m:
 * YOLO26 (make_pt_yolo26_fixture.py: 8.4's YOLO26 form with C3k2 attn
 * units, SPPF's residual, C2PSA and Detect at reg_max 1 with its
 * one-to-one branch), YOLOv10 (make_pt_yolov10_fixture.py: SCDown, PSA,
 * C2fCIB with RepVGGDW, v10Detect with DFL) and YOLO26-seg
 * (make_pt_yolo26_seg_fixture.py: Segment26 with Proto26, its mask
 * coefficients `extra` channels after the scores). The end2end output
 * equals PyTorch's; end2end=False gives the one-to-many branch;
 * yolo_e2e_select, with each row's anchor's coefficients after it, gives
 * Detect.postprocess's (Segment.postprocess's) rows. The inference forward
 * (predict's, `yolo val`'s) gives the eval output alone (and a segment
 * head's prototypes), the same bits, computing only the branch it decodes.
 * Fused (RepVGGDW's two convs one), the output stays PyTorch's. */
static void check_pt_end2end(const char *fixtures, const char *name, int reg_max, int extra) {
    check_reference_in(fixtures, name, "yolo26-input.npy");
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.pt", fixtures, name);
    yolo_model *m = NULL;
    if (yolo_model_load(path, be, NULL, &m)) {
        CHECK_MSG(0, "%s: %s", path, yolo_last_error());
        return;
    }
    const int nc = yolo_model_nc(m), width = 6 + extra, outputs = extra ? 2 : 1;
    CHECK_MSG(yolo_model_end2end(m) && yolo_model_reg_max(m) == reg_max, "%s.pt: end2end %d, reg_max %d", name,
              yolo_model_end2end(m), yolo_model_reg_max(m));
    int ndim, rdim;
    int64_t ishape[8], rshape[8], icount = 0, rcount = 0, count = 0, oshape[4] = {0};
    snprintf(path, sizeof path, "%s/yolo26-input.npy", fixtures);
    float *x = npy_read_f32(path, &ndim, ishape, &icount);
    float *got = x ? interop_forward(m, x, ishape, 0, &count, oshape) : NULL;
    check_inference_forward(m, x, ishape, got, count, outputs, name, "end2end");
    snprintf(path, sizeof path, "%s/%s.topk.npy", fixtures, name);
    float *ref = npy_read_f32(path, &rdim, rshape, &rcount);
    const bool shapes = got && ref && rdim == 3 && rshape[0] == oshape[0] && rshape[2] == width &&
                        oshape[1] == 4 + nc + extra;
    CHECK_MSG(shapes, "%s forward or %s: %s", name, path, yolo_last_error());
    if (shapes) {
        const int A = (int)oshape[2], k = (int)rshape[1], C = 4 + nc + extra;
        yolo_nms_params p = yolo_nms_default_params();
        p.conf = -1.0f; /* every one of the k rows */
        yolo_detection dets[300];
        float *rows = malloc(sizeof(float) * 300 * (size_t)width);
        double worst = 0;
        int mismatched = 0;
        for (int b = 0; rows && b < oshape[0]; b++) {
            int n = 0;
            const float *pred = got + (size_t)b * C * A;
            CHECK_MSG(!yolo_e2e_select(pred, nc, A, &p, dets, &n), "%s", yolo_last_error());
            CHECK_MSG(n == k, "image %d: %d rows, Ultralytics' postprocess %d", b, n, k);
            for (int i = 0; i < n && i < k; i++) {
                float *row = rows + (size_t)i * width;
                memcpy(row, dets[i].box, 4 * sizeof(float));
                row[4] = dets[i].score, row[5] = (float)dets[i].cls;
                for (int c = 0; c < extra; c++) row[6 + c] = pred[(size_t)(4 + nc + c) * A + dets[i].anchor];
            }
            mismatched += interop_match_rows(rows, ref + (size_t)b * k * width, n < k ? n : k, width, 64.0f, 1e-4,
                                             &worst);
        }
        free(rows);
        printf("%s topk: %lld rows of %d, unmatched %d, max |box| / 64, |score| (and |coefficient|) difference %.3g\n",
               name, (long long)(rshape[0] * k), width, mismatched, worst);
        CHECK_MSG(mismatched == 0, "%s top-k: %d rows match none of Ultralytics' postprocess", name, mismatched);
    }
    free(got);
    free(ref);
    /* end2end=False: the one-to-many branch, decoded as Detect's NMS layout (a segment head: cv4's coefficients) */
    yolo_model_set_end2end(m, false);
    check_output0(m, x, ishape, fixtures, name, "o2m", "one-to-many", outputs);
    /* fused (batch norms folded; YOLOv10's RepVGGDW one 7x7 conv): PyTorch's end2end output still */
    yolo_model_set_end2end(m, true);
    CHECK_MSG(!yolo_model_fuse(m), "%s: fuse: %s", name, yolo_last_error());
    check_output0(m, x, ishape, fixtures, name, "out0", "fused", 0);
    free(x);
    yolo_model_free(m);
}

/* The training forward's semantic logits (Segment26's output before the
 * prototypes) of m on x: batch statistics, as PyTorch's train mode. */
static float *training_semseg(yolo_model *m, const float *x, const int64_t ishape[4], int64_t *count) {
    yolo_graph *g = yolo_graph_new(be);
    yolo_tensor *in = yolo_graph_input(g, "images", YOLO_F32, 4, ishape);
    yolo_model_outputs out;
    yolo_graph_plan_info info;
    float *data = NULL;
    if (!yolo_model_forward(m, g, in, true, &out) && out.n >= 2 && !yolo_graph_mark_output(g, out.t[out.n - 2]) &&
        !yolo_graph_plan(g, &info) && !yolo_tensor_upload_f32(in, x, ishape[0] * ishape[1] * ishape[2] * ishape[3]) &&
        !yolo_graph_run(g)) {
        *count = yolo_tensor_numel(out.t[out.n - 2]);
        data = malloc(sizeof(float) * (size_t)*count);
        if (data && yolo_tensor_download_f32(out.t[out.n - 2], data, *count)) {
            free(data);
            data = NULL;
        }
    }
    yolo_graph_free(g);
    return data;
}

/* YOLO26-seg's training forward: Proto26's semantic logits equal
 * PyTorch's train mode (batch statistics) on the fixture's input. */
static void check_pt_yolo26_semseg(const char *fixtures) {
    const char *name = "yolo26-seg-e2e";
    char path[1200];
    int ndim, rdim;
    int64_t ishape[8], rshape[8], icount = 0, rcount = 0, count = 0;
    snprintf(path, sizeof path, "%s/yolo26-input.npy", fixtures);
    float *x = npy_read_f32(path, &ndim, ishape, &icount);
    snprintf(path, sizeof path, "%s/%s.pt", fixtures, name);
    yolo_model *m = NULL;
    CHECK_MSG(!yolo_model_load(path, be, NULL, &m), "%s: %s", path, yolo_last_error());
    float *got = x && m ? training_semseg(m, x, ishape, &count) : NULL;
    snprintf(path, sizeof path, "%s/%s.semseg.npy", fixtures, name);
    float *ref = npy_read_f32(path, &rdim, rshape, &rcount);
    CHECK_MSG(got && ref && count == rcount, "%s semseg: %lld values, PyTorch %lld (%s)", name, (long long)count,
              (long long)rcount, got ? "" : yolo_last_error());
    if (got && ref && count == rcount) {
        double rel = interop_rel_diff(got, ref, count);
        printf("%s semseg (training): max |ours - PyTorch| / max |PyTorch| = %.3g\n", name, rel);
        CHECK_MSG(rel <= 1e-4, "%s semseg: relative difference %.3g", name, rel);
    }
    free(got);
    free(ref);
    free(x);
    yolo_model_free(m);
}

/* The acts of tests/fixtures' .pt files (make_pt_act_fixtures.py). */
static void check_pt_acts(void) {
    const char *src = getenv("YOLO_SOURCE_DIR");
    if (!src) {
        printf("skipped the .pt activation fixtures: YOLO_SOURCE_DIR is not set (run through ctest)\n");
        return;
    }
    char fixtures[1024], path[1200];
    snprintf(fixtures, sizeof fixtures, "%s/tests/fixtures", src);
    snprintf(path, sizeof path, "%s/sppf-2026-cls.pt", fixtures);
    yolo_pt_model *pt = NULL;
    CHECK_MSG(!yolo_pt_read(path, &pt), "%s", yolo_last_error());
    if (pt) {
        const char *cv1 = yolo_pt_act_of(pt, "model.2.cv1"), *cv2 = yolo_pt_act_of(pt, "model.2.cv2");
        CHECK_MSG(cv1 && !strcmp(cv1, "Identity") && cv2 && !strcmp(cv2, "SiLU"), "model.2: cv1 %s, cv2 %s",
                  cv1 ? cv1 : "none", cv2 ? cv2 : "none");
        /* the bare row written out in full; the full one as it was */
        CHECK_MSG(strstr(pt->yaml_text, "[-1, 1, SPPF, [32, 5, 3, false]]") &&
                      strstr(pt->yaml_text, "[-1, 1, SPPF, [32, 5, 3, true]]"),
                  "%s", pt->yaml_text);
        yolo_pt_free(pt);
    }
    check_reference_in(fixtures, "sppf-2026-cls", "sppf-2026-input.npy");
    snprintf(path, sizeof path, "%s/relu-act-cls.pt", fixtures);
    yolo_model *m = NULL;
    yolo_status st = yolo_model_load(path, be, NULL, &m);
    CHECK_MSG(st == YOLO_ERR_UNSUPPORTED && test_error_mentions("relu-act-cls.pt") &&
                  test_error_mentions("model.0.act is ReLU in the file") && test_error_mentions("builds SiLU"),
              "%s", st ? yolo_last_error() : "loaded");
    yolo_model_free(m);
    /* activation: nn.Hardswish() in the yaml and Hardswish in every default act: built so, PyTorch's numbers */
    snprintf(path, sizeof path, "%s/hswish-cls.pt", fixtures);
    pt = NULL;
    CHECK_MSG(!yolo_pt_read(path, &pt), "%s", yolo_last_error());
    if (pt) {
        const char *act = yolo_pt_act_of(pt, "model.0");
        CHECK_MSG(act && !strcmp(act, "Hardswish") && strstr(pt->yaml_text, "activation: nn.Hardswish()"),
                  "model.0: %s; yaml:\n%s", act ? act : "none", pt->yaml_text);
        yolo_pt_free(pt);
    }
    check_reference_in(fixtures, "hswish-cls", "sppf-2026-input.npy");
    check_pt_end2end(fixtures, "yolo26-e2e", 1, 0);
    check_pt_end2end(fixtures, "yolov10-e2e", YOLO_DET_REG_MAX, 0);
    check_pt_end2end(fixtures, "yolo26-seg-e2e", 1, 32);
    check_pt_yolo26_semseg(fixtures);
    /* YOLO12's A2C2f: area attention over 4 bands and over the whole map, gamma residuals, C3k blocks */
    check_reference_in(fixtures, "yolo12-mini", "yolo26-input.npy");
    /* YOLOv9's GELAN modules with RepConv; fused (each RepConv one 3x3 conv), PyTorch's output still */
    check_reference_in(fixtures, "yolov9-mini", "yolo26-input.npy");
    check_fused_reference(fixtures, "yolov9-mini", "yolo26-input.npy");
}

/* The mid-training last.pt: `model` is None, the weights are the EMA's. */
static void check_mid_training(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/yolov8n-coco8-epoch1-last.pt", dir);
    yolo_pt_model *pt = NULL;
    CHECK_MSG(!yolo_pt_read(path, &pt), "%s", yolo_last_error());
    if (!pt) return;
    CHECK(pt->from_ema);
    CHECK(pt->epoch == 0);
    CHECK(pt->nc == 80 && pt->n_names == 80 && !strcmp(pt->names[0], "person"));
    yolo_model *m = NULL;
    size_t loaded = 0;
    CHECK_MSG(!yolo_pt_build_model(pt, be, NULL, &m, &loaded), "%s", yolo_last_error());
    CHECK_MSG(m && loaded == (size_t)yolo_model_tensor_count(m) && pt->n_tensors == (int)loaded,
              "loaded %zu of %d tensors (.pt has %d)", loaded, m ? yolo_model_tensor_count(m) : -1, pt->n_tensors);
    CHECK(pt->n_batches_tracked == 57); /* yolov8n's batch norms */
    yolo_model_free(m);
    yolo_pt_free(pt);
}

/* A .pt read as a checkpoint: what val, predict and fine-tuning see; and
 * its meta alone (the CLI's task, a fine-tune's args), from the pickle. */
static void check_as_checkpoint(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/yolov8n-seg-coco8.pt", dir);
    yolo_ckpt *ck = NULL;
    CHECK_MSG(!yolo_ckpt_read_meta(path, &ck), "%s", yolo_last_error());
    if (ck) {
        CHECK(!strcmp(yolo_ckpt_get_info(ck)->task, "segment") && !yolo_ckpt_get_blob(ck, YOLO_CKPT_EMA));
        CHECK(yolo_meta_get(yolo_ckpt_meta(ck), "names") && yolo_meta_size(yolo_meta_get(yolo_ckpt_meta(ck), "names")) == 80);
        yolo_ckpt_free(ck);
    }
    yolo_pt_model *header = NULL;
    size_t size = 0;
    uint8_t *bytes = NULL;
    CHECK(yolo_read_file(path, &bytes, &size) == YOLO_OK);
    CHECK_MSG(bytes && !yolo_pt_read_header_memory(bytes, size, path, &header), "%s", yolo_last_error());
    if (header) {
        const yolo_pt_tensor *w = yolo_pt_find(header, "model.22.proto.cv1.conv.weight");
        CHECK(w && !w->data && w->ndim == 4 && w->shape[1] == 64 && header->n_tensors > 100 && header->yaml_text);
        yolo_pt_free(header);
    }
    free(bytes);
    CHECK_MSG(!yolo_ckpt_read(path, &ck), "%s", yolo_last_error());
    if (!ck) return;
    CHECK_MSG(!strcmp(yolo_ckpt_get_info(ck)->task, "segment"), "task %s", yolo_ckpt_get_info(ck)->task);
    const yolo_meta *meta = yolo_ckpt_meta(ck);
    CHECK(yolo_meta_get(meta, "nc") && yolo_meta_int(yolo_meta_get(meta, "nc")) == 80);
    CHECK(yolo_meta_get(meta, "names") && yolo_meta_size(yolo_meta_get(meta, "names")) == 80);
    CHECK(!strcmp(yolo_meta_str(yolo_meta_get(meta, "model_name")), path));
    const yolo_st_tensor *w = yolo_ckpt_get_tensor(ck, YOLO_CKPT_EMA, "model.22.proto.cv1.conv.weight");
    CHECK(w && w->dtype == YOLO_ST_F32 && w->ndim == 4 && w->shape[1] == 64);
    CHECK(!yolo_ckpt_get_tensor(ck, YOLO_CKPT_EMA, "model.0.bn.num_batches_tracked"));
    yolo_ckpt_free(ck);
}

/* ---- hostile and broken inputs ---- */

static void expect_refused(const char *label, const void *pkl, size_t n, const char *needle) {
    yolo_pickle *p = NULL;
    yolo_status st = yolo_pickle_parse(pkl, n, "evil.pt", &p);
    CHECK_MSG(st == YOLO_ERR_FORMAT && test_error_mentions("evil.pt") && test_error_mentions(needle),
              "%s: status %d, message: %s", label, st, yolo_last_error());
    yolo_pickle_free(p);
}

static void check_refusals(void) {
    /* os.system('echo pwned'): the classic payload */
    static const char evil[] = "\x80\x02" "cposix\nsystem\n" "X\x0a\x00\x00\x00" "echo pwned" "\x85R.";
    expect_refused("posix.system", evil, sizeof evil - 1, "posix.system");
    static const char builtins_eval[] = "\x80\x02" "c__builtin__\neval\n" "X\x01\x00\x00\x00" "1" "\x85R.";
    expect_refused("eval", builtins_eval, sizeof builtins_eval - 1, "__builtin__.eval");
    /* an allowed class may not be called through REDUCE as a function it is not */
    static const char newobj_fn[] = "\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n)\x81.";
    expect_refused("NEWOBJ of a function", newobj_fn, sizeof newobj_fn - 1, "NEWOBJ");
    static const char truncated[] = "\x80\x02}q\x00(X\x05\x00\x00\x00ab";
    expect_refused("truncated", truncated, sizeof truncated - 1, "truncated");
    static const char unknown_op[] = "\x80\x02\xff.";
    expect_refused("unknown opcode", unknown_op, sizeof unknown_op - 1, "0xff");
    static const char bad_get[] = "\x80\x02h\x07.";
    expect_refused("GET before PUT", bad_get, sizeof bad_get - 1, "never PUT");
    static const char no_stop[] = "\x80\x02N";
    expect_refused("no STOP", no_stop, sizeof no_stop - 1, "without STOP");
    static const char proto4[] = "\x80\x04N.";
    expect_refused("protocol 4", proto4, sizeof proto4 - 1, "protocol 4");
    /* a storage view reaching past its storage */
    static const char view[] = "\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n"
                               "((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0"
                               "X\x03\x00\x00\x00" "cpuK\x04tQK\x00K\x05\x85K\x01\x85\x89}tR.";
    expect_refused("view past storage", view, sizeof view - 1, "reaches element 4");
    /* a well-formed pickle that is not a checkpoint dict, inside a zip */
    yolo_pt_model *pt = NULL;
    static const char not_zip[] = "hello";
    yolo_status st = yolo_pt_read_memory(not_zip, 5, "hello.pt", &pt);
    CHECK_MSG(st == YOLO_ERR_FORMAT && test_error_mentions("hello.pt") && test_error_mentions("not a zip"), "%s",
              yolo_last_error());
    /* a good pickle parses: {'a': [1, 2.5, None, True]} */
    static const char good[] = "\x80\x02}q\x00X\x01\x00\x00\x00" "a]q\x01(K\x01G\x40\x04\x00\x00\x00\x00\x00\x00N\x88" "es.";
    yolo_pickle *p = NULL;
    CHECK_MSG(!yolo_pickle_parse((const uint8_t *)good, sizeof good - 1, "good", &p), "%s", yolo_last_error());
    const yolo_pk_value *a = p ? yolo_pk_dict_get(yolo_pickle_root(p), "a") : NULL;
    CHECK(a && a->kind == YOLO_PK_LIST && a->n == 4 && a->items[0]->i == 1 && a->items[1]->f == 2.5 &&
          a->items[2]->kind == YOLO_PK_NONE && a->items[3]->b);
    yolo_pickle_free(p);
    /* {'fitness': np.float64(0.5)} as NumPy 2 pickles it (numpy._core): a last.pt's train_metrics */
    static const char numpy2[] =
        "\x80\x02}q\x00X\x07\x00\x00\x00" "fitnessq\x01" "cnumpy._core.multiarray\nscalar\nq\x02" "cnumpy\ndtype\nq\x03"
        "X\x02\x00\x00\x00" "f8q\x04\x89\x88\x87q\x05Rq\x06(K\x03X\x01\x00\x00\x00<q\x07NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xff"
        "K\x00tq\x08" "bc_codecs\nencode\nq\tX\t\x00\x00\x00\x00\x00\x00\x00\x00\x00\xc3\xa0?q\n"
        "X\x06\x00\x00\x00" "latin1q\x0b\x86q\x0cRq\r\x86q\x0eRq\x0fs.";
    p = NULL;
    CHECK_MSG(!yolo_pickle_parse((const uint8_t *)numpy2, sizeof numpy2 - 1, "numpy2", &p), "%s", yolo_last_error());
    const yolo_pk_value *fitness = p ? yolo_pk_dict_get(yolo_pickle_root(p), "fitness") : NULL;
    CHECK(fitness && fitness->kind == YOLO_PK_OBJECT && strstr(fitness->s, "numpy._core.multiarray.scalar"));
    yolo_pickle_free(p);
}

int main(void) {
    const yolo_task *task;
    if (yolo_plugin_load_task("detect", &task) || yolo_plugin_load_task("segment", &task) ||
        yolo_plugin_load_task("classify", &task)) {
        fprintf(stderr, "plugins: %s\n", yolo_last_error());
        return 1;
    }
    if (yolo_backend_create("cpu", 0, &be)) {
        fprintf(stderr, "cpu backend: %s\n", yolo_last_error());
        return 1;
    }
    check_refusals();
    check_pt_acts();
    dir = interop_dir();
    if (!dir) {
        yolo_backend_free(be);
        if (test_failures) return test_result("test_interop_pt");
        return test_skip("YOLO_INTEROP_DIR (default ../shared/interop) has no reference files; only the pickle "
                         "refusals and tests/fixtures' .pt files ran");
    }
    check_reference("yolov8n-coco8", "input-2x3x320x320.npy");
    check_reference("yolov8n-seg-coco8", "input-2x3x320x320.npy");
    check_reference("yolov8n-cls-mnist160", "input-2x3x64x64.npy");
    check_reference("yolo11n-coco8", "input-2x3x320x320.npy");
    check_reference("yolo11n-seg-coco8", "input-2x3x320x320.npy");
    check_mid_training();
    check_as_checkpoint();
    yolo_backend_free(be);
    return test_result("test_interop_pt");
}

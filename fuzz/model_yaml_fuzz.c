/* Fuzzing the model yaml parser (model_spec_parse: structure, row shapes,
 * `from` references, scales, argument scalars) through to the size a yaml
 * asks for (model_size.c's estimate and check, at every scale it lists, or
 * its YOLOv5 multiples). What parses must have rows whose `from` names
 * earlier layers and whose repeats are in [1, 1000], scales and multiples
 * in range, and an estimate that is a finite count which the check refuses
 * exactly when it passes the limit, naming the file; a failure must name
 * the file. An out-of-memory is a finding (tests/fuzz.cmake caps the
 * driver's memory: a few KB of yaml never needs hundreds of MB). Building
 * the modules is not fuzzed here (it runs a probe forward: too slow per
 * input). Corpus: fuzz/corpus/model_yaml (the embedded yolov8 yamls and a
 * tiny one). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "nn/model_size.h"
#include "nn/model_yaml.h"

static void check_size(const model_spec *spec, const model_scale *scale, int nc) {
    FUZZ_INVARIANT(scale->depth > 0 && scale->depth <= 4 && scale->width > 0 && scale->width <= 4);
    FUZZ_INVARIANT(scale->max_channels >= 1 && (scale->line == 0 || scale->max_channels <= 8192));
    model_size size;
    model_size_estimate(spec, scale, nc, spec->ch, &size);
    FUZZ_INVARIANT(isfinite(size.params) && size.params >= 0 && size.largest <= size.params);
    yolo_status st = model_size_check(spec, scale, nc, spec->ch);
    FUZZ_INVARIANT((st == YOLO_OK) == (size.params <= (double)YOLO_MODEL_MAX_PARAMS));
    if (st) FUZZ_INVARIANT(strstr(yolo_last_error(), "fuzz-model.yaml") && size.largest_row >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size ? size : 1); /* no terminator: the parser must honour size */
    memcpy(text, data, size);
    model_spec spec;
    yolo_status st = model_spec_parse("fuzz-model.yaml", text, size, &spec);
    FUZZ_INVARIANT(st != YOLO_ERR_NOMEM);
    if (st == YOLO_OK) {
        for (int i = 0; i < spec.n_rows; i++) {
            const model_row *r = &spec.rows[i];
            FUZZ_INVARIANT(r->module && r->n_from >= 1 && r->n_from <= YOLO_MODULE_MAX_INPUTS);
            FUZZ_INVARIANT(r->repeats >= 1 && r->repeats <= 1000 && r->n_args >= 0);
            for (int j = 0; j < r->n_from; j++)
                FUZZ_INVARIANT(r->from[j] < i && (r->from[j] >= 0 || i + r->from[j] >= 0 || (i == 0 && r->from[j] == -1)));
        }
        for (int i = 0; i < spec.n_scales; i++) FUZZ_INVARIANT(memchr(spec.scales[i].letter, 0, sizeof spec.scales[i].letter));
        /* as model_build.c's select_scale and build_model: nc as the yaml sets it (80 where it does not) */
        int nc = spec.nc > 0 ? spec.nc : 80;
        for (int i = 0; i < spec.n_scales; i++) check_size(&spec, &spec.scales[i], nc);
        model_scale multiples = {.depth = spec.has_multiples ? spec.depth_multiple : 1.0,
                                 .width = spec.has_multiples ? spec.width_multiple : 1.0, .max_channels = INFINITY};
        if (!spec.n_scales) check_size(&spec, &multiples, nc);
        model_spec_free(&spec);
    } else {
        FUZZ_INVARIANT(strstr(yolo_last_error(), "fuzz-model.yaml"));
    }
    free(text);
    return 0;
}

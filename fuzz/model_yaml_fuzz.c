/* Fuzzing the model yaml parser (model_spec_parse: structure, row shapes,
 * `from` references, scales, argument scalars). What parses must have rows
 * whose `from` names earlier layers and whose repeats are in [1, 1000];
 * a failure must name the file. Building the modules is not fuzzed here
 * (it runs a probe forward: too slow per input). Corpus:
 * fuzz/corpus/model_yaml (the embedded yolov8 yamls and a tiny one). */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "nn/model_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size ? size : 1); /* no terminator: the parser must honour size */
    memcpy(text, data, size);
    model_spec spec;
    if (model_spec_parse("fuzz-model.yaml", text, size, &spec) == YOLO_OK) {
        for (int i = 0; i < spec.n_rows; i++) {
            const model_row *r = &spec.rows[i];
            FUZZ_INVARIANT(r->module && r->n_from >= 1 && r->n_from <= YOLO_MODULE_MAX_INPUTS);
            FUZZ_INVARIANT(r->repeats >= 1 && r->repeats <= 1000 && r->n_args >= 0);
            for (int j = 0; j < r->n_from; j++)
                FUZZ_INVARIANT(r->from[j] < i && (r->from[j] >= 0 || i + r->from[j] >= 0 || (i == 0 && r->from[j] == -1)));
        }
        for (int i = 0; i < spec.n_scales; i++) FUZZ_INVARIANT(memchr(spec.scales[i].letter, 0, sizeof spec.scales[i].letter));
        model_spec_free(&spec);
    } else {
        FUZZ_INVARIANT(strstr(yolo_last_error(), "fuzz-model.yaml"));
    }
    free(text);
    return 0;
}

/* Fuzzing the .pt reader's tensor rebuilding (core/interop: pt_import.c's
 * zip listing, byte budget and storage reads, pickle.c's views, pt_yaml.c):
 * whole .pt bytes through yolo_pt_read_memory and
 * yolo_pt_read_header_memory. Corpus: fuzz/corpus/pt, tiny checkpoints
 * as Ultralytics saves them (fuzz/corpus/make_pt_seeds.py).
 *
 * Memory is part of the contract. The reader must refuse, before
 * allocating, whatever its inputs' size does not pay for, so it runs
 * under a cap (tests/fuzz.cmake: the plain driver's -mem-mb 512, ASan's
 * max_allocation_size_mb, libFuzzer's -malloc_limit_mb) that makes such an
 * allocation fail, and a YOLO_ERR_NOMEM from an input of a few KB is a
 * finding, as is an accepted file whose tensors hold more elements than
 * the budget allows. Any crash or sanitizer report is one too. */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "interop/pt_import.h"
#include "util/text_file.h"

/* pt_import.c's budget: storages inflate to at most 4 times the file plus
 * 16 MiB, and the tensors read each storage element at most twice (f16:
 * two bytes an element) */
static double max_elements(size_t size) { return 2.0 * (4.0 * (double)size + (16 << 20)) / 2.0; }

static volatile float sink;

static void check(const yolo_pt_model *pt, size_t size, bool header_only) {
    double held = 0;
    for (int i = 0; i < pt->n_tensors; i++) {
        const yolo_pt_tensor *t = &pt->tensors[i];
        int64_t n = 1;
        for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
        FUZZ_INVARIANT(t->name && n == t->numel && n >= 0);
        FUZZ_INVARIANT(header_only == !t->data);
        for (int64_t k = 0; t->data && k < n; k++) sink += t->data[k]; /* read end to end: ASan sees a short one */
        held += (double)n;
    }
    if (!header_only) FUZZ_INVARIANT(held <= max_elements(size));
    FUZZ_INVARIANT(!pt->yaml_text || (strlen(pt->yaml_text) == pt->yaml_len && pt->yaml_len <= YOLO_TEXT_MAX));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    for (int header_only = 0; header_only < 2; header_only++) {
        yolo_pt_model *pt = NULL;
        yolo_status st = header_only ? yolo_pt_read_header_memory(data, size, "fuzz.pt", &pt)
                                     : yolo_pt_read_memory(data, size, "fuzz.pt", &pt);
        if (st == YOLO_ERR_NOMEM) fprintf(stderr, "fuzz: out of memory on %zu bytes: %s\n", size, yolo_last_error());
        FUZZ_INVARIANT(st != YOLO_ERR_NOMEM);
        if (st == YOLO_OK) check(pt, size, header_only);
        else FUZZ_INVARIANT(strstr(yolo_last_error(), "fuzz.pt"));
        yolo_pt_free(pt);
    }
    return 0;
}

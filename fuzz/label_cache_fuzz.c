/* Fuzzing the label cache reader (yolo_label_cache_decode). The first
 * byte: bit 0 reseals the checksum after mutation (so the structure checks
 * behind it are reached, not only the checksum), bits 1-2 the dataset it
 * is checked against (nc 80 without keypoints, nc 1 with 17x3 keypoints,
 * nc 3 with 4x2, nc 2 without); the rest is the cache file. A hit must
 * hold well-formed samples. Corpus: fuzz/corpus/label_cache, written by
 * fuzz/corpus/make_label_cache_seeds.py (key FUZZ_CACHE_KEY). */
#include <stdint.h>
#include <string.h>

#include "data/fsutil.h"
#include "data/label_cache.h"
#include "fuzz_check.h"

#define FUZZ_CACHE_KEY 0x0123456789abcdefull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    static const int layouts[4][3] = {{80, 0, 0}, {1, 17, 3}, {3, 4, 2}, {2, 0, 0}};
    const int *layout = layouts[(data[0] >> 1) & 3];
    bool reseal = data[0] & 1;
    size--;
    uint8_t *bytes = malloc(size ? size : 1);
    memcpy(bytes, data + 1, size);
    if (reseal) yolo_label_cache_seal(bytes, size);
    yolo_data_config cfg = {.nc = layout[0]};
    yolo_dataset ds = {.cfg = &cfg, .kpt_count = layout[1], .kpt_dims = layout[2]};
    char **warnings = NULL;
    int64_t n_warnings = 0;
    yolo_cache_result r =
        yolo_label_cache_decode(bytes, size, "fuzz.yolo-cache", FUZZ_CACHE_KEY, &ds, &warnings, &n_warnings);
    if (r == YOLO_CACHE_HIT) {
        FUZZ_INVARIANT(ds.n >= 0 && ds.stats.images == ds.n && n_warnings >= 0);
        for (int64_t i = 0; i < ds.n; i++) {
            const yolo_sample *s = &ds.samples[i];
            FUZZ_INVARIANT(s->path && s->path[0] && s->width > 0 && s->height > 0);
            FUZZ_INVARIANT(s->image_class >= -1 && s->image_class < cfg.nc);
            FUZZ_INVARIANT(s->labels.kpt_count == ds.kpt_count && s->labels.kpt_dims == ds.kpt_dims);
            fuzz_check_instances(&s->labels, cfg.nc);
        }
        for (int64_t i = 0; i < n_warnings; i++) FUZZ_INVARIANT(warnings[i] != NULL);
        yolo_free_strings(warnings, n_warnings);
        ds.cache_path = NULL;
        for (int64_t i = 0; i < ds.n; i++) {
            free(ds.samples[i].path);
            yolo_instances_free(&ds.samples[i].labels);
        }
        free(ds.samples);
    } else if (r == YOLO_CACHE_DAMAGED) {
        FUZZ_INVARIANT(strstr(yolo_last_error(), "fuzz.yolo-cache") && ds.samples == NULL);
    }
    free(bytes);
    return 0;
}

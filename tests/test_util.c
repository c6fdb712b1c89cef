#include "test_util.h"

#include "data/fsutil.h"
#include "data/image.h"
#include "data/warn.h"

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int test_failures = 0;

/* The directories test_temp_dir made: removed when the test passes or
 * skips (an end-to-end one holds a generated data set of ~400 MB), kept
 * when it fails, for the log files its messages name. */
enum { MAX_TEMP_DIRS = 64 };
static char temp_dirs[MAX_TEMP_DIRS][1024];
static int n_temp_dirs;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_temp_dirs(void) {
    for (int i = 0; i < n_temp_dirs; i++) nftw(temp_dirs[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    n_temp_dirs = 0;
}

int test_result(const char *name) {
    if (test_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
        return 1;
    }
    remove_temp_dirs();
    printf("%s: all checks passed\n", name);
    return 0;
}

int test_skip(const char *why) {
    remove_temp_dirs();
    printf("SKIPPED: %s\n", why);
    return 77;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float test_uniform(uint64_t *state, float lo, float hi) {
    double u = (double)(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

void test_fill_uniform(float *data, int64_t n, uint64_t seed, float lo, float hi) {
    uint64_t state = seed;
    for (int64_t i = 0; i < n; i++) data[i] = test_uniform(&state, lo, hi);
}

yolo_tensor *test_tensor_random(yolo_backend *be, const char *name, int ndim, const int64_t *shape, uint64_t seed,
                                float lo, float hi, int requires_grad) {
    yolo_tensor *t = yolo_tensor_new(be, name, YOLO_F32, ndim, shape, requires_grad != 0);
    if (!t) return NULL;
    int64_t n = yolo_tensor_numel(t);
    float *data = malloc((size_t)n * sizeof *data);
    test_fill_uniform(data, n, seed, lo, hi);
    yolo_tensor_upload_f32(t, data, n);
    free(data);
    return t;
}

double test_max_rel_error(const float *a, const float *b, int64_t n, double atol, double rtol) {
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]) / (atol + rtol * fabs((double)b[i]));
        if (isnan(a[i]) != isnan(b[i])) e = INFINITY;
        if (e > worst) worst = e;
    }
    return worst;
}

int test_differing_bits(const float *a, const float *b, int64_t n) {
    int d = 0;
    for (int64_t i = 0; i < n; i++) d += memcmp(&a[i], &b[i], sizeof *a) != 0;
    return d;
}

double test_scaled_error(const float *got, const float *want, int64_t n) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs((double)got[i] - want[i]));
        scale = fmax(scale, fabs((double)want[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

int test_error_mentions(const char *needle) { return strstr(yolo_last_error(), needle) != NULL; }

#include <stdlib.h>
#include <sys/wait.h>

int test_run_yolo(const char *dir, const char *args) {
    const char *bin = getenv("YOLO_BINARY_DIR");
    if (!bin) return -1;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/bin/yolo' %s > log.txt 2>&1", dir, bin, args);
    int rc = system(cmd);
    if (rc == -1) return -1;
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int test_csv_column(const char *path, const char *name, double *values, int max) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[8192];
    int col = -1, rows = 0;
    if (fgets(line, sizeof line, f)) {
        int i = 0;
        for (char *tok = strtok(line, ",\n"); tok; tok = strtok(NULL, ",\n"), i++) {
            while (*tok == ' ') tok++;
            if (strcmp(tok, name) == 0) col = i;
        }
    }
    while (col >= 0 && rows < max && fgets(line, sizeof line, f)) {
        int i = 0;
        for (char *tok = strtok(line, ",\n"); tok; tok = strtok(NULL, ",\n"), i++)
            if (i == col) values[rows++] = atof(tok);
    }
    fclose(f);
    return col < 0 ? -1 : rows;
}

const char *test_temp_dir(char *buf, size_t size) {
    const char *base = getenv("TMPDIR");
    snprintf(buf, size, "%s/yolo-test-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(buf)) return NULL;
    if (n_temp_dirs < MAX_TEMP_DIRS) snprintf(temp_dirs[n_temp_dirs++], sizeof temp_dirs[0], "%s", buf);
    return buf;
}

const char *test_e2e_dir(char *buf, size_t size) {
    if (!test_temp_dir(buf, size)) return NULL;
    char cache[1024];
    snprintf(cache, sizeof cache, "%s/cache", buf);
    return setenv("YOLO_CACHE_DIR", cache, 1) == 0 ? buf : NULL;
}

void test_write_file(const char *root, const char *rel, const void *data, size_t len) {
    char *p = yolo_path_join(root, rel), *d = p ? yolo_path_dirname(p) : NULL;
    CHECK_MSG(d && yolo_mkdirs(d) == YOLO_OK && yolo_write_file(p, data, len) == YOLO_OK, "writing %s/%s: %s", root,
              rel, yolo_last_error());
    free(p), free(d);
}

void test_write_text(const char *root, const char *rel, const char *text) {
    test_write_file(root, rel, text, strlen(text));
}

void test_write_jpeg(const char *root, const char *rel, int w, int h, unsigned seed) {
    uint8_t *pixels = malloc((size_t)w * h * 3), *bytes = NULL;
    size_t n = 0;
    for (size_t i = 0; pixels && i < (size_t)w * h * 3; i++) pixels[i] = (uint8_t)((i * 31 + seed * 7) ^ (i >> 5));
    CHECK(pixels && yolo_image_encode_pixels(pixels, w, h, 3, YOLO_IMAGE_JPEG, 90, &bytes, &n) == YOLO_OK);
    if (bytes) test_write_file(root, rel, bytes, n);
    free(pixels), free(bytes);
}

uint8_t *test_read_file(const char *root, const char *rel, size_t *len) {
    char *p = yolo_path_join(root, rel);
    uint8_t *b = NULL;
    if (!p || yolo_read_file(p, &b, len) != YOLO_OK) b = NULL;
    free(p);
    return b;
}

char *test_read_text(const char *path) {
    uint8_t *b = NULL;
    size_t len = 0;
    return yolo_read_file(path, &b, &len) == YOLO_OK ? (char *)b : NULL;
}

typedef struct warning_buffer {
    char *buf;
    size_t size;
} warning_buffer;

static void append_warning(void *user, const char *msg) {
    warning_buffer *w = user;
    size_t n = strlen(w->buf);
    snprintf(w->buf + n, w->size - n, "%s\n", msg);
}

void test_capture_warnings(char *buf, size_t size) {
    static warning_buffer w;
    w = (warning_buffer){buf, size};
    buf[0] = 0;
    yolo_data_set_warning_handler(append_warning, &w);
}

bool test_file_exists(const char *root, const char *rel) {
    char *p = yolo_path_join(root, rel);
    bool ok = p && yolo_is_file(p);
    free(p);
    return ok;
}

void test_synthetic_batch(yolo_batch *b, int n, int size, int nc) {
    memset(b, 0, sizeof *b);
    b->n = n;
    b->height = b->width = size;
    b->images = malloc((size_t)n * 3 * size * size);
    b->sample_index = calloc((size_t)n, sizeof *b->sample_index);
    b->image_class = calloc((size_t)n, sizeof *b->image_class);
    b->meta = calloc((size_t)n, sizeof *b->meta);
    b->aug = calloc((size_t)n, sizeof *b->aug);
    b->batch_idx = calloc((size_t)n * 4, sizeof *b->batch_idx);
    uint64_t state = 42;
    for (size_t i = 0; i < (size_t)n * 3 * size * size; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        b->images[i] = (uint8_t)(state >> 56);
    }
    yolo_instances_init(&b->instances, 0, 0);
    for (int i = 0; i < n; i++) {
        b->image_class[i] = i % nc;
        b->meta[i] = (yolo_image_meta){size, size, 1, 1, 0, 0};
        for (int k = 0; k < 4; k++) {
            float box[4] = {0.2f + 0.15f * k, 0.3f + 0.1f * k, 0.2f, 0.25f};
            float poly[8] = {box[0] - 0.1f, box[1] - 0.125f, box[0] + 0.1f, box[1] - 0.125f,
                             box[0] + 0.1f, box[1] + 0.125f, box[0] - 0.1f, box[1] + 0.125f};
            b->batch_idx[b->instances.n] = i;
            yolo_instances_add(&b->instances, (i + k) % nc, box, poly, 4, NULL);
        }
    }
}

void test_synthetic_batch_free(yolo_batch *b) {
    free(b->images);
    free(b->sample_index);
    free(b->image_class);
    free(b->meta);
    free(b->aug);
    free(b->batch_idx);
    yolo_instances_free(&b->instances);
}

void test_write_tiny_models(const char *dir) {
    static const char *const det = "nc: 2\nbackbone:\n  - [-1, 1, Conv, [8, 3, 2]]\n  - [-1, 1, Conv, [16, 3, 2]]\n"
                                   "  - [-1, 1, C2f, [16, True]]\n  - [-1, 1, Conv, [16, 3, 2]]\n"
                                   "  - [-1, 1, Conv, [16, 3, 2]]\n  - [-1, 1, Conv, [16, 3, 2]]\n"
                                   "head:\n  - [[3, 4, 5], 1, %s]\n";
    char text[1024];
    snprintf(text, sizeof text, det, "Detect, [nc]");
    test_write_text(dir, "det.yaml", text);
    snprintf(text, sizeof text, det, "Segment, [nc, 8, 16]");
    test_write_text(dir, "seg.yaml", text);
    test_write_text(dir, "cls.yaml", "nc: 2\nbackbone:\n  - [-1, 1, Conv, [8, 3, 2]]\n  - [-1, 1, Conv, [16, 3, 2]]\n"
                                     "head:\n  - [-1, 1, Classify, [nc]]\n");
    test_write_text(dir, "boxes.yaml", "path: boxes\ntrain: images\nval: images\nnames: [a, b]\n");
    test_write_text(dir, "polys.yaml", "path: polys\ntrain: images\nval: images\nnames: [a, b]\n");
}

const char *test_tiny_boxes(int i) { return i % 3 ? "0 0.5 0.5 0.4 0.5\n1 0.25 0.3 0.2 0.2\n" : "1 0.6 0.6 0.3 0.4\n"; }

const char *test_tiny_polygons(int i) {
    return i % 3 ? "0 0.3 0.3 0.7 0.3 0.7 0.8 0.3 0.8\n1 0.1 0.1 0.3 0.1 0.2 0.4\n" : "1 0.5 0.2 0.8 0.7 0.2 0.7\n";
}

const char *test_temp_run_dir(char *buf, size_t size) {
    if (!test_temp_dir(buf, size)) return NULL;
    char *cache = yolo_path_join(buf, "cache");
    if (cache) setenv("YOLO_CACHE_DIR", cache, 1);
    free(cache);
    return cache ? buf : NULL;
}

void test_write_tiny_sample(const char *dir, int i, int w, int h) {
    static const char *const sets[2] = {"boxes", "polys"};
    for (int k = 0; k < 2; k++) {
        char rel[128];
        snprintf(rel, sizeof rel, "%s/images/%d.jpg", sets[k], i);
        test_write_jpeg(dir, rel, w, h, (unsigned)i);
        snprintf(rel, sizeof rel, "%s/labels/%d.txt", sets[k], i);
        test_write_text(dir, rel, k ? test_tiny_polygons(i) : test_tiny_boxes(i));
    }
}

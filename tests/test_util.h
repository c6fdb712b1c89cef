/* Small helpers shared by the tests: checks that count failures, random data. */
#ifndef YOLO_TEST_UTIL_H
#define YOLO_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "yolo/data.h"
#include "yolo/graph.h"

extern int test_failures;

#define CHECK(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            test_failures++; \
        } \
    } while (0)

#define CHECK_MSG(cond, ...) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__); \
            fputc('\n', stderr); \
            test_failures++; \
        } \
    } while (0)

/* Exit code for main: 0 if no CHECK failed. */
int test_result(const char *name);
/* Exit code 77 (ctest: skipped) after printing why. */
int test_skip(const char *why);

/* Deterministic uniform floats in [lo, hi) from a 64-bit state. */
float test_uniform(uint64_t *state, float lo, float hi);
void test_fill_uniform(float *data, int64_t n, uint64_t seed, float lo, float hi);

/* A persistent f32 tensor filled with uniform random values. */
yolo_tensor *test_tensor_random(yolo_backend *be, const char *name, int ndim, const int64_t *shape, uint64_t seed,
                                float lo, float hi, int requires_grad);

/* Max |a-b| / (atol + rtol*|b|) over n values; <= 1 means within tolerance. */
double test_max_rel_error(const float *a, const float *b, int64_t n, double atol, double rtol);
/* How many of n values differ bit for bit. */
int test_differing_bits(const float *a, const float *b, int64_t n);
/* max |got - want| over max |want| (reduced-precision storage: batch norm's
 * backward subtracts channel means, so single small gradients move by more
 * than the dtype's step relative to themselves, not to the largest). */
double test_scaled_error(const float *got, const float *want, int64_t n);

/* Whether substring `needle` is in the current yolo_last_error(). */
int test_error_mentions(const char *needle);

/* ---- end-to-end helpers ---- */
/* Runs `$YOLO_BINARY_DIR/bin/yolo <args>` in `dir` with output to dir/log.txt;
 * returns its exit code (-1 if it could not start). */
int test_run_yolo(const char *dir, const char *args);
/* Reads column `name` of a CSV file (results.csv) into values; returns the
 * row count (-1 if the file or the column is missing). */
int test_csv_column(const char *path, const char *name, double *values, int max);
/* A fresh temporary directory (mkdtemp) under $TMPDIR or /tmp; path into
 * buf. test_result removes it if every check passed (test_skip too). */
const char *test_temp_dir(char *buf, size_t size);
/* test_temp_dir for an end-to-end run, with YOLO_CACHE_DIR set to its
 * cache/ (the built-in datasets are generated there); NULL on failure. */
const char *test_e2e_dir(char *buf, size_t size);

/* Fixture files under `root` (folders made as needed); a failure is a
 * CHECK failure naming the file. write_jpeg: a w x h patterned JPEG whose
 * pixels depend on seed. read_file: malloc'd bytes, NULL if unreadable. */
void test_write_file(const char *root, const char *rel, const void *data, size_t len);
void test_write_text(const char *root, const char *rel, const char *text);
void test_write_jpeg(const char *root, const char *rel, int w, int h, unsigned seed);
uint8_t *test_read_file(const char *root, const char *rel, size_t *len);
/* A whole text file as a malloc'd C string, NULL if unreadable. */
char *test_read_text(const char *path);
/* From now on the data pipeline's warnings (yolo_data_warn) are appended to
 * buf, one a line, as long as it has room; set buf[0] = 0 to start over. */
void test_capture_warnings(char *buf, size_t size);
bool test_file_exists(const char *root, const char *rel);

/* The tiny end-to-end fixtures (seconds per training): det.yaml (Detect
 * on strides 8, 16, 32), seg.yaml (Segment, 8 masks) and cls.yaml
 * (Classify), nc 2, written into dir; boxes.yaml and polys.yaml name the
 * folders boxes/ and polys/ (images/ and labels/, train = val). The label
 * rows of image i: test_tiny_boxes, test_tiny_polygons. */
void test_write_tiny_models(const char *dir);
const char *test_tiny_boxes(int i);
const char *test_tiny_polygons(int i);
/* Sample i of both tiny datasets: boxes/ and polys/ images/<i>.jpg (w x h)
 * and labels/<i>.txt. */
void test_write_tiny_sample(const char *dir, int i, int w, int h);
/* A fresh temporary directory with YOLO_CACHE_DIR=<it>/cache set. */
const char *test_temp_run_dir(char *buf, size_t size);

/* A synthetic batch of n size x size images: random pixels, four boxes
 * (with square polygons) per image, classes cycling through nc. */
void test_synthetic_batch(yolo_batch *b, int n, int size, int nc);
void test_synthetic_batch_free(yolo_batch *b);

#endif

/* Fuzzing the checkpoint reader (core/ckpt).
 *
 * LLVMFuzzerTestOneInput: the first byte picks a target, the rest is its
 * input:
 *   0  a whole checkpoint file (yolo_ckpt_read_memory)
 *   1  a safetensors blob (decode; what decodes must re-encode and decode
 *      to the same tensors)
 *   2  a meta.yaml text (parse; what parses must emit and parse back to an
 *      equal tree; then the checkpoint key check)
 *   3  a JSON text (the strict parser)
 *   4  a meta.yaml text zipped with a fixed valid model blob (reaches the
 *      member and checksum checks behind a well-formed zip)
 * Any crash, sanitizer report or broken invariant (abort) is a finding.
 *
 * Built with -DYOLO_LIBFUZZER (clang -fsanitize=fuzzer) this is only the
 * entry point. Otherwise main() is a self-contained driver for any
 * compiler (CI: gcc + ASan): it builds valid seeds, mutates them for
 * -seconds N (default 10), replays any files/folders given, and with
 * -write-seeds DIR writes the seeds as a libFuzzer corpus. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt/ckpt_file.h"
#include "ckpt/crc32.h"
#include "ckpt/json.h"
#include "ckpt/meta.h"
#include "ckpt/safetensors.h"
#include "fuzz_check.h"
#include "fuzz_mutate.h"

#define FUZZ_MODES 5

static volatile uint64_t sink;

#define INVARIANT FUZZ_INVARIANT

static void touch_blob(const yolo_st_file *f) {
    uint64_t s = 0;
    for (size_t i = 0; i < yolo_st_count(f); i++) {
        const yolo_st_tensor *t = yolo_st_at(f, i);
        const uint8_t *p = t->data;
        s += strlen(t->name) + (uint64_t)yolo_st_numel(t);
        for (size_t k = 0; k < t->nbytes; k += 61) s += p[k];
        if (t->nbytes) s += p[t->nbytes - 1];
        INVARIANT(yolo_st_find(f, t->name) == t);
    }
    for (size_t i = 0; i < yolo_st_meta_count(f); i++) s += strlen(yolo_st_meta_at(f, i)->value);
    sink += s;
}

/* The fixed tensors of target 4's model blob. */
static const float fixed_w[6] = {1, 2, 3, 4, 5, 6};
static const int32_t fixed_i[2] = {8, 16};
static const yolo_st_tensor fixed_tensors[2] = {
    {.name = "model.0.conv.weight", .dtype = YOLO_ST_F32, .ndim = 2, .shape = {2, 3}, .data = fixed_w, .nbytes = 24},
    {.name = "model.22.stride", .dtype = YOLO_ST_I32, .ndim = 1, .shape = {2}, .data = fixed_i, .nbytes = 8},
};

static uint8_t *fixed_blob(size_t *size) {
    static uint8_t *blob;
    static size_t blob_size;
    if (!blob && yolo_st_encode(fixed_tensors, 2, NULL, 0, "fixed", &blob, &blob_size) != YOLO_OK) abort();
    *size = blob_size;
    return blob;
}

/* A stored zip of the fixed blob and `meta` in memory (malloc'd). */
static uint8_t *zip_with_meta(const uint8_t *meta, size_t meta_len, size_t *out_len) {
    size_t blob_size;
    const uint8_t *blob = fixed_blob(&blob_size);
    size_t cap = blob_size + meta_len + 4096;
    uint8_t *buf = malloc(cap);
    if (!buf) return NULL;
    struct archive *a = archive_write_new();
    archive_write_set_format_zip(a);
    archive_write_zip_set_compression_store(a);
    archive_write_set_bytes_in_last_block(a, 1);
    size_t used = 0;
    archive_write_open_memory(a, buf, cap, &used);
    const char *names[2] = {"model.safetensors", "meta.yaml"};
    const void *datas[2] = {blob, meta};
    size_t sizes[2] = {blob_size, meta_len};
    for (int i = 0; i < 2; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, names[i]);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, (la_int64_t)sizes[i]);
        archive_write_header(a, e);
        archive_write_data(a, datas[i], sizes[i]);
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    *out_len = used;
    return buf;
}

static void fuzz_ckpt(const uint8_t *data, size_t size) {
    yolo_ckpt *ck = NULL;
    if (yolo_ckpt_read_memory(data, size, "fuzz.ckpt", &ck) != YOLO_OK) {
        INVARIANT(ck == NULL && strstr(yolo_last_error(), "fuzz.ckpt"));
        return;
    }
    const yolo_ckpt_info *info = yolo_ckpt_get_info(ck);
    sink += (uint64_t)info->epoch + strlen(info->task) + strlen(info->date);
    for (int id = 0; id < YOLO_CKPT_BLOB_COUNT; id++)
        if (yolo_ckpt_get_blob(ck, (yolo_ckpt_blob_id)id)) touch_blob(yolo_ckpt_get_blob(ck, (yolo_ckpt_blob_id)id));
    yolo_ckpt_free(ck);
}

static void fuzz_safetensors(const uint8_t *data, size_t size) {
    /* A private copy: the decoder must not read past `size`. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return;
    memcpy(copy, data, size);
    yolo_st_file *f = NULL;
    if (yolo_st_decode(copy, size, "fuzz.safetensors", &f) == YOLO_OK) {
        touch_blob(f);
        size_t n = yolo_st_count(f), nm = yolo_st_meta_count(f);
        yolo_st_tensor *ts = malloc((n ? n : 1) * sizeof *ts);
        yolo_st_kv *kv = malloc((nm ? nm : 1) * sizeof *kv);
        for (size_t i = 0; i < n; i++) ts[i] = *yolo_st_at(f, i);
        for (size_t i = 0; i < nm; i++) kv[i] = *yolo_st_meta_at(f, i);
        uint8_t *again;
        size_t again_size;
        INVARIANT(yolo_st_encode(ts, n, kv, nm, "re-encode", &again, &again_size) == YOLO_OK);
        yolo_st_file *g = NULL;
        INVARIANT(yolo_st_decode(again, again_size, "re-decode", &g) == YOLO_OK);
        INVARIANT(yolo_st_count(g) == n && yolo_st_meta_count(g) == nm);
        for (size_t i = 0; i < n; i++) {
            const yolo_st_tensor *a = &ts[i], *b = yolo_st_find(g, a->name);
            INVARIANT(b && a->dtype == b->dtype && a->ndim == b->ndim && a->nbytes == b->nbytes);
            INVARIANT(a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0);
        }
        yolo_st_file_free(g);
        free(again);
        free(ts);
        free(kv);
        yolo_st_file_free(f);
    }
    free(copy);
}

static void fuzz_meta(const uint8_t *data, size_t size) {
    yolo_meta *m = NULL;
    if (yolo_meta_parse((const char *)data, size, "fuzz.yaml", &m) != YOLO_OK) return;
    char *text;
    size_t len;
    INVARIANT(yolo_meta_to_yaml(m, &text, &len) == YOLO_OK);
    yolo_meta *back = NULL;
    if (yolo_meta_parse(text, len, "re-parse", &back) != YOLO_OK || !yolo_meta_equal(m, back)) {
        fprintf(stderr, "ckpt_fuzz: meta round trip failed (%s); emitted:\n%s\n", yolo_last_error(), text);
        abort();
    }
    yolo_ckpt_info info;
    sink += yolo_ckpt_meta_check(m, "fuzz.yaml", &info);
    free(text);
    yolo_meta_free(back);
    yolo_meta_free(m);
}

static void fuzz_json(const uint8_t *data, size_t size) {
    yolo_json *v = NULL;
    if (yolo_json_parse((const char *)data, size, "fuzz.json", &v) == YOLO_OK) {
        sink += v->n;
        yolo_json_free(v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    int mode = data[0] % FUZZ_MODES;
    data++;
    size--;
    switch (mode) {
    case 0: fuzz_ckpt(data, size); break;
    case 1: fuzz_safetensors(data, size); break;
    case 2: fuzz_meta(data, size); break;
    case 3: fuzz_json(data, size); break;
    default: {
        size_t zl;
        uint8_t *zip = zip_with_meta(data, size, &zl);
        if (zip) fuzz_ckpt(zip, zl);
        free(zip);
    }
    }
    return 0;
}

#ifndef YOLO_LIBFUZZER
/* ------------------------------------------------------------ the driver */

typedef struct seed {
    int mode;
    uint8_t *data;
    size_t size;
} seed;

static seed seeds[64];
static int n_seeds;

static void add_seed(int mode, const void *data, size_t size) {
    if (n_seeds == 64 || !data) return;
    seeds[n_seeds].mode = mode;
    seeds[n_seeds].data = malloc(size + 1);
    memcpy(seeds[n_seeds].data, data, size);
    seeds[n_seeds].size = size;
    n_seeds++;
}

static yolo_meta *seed_meta(const uint8_t *blob, size_t blob_size) {
    yolo_ckpt_info info = {.task = "detect", .plugin_version = "1.0", .epoch = 3, .optimizer_steps = 120,
                           .ema_updates = 118, .best_fitness = 0.5, .seed = 0, .sampler_epoch = 4, .sampler_batch = 2};
    yolo_meta *m = NULL;
    if (yolo_ckpt_meta_new(&info, &m) != YOLO_OK) return NULL;
    yolo_meta *args = yolo_meta_get_mut(m, "train_args");
    yolo_meta_set_str(args, "model", "yolov8n.yaml");
    yolo_meta_set_float(args, "lr0", 0.01);
    yolo_meta_set_list(args, "empty");
    yolo_meta *row = yolo_meta_append_map(yolo_meta_get_mut(m, "results"));
    yolo_meta_set_float(row, "metrics/mAP50(B)", 0.25);
    if (blob) {
        char crc[16];
        snprintf(crc, sizeof crc, "%08x", yolo_crc32_update(0, blob, blob_size));
        yolo_meta *mm = yolo_meta_set_map(yolo_meta_set_map(m, "members"), "model.safetensors");
        yolo_meta_set_int(mm, "size", (int64_t)blob_size);
        yolo_meta_set_str(mm, "crc32", crc);
    }
    return m;
}

static int build_seeds(void) {
    size_t blob_size;
    uint8_t *blob = fixed_blob(&blob_size);
    add_seed(1, blob, blob_size);
    /* A richer blob: every dtype, metadata, a scalar and an empty tensor. */
    uint8_t raw[256];
    for (int i = 0; i < 256; i++) raw[i] = (uint8_t)(i * 37);
    yolo_st_tensor ts[] = {
        {.name = "a", .dtype = YOLO_ST_F16, .ndim = 2, .shape = {2, 3}, .data = raw, .nbytes = 12},
        {.name = "b\\u00e9", .dtype = YOLO_ST_I64, .ndim = 0, .data = raw, .nbytes = 8},
        {.name = "c", .dtype = YOLO_ST_U8, .ndim = 3, .shape = {1, 2, 5}, .data = raw, .nbytes = 10},
        {.name = "d", .dtype = YOLO_ST_F64, .ndim = 1, .shape = {0}, .data = raw, .nbytes = 0},
        {.name = "e", .dtype = YOLO_ST_BF16, .ndim = 1, .shape = {4}, .data = raw, .nbytes = 8},
    };
    yolo_st_kv kv[] = {{"format", "pt"}, {"note", "a \"quoted\" value"}};
    uint8_t *rich;
    size_t rich_size;
    if (yolo_st_encode(ts, 5, kv, 2, "seed", &rich, &rich_size) != YOLO_OK) return -1;
    add_seed(1, rich, rich_size);
    uint64_t hn;
    memcpy(&hn, rich, 8);
    add_seed(3, rich + 8, (size_t)hn);
    free(rich);
    add_seed(3, "{\"a\":[1,-2.5e3,true,false,null,\"\\ud83d\\ude00\",{}]}", 40);

    yolo_meta *m = seed_meta(blob, blob_size);
    char *text;
    size_t len;
    if (!m || yolo_meta_to_yaml(m, &text, &len) != YOLO_OK) return -1;
    add_seed(4, text, len);
    add_seed(2, text, len);
    free(text);
    yolo_meta_free(m);
    const char *yaml = "a: [1, {b: c}, 'q', \"\\u00e9\\N\"]\n? k\n: |\n  block\n  text\nd: &x 1\ne: ~\nf: .inf\n";
    add_seed(2, yaml, strlen(yaml));

    /* Real checkpoint files: last.ckpt-like and best.ckpt-like. */
    char dir[256];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/yolo-ckpt-fuzz-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) return -1;
    char path[300];
    snprintf(path, sizeof path, "%s/seed.ckpt", dir);
    m = seed_meta(NULL, 0);
    yolo_ckpt_blob model = {.tensors = fixed_tensors, .count = 2};
    yolo_ckpt_blob rich_blob = {.tensors = ts, .count = 5, .metadata = kv, .n_metadata = 2};
    for (int variant = 0; variant < 2; variant++) {
        yolo_ckpt_contents c = {.meta = m};
        c.blobs[YOLO_CKPT_MODEL] = variant ? NULL : &model;
        c.blobs[YOLO_CKPT_EMA] = &rich_blob;
        c.blobs[YOLO_CKPT_OPTIMIZER] = variant ? NULL : &model;
        if (yolo_ckpt_write(path, &c) != YOLO_OK) return -1;
        FILE *f = fopen(path, "rb");
        uint8_t *buf = malloc(1 << 20);
        size_t n = f ? fread(buf, 1, 1 << 20, f) : 0;
        if (f) fclose(f);
        add_seed(0, buf, n);
        free(buf);
    }
    unlink(path);
    rmdir(dir);
    yolo_meta_free(m);
    return 0;
}

/* The seeds as a splice pool for fuzz_mutate. */
static fuzz_input pool[64];
static size_t mutate(uint8_t *buf, size_t size, size_t cap) {
    for (int i = 0; i < n_seeds; i++) pool[i] = (fuzz_input){seeds[i].data, seeds[i].size};
    return fuzz_mutate(buf, size, cap, pool, n_seeds);
}

static void run_input(const uint8_t *data, size_t size) { LLVMFuzzerTestOneInput(data, size); }

static void replay_path(const char *path, long *count) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "ckpt_fuzz: cannot read %s\n", path);
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            replay_path(sub, count);
        }
        if (d) closedir(d);
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return;
    uint8_t *buf = malloc((size_t)st.st_size + 1);
    size_t n = fread(buf, 1, (size_t)st.st_size, f);
    fclose(f);
    run_input(buf, n);
    if (n > 1) add_seed(buf[0] % FUZZ_MODES, buf + 1, n - 1);
    free(buf);
    (*count)++;
}

int main(int argc, char **argv) {
    double seconds = 10;
    long max_runs = -1, replayed = 0;
    const char *seed_dir = NULL;
    if (build_seeds() != 0) {
        fprintf(stderr, "ckpt_fuzz: building seeds: %s\n", yolo_last_error());
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "-seed") && i + 1 < argc) fuzz_seed(strtoull(argv[++i], NULL, 0));
        else if (!strcmp(argv[i], "-runs") && i + 1 < argc) max_runs = atol(argv[++i]);
        else if (!strcmp(argv[i], "-write-seeds") && i + 1 < argc) seed_dir = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [-seconds N] [-seed N] [-runs N] [-write-seeds DIR] [corpus files/folders]\n", argv[0]);
            return 2;
        } else replay_path(argv[i], &replayed);
    }
    if (seed_dir) {
        mkdir(seed_dir, 0755);
        for (int i = 0; i < n_seeds; i++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/seed-%02d-mode%d", seed_dir, i, seeds[i].mode);
            FILE *f = fopen(p, "wb");
            if (!f) return 1;
            uint8_t mode = (uint8_t)seeds[i].mode;
            fwrite(&mode, 1, 1, f);
            fwrite(seeds[i].data, 1, seeds[i].size, f);
            fclose(f);
        }
        printf("ckpt_fuzz: wrote %d seeds to %s\n", n_seeds, seed_dir);
        return 0;
    }
    /* Every seed must pass unmutated (they are valid inputs). */
    for (int i = 0; i < n_seeds; i++) {
        uint8_t *buf = malloc(seeds[i].size + 1);
        buf[0] = (uint8_t)seeds[i].mode;
        memcpy(buf + 1, seeds[i].data, seeds[i].size);
        run_input(buf, seeds[i].size + 1);
        free(buf);
    }
    size_t cap = 1 << 16;
    for (int i = 0; i < n_seeds; i++)
        if (seeds[i].size + 256 > cap) cap = seeds[i].size + 256;
    uint8_t *buf = malloc(cap + 1);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long runs = 0, per_mode[FUZZ_MODES] = {0};
    for (;; runs++) {
        if (max_runs >= 0 && runs >= max_runs) break;
        if ((runs & 63) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) >= seconds) break;
        }
        const seed *s = &seeds[fuzz_rand() % (uint64_t)n_seeds];
        buf[0] = (uint8_t)s->mode;
        memcpy(buf + 1, s->data, s->size);
        size_t n = mutate(buf + 1, s->size, cap - 1);
        per_mode[s->mode]++;
        run_input(buf, n + 1);
    }
    free(buf);
    printf("ckpt_fuzz: %ld mutated inputs (ckpt %ld, safetensors %ld, meta %ld, json %ld, meta-in-zip %ld), "
           "%ld replayed, %d seeds: no crash\n",
           runs, per_mode[0], per_mode[1], per_mode[2], per_mode[3], per_mode[4], replayed, n_seeds);
    for (int i = 0; i < n_seeds; i++) free(seeds[i].data);
    return 0;
}
#endif

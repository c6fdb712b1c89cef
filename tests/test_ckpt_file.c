/* Checkpoint container: round trips (last.ckpt with f32 model, ema and
 * optimizer; best.ckpt with an fp16 ema only), and refusal of truncated,
 * bit-flipped and foreign files with messages naming the file. */
#include <archive.h>
#include <archive_entry.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/crc32.h"
#include "test_ckpt_util.h"
#include "test_util.h"

static char dir[512];

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void test_roundtrip(void) {
    ckpt_sample s;
    CHECK(ckpt_sample_build(&s, 3, 1) == 0);
    char path[600];
    path_in(path, sizeof path, "last.ckpt");
    CHECK(yolo_ckpt_write(path, &s.contents) == YOLO_OK);
    yolo_ckpt *ck = NULL;
    CHECK(yolo_ckpt_read(path, &ck) == YOLO_OK);
    if (ck) {
        CHECK(ckpt_same_as_sample(ck, &s));
        const yolo_ckpt_info *info = yolo_ckpt_get_info(ck);
        CHECK(info->epoch == 3 && info->optimizer_steps == 1000006 && info->ema_updates == 1000002);
        CHECK(info->best_fitness == 0.375 && info->seed == 7 && info->sampler_epoch == 4 && info->sampler_batch == 5);
        CHECK(strcmp(info->task, "detect") == 0 && strcmp(info->plugin_version, "1.2.3") == 0);
        CHECK(strcmp(yolo_ckpt_path(ck), path) == 0);
        const yolo_st_tensor *t = yolo_ckpt_get_tensor(ck, YOLO_CKPT_EMA, "model.0.conv.weight");
        CHECK(t && t->dtype == YOLO_ST_F16 && t->ndim == 4 && t->shape[0] == 16);
        CHECK(yolo_ckpt_get_tensor(ck, YOLO_CKPT_OPTIMIZER, "model.0.bn.bias.momentum_buffer") != NULL);
        CHECK(yolo_ckpt_get_tensor(ck, YOLO_CKPT_OPTIMIZER, "model.0.bn.bias") == NULL);
        const char *name;
        CHECK(yolo_meta_get_str(yolo_meta_get(yolo_ckpt_meta(ck), "train_args"), "name", "args", &name) == YOLO_OK &&
              strcmp(name, "odd: \"name\" # with\ttabs\nand lines, üñï") == 0);
        yolo_ckpt_free(ck);
    }
    /* meta.yaml alone: the same info and args, the blobs skipped unread */
    CHECK(yolo_ckpt_read_meta(path, &ck) == YOLO_OK);
    if (ck) {
        const yolo_ckpt_info *info = yolo_ckpt_get_info(ck);
        CHECK(info->epoch == 3 && info->optimizer_steps == 1000006 && strcmp(info->task, "detect") == 0);
        CHECK(yolo_meta_get(yolo_meta_get(yolo_ckpt_meta(ck), "train_args"), "name") != NULL);
        for (int id = 0; id < YOLO_CKPT_BLOB_COUNT; id++) CHECK(yolo_ckpt_get_blob(ck, (yolo_ckpt_blob_id)id) == NULL);
        yolo_ckpt_free(ck);
    }
    /* Overwrite in place; no temp file stays behind. */
    ckpt_sample s2;
    CHECK(ckpt_sample_build(&s2, 4, 2) == 0);
    CHECK(yolo_ckpt_write(path, &s2.contents) == YOLO_OK);
    CHECK(yolo_ckpt_read(path, &ck) == YOLO_OK);
    if (ck) CHECK(ckpt_same_as_sample(ck, &s2) && yolo_ckpt_get_info(ck)->epoch == 4);
    yolo_ckpt_free(ck);
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(access(tmp, F_OK) != 0);

    /* best.ckpt: only the fp16 ema; an empty optimizer blob still round-trips. */
    s.contents.blobs[YOLO_CKPT_MODEL] = NULL;
    s.contents.blobs[YOLO_CKPT_OPTIMIZER] = NULL;
    path_in(path, sizeof path, "best.ckpt");
    CHECK(yolo_ckpt_write(path, &s.contents) == YOLO_OK);
    CHECK(yolo_ckpt_read(path, &ck) == YOLO_OK);
    if (ck) {
        CHECK(ckpt_same_as_sample(ck, &s));
        CHECK(yolo_ckpt_get_blob(ck, YOLO_CKPT_MODEL) == NULL && yolo_ckpt_get_blob(ck, YOLO_CKPT_OPTIMIZER) == NULL);
        yolo_ckpt_free(ck);
    }
    yolo_ckpt_blob empty = {0};
    s.contents.blobs[YOLO_CKPT_OPTIMIZER] = &empty;
    CHECK(yolo_ckpt_write(path, &s.contents) == YOLO_OK);
    CHECK(yolo_ckpt_read(path, &ck) == YOLO_OK);
    if (ck) CHECK(yolo_ckpt_get_blob(ck, YOLO_CKPT_OPTIMIZER) && yolo_st_count(yolo_ckpt_get_blob(ck, YOLO_CKPT_OPTIMIZER)) == 0);
    yolo_ckpt_free(ck);

    /* Writer refusals: invalid meta, a folder that does not exist. */
    yolo_meta_remove(s.meta, "seed");
    CHECK(yolo_ckpt_write(path, &s.contents) == YOLO_ERR_ARG && test_error_mentions("seed") && test_error_mentions(path));
    ckpt_sample_free(&s);
    CHECK(ckpt_sample_build(&s, 1, 1) == 0);
    CHECK(yolo_ckpt_write("/nonexistent-dir/x/last.ckpt", &s.contents) == YOLO_ERR_IO &&
          test_error_mentions("/nonexistent-dir/x/last.ckpt"));
    ckpt_sample_free(&s);
    ckpt_sample_free(&s2);
}

static void expect_refused(const char *path, const char *needle) {
    yolo_ckpt *ck = NULL;
    yolo_status st = yolo_ckpt_read(path, &ck);
    CHECK_MSG(st == YOLO_ERR_FORMAT && ck == NULL, "%s was accepted (status %d)", path, (int)st);
    CHECK_MSG(test_error_mentions(path), "message does not name %s: %s", path, yolo_last_error());
    CHECK_MSG(!needle || test_error_mentions(needle), "expected '%s' in: %s", needle, yolo_last_error());
    yolo_ckpt_free(ck);
    /* the meta-only read refuses what is no checkpoint at all or whose meta is wrong (a damaged blob,
     * which it skips, is the full read's to find) */
    static const char *const meta_faults[] = {"empty", "not a zip archive", "unexpected member", "no meta.yaml",
                                              "required key", "appears twice"};
    bool meta_fault = false;
    for (size_t i = 0; needle && i < sizeof meta_faults / sizeof *meta_faults; i++)
        meta_fault = meta_fault || strstr(needle, meta_faults[i]) != NULL;
    if (meta_fault) {
        yolo_ckpt *m = NULL;
        CHECK_MSG(yolo_ckpt_read_meta(path, &m) == YOLO_ERR_FORMAT && !m && test_error_mentions(path),
                  "%s: accepted as meta alone", path);
        yolo_ckpt_free(m);
    }
}

/* A zip of (name, data) members written with libarchive. */
static void write_zip(const char *path, const char *const *names, const void *const *data, const size_t *sizes, int n) {
    struct archive *a = archive_write_new();
    archive_write_set_format_zip(a);
    archive_write_open_filename(a, path);
    for (int i = 0; i < n; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, names[i]);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, (la_int64_t)sizes[i]);
        archive_write_header(a, e);
        archive_write_data(a, data[i], sizes[i]);
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
}

static void test_foreign_files(void) {
    char path[600];
    path_in(path, sizeof path, "missing.ckpt");
    yolo_ckpt *ck = NULL;
    CHECK(yolo_ckpt_read(path, &ck) == YOLO_ERR_IO && test_error_mentions(path));

    path_in(path, sizeof path, "empty.ckpt");
    ckpt_write_file(path, "", 0);
    expect_refused(path, "empty");

    path_in(path, sizeof path, "text.ckpt");
    const char *text = "epoch: 3\nthis is a text file, not a checkpoint\n";
    ckpt_write_file(path, text, strlen(text));
    expect_refused(path, "not a zip archive");

    path_in(path, sizeof path, "random.ckpt");
    uint8_t noise[4096];
    uint64_t r = 5;
    for (size_t i = 0; i < sizeof noise; i++) noise[i] = (uint8_t)(ckpt_sample_rng(&r) >> 56);
    ckpt_write_file(path, noise, sizeof noise);
    expect_refused(path, NULL);

    path_in(path, sizeof path, "other.zip");
    const char *names[] = {"hello.txt", "data/x.bin"};
    const void *datas[] = {"hello\n", noise};
    size_t sizes[] = {6, 100};
    write_zip(path, names, datas, sizes, 2);
    expect_refused(path, "unexpected member 'hello.txt'");

    /* A zip of checkpoint blobs without meta.yaml. */
    ckpt_sample s;
    CHECK(ckpt_sample_build(&s, 2, 1) == 0);
    uint8_t *blob;
    size_t blob_size;
    const yolo_ckpt_blob *mb = s.contents.blobs[YOLO_CKPT_MODEL];
    CHECK(yolo_st_encode(mb->tensors, mb->count, NULL, 0, "model", &blob, &blob_size) == YOLO_OK);
    path_in(path, sizeof path, "nometa.ckpt");
    const char *n1[] = {"model.safetensors"};
    const void *d1[] = {blob};
    size_t s1[] = {blob_size};
    write_zip(path, n1, d1, s1, 1);
    expect_refused(path, "no meta.yaml");

    /* meta.yaml without a required key / without members / listing a missing member. */
    char *yaml;
    size_t yaml_len;
    yolo_meta *m = yolo_meta_new_map();
    for (size_t i = 0; i < yolo_meta_size(s.meta); i++)
        if (strcmp(yolo_meta_key_at(s.meta, i), "ema_updates") != 0)
            yolo_meta_set_copy(m, yolo_meta_key_at(s.meta, i), yolo_meta_at(s.meta, i));
    yolo_meta_to_yaml(m, &yaml, &yaml_len);
    const char *n2[] = {"model.safetensors", "meta.yaml"};
    const void *d2[] = {blob, yaml};
    size_t s2[] = {blob_size, yaml_len};
    path_in(path, sizeof path, "nokey.ckpt");
    write_zip(path, n2, d2, s2, 2);
    expect_refused(path, "required key 'ema_updates' is missing");
    free(yaml);
    yolo_meta_set_int(m, "ema_updates", 3);
    yolo_meta_to_yaml(m, &yaml, &yaml_len);
    d2[1] = yaml;
    s2[1] = yaml_len;
    path_in(path, sizeof path, "nomembers.ckpt");
    write_zip(path, n2, d2, s2, 2);
    expect_refused(path, "'members'");
    free(yaml);
    yolo_meta *members = yolo_meta_set_map(m, "members");
    char crc[16];
    snprintf(crc, sizeof crc, "%08x", yolo_crc32_update(0, blob, blob_size));
    yolo_meta *mm = yolo_meta_set_map(members, "model.safetensors");
    yolo_meta_set_int(mm, "size", (int64_t)blob_size);
    yolo_meta_set_str(mm, "crc32", crc);
    yolo_meta *me = yolo_meta_set_map(members, "ema.safetensors");
    yolo_meta_set_int(me, "size", 1);
    yolo_meta_set_str(me, "crc32", "0");
    yolo_meta_to_yaml(m, &yaml, &yaml_len);
    d2[1] = yaml;
    s2[1] = yaml_len;
    path_in(path, sizeof path, "lost_member.ckpt");
    write_zip(path, n2, d2, s2, 2);
    expect_refused(path, "member ema.safetensors listed in meta.yaml is missing from");
    free(yaml);
    /* Consistent checksums but a broken safetensors blob: the decoder names it. */
    yolo_meta_remove(members, "ema.safetensors");
    uint8_t *bad = malloc(blob_size);
    memcpy(bad, blob, blob_size);
    bad[8] = '[';
    snprintf(crc, sizeof crc, "%08x", yolo_crc32_update(0, bad, blob_size));
    yolo_meta_set_str(mm, "crc32", crc);
    yolo_meta_to_yaml(m, &yaml, &yaml_len);
    d2[0] = bad;
    d2[1] = yaml;
    s2[1] = yaml_len;
    path_in(path, sizeof path, "bad_blob.ckpt");
    write_zip(path, n2, d2, s2, 2);
    char needle[700];
    snprintf(needle, sizeof needle, "model.safetensors of %s", path);
    expect_refused(path, needle);
    /* ... and a blob whose checksum does not match meta.yaml's (zip CRC intact). */
    yolo_meta_set_str(mm, "crc32", "deadbeef");
    free(yaml);
    yolo_meta_to_yaml(m, &yaml, &yaml_len);
    d2[0] = blob;
    d2[1] = yaml;
    s2[1] = yaml_len;
    path_in(path, sizeof path, "crc_meta.ckpt");
    write_zip(path, n2, d2, s2, 2);
    snprintf(needle, sizeof needle, "checksum mismatch in member model.safetensors of %s", path);
    expect_refused(path, needle);
    /* A member that appears twice. */
    const char *n3[] = {"model.safetensors", "model.safetensors", "meta.yaml"};
    const void *d3[] = {blob, blob, yaml};
    size_t s3[] = {blob_size, blob_size, yaml_len};
    path_in(path, sizeof path, "twice.ckpt");
    write_zip(path, n3, d3, s3, 3);
    expect_refused(path, "appears twice");
    free(yaml);
    free(bad);
    free(blob);
    yolo_meta_free(m);
    ckpt_sample_free(&s);
}

static void test_truncated_and_flipped(void) {
    ckpt_sample s;
    CHECK(ckpt_sample_build(&s, 5, 1) == 0);
    char good[600], path[600];
    path_in(good, sizeof good, "good.ckpt");
    CHECK(yolo_ckpt_write(good, &s.contents) == YOLO_OK);
    size_t size;
    uint8_t *bytes = ckpt_read_file(good, &size);
    CHECK(bytes != NULL);
    if (!bytes) return;
    path_in(path, sizeof path, "damaged.ckpt");

    /* Truncated anywhere: refused, naming the file. */
    int accepted = 0, tries = 0;
    for (size_t len = 0; len < size; len += (len < 64 || size - len < 300) ? 1 : 97) {
        ckpt_write_file(path, bytes, len);
        yolo_ckpt *ck = NULL;
        yolo_status st = yolo_ckpt_read(path, &ck);
        tries++;
        if (st == YOLO_OK) accepted++;
        else CHECK_MSG(st == YOLO_ERR_FORMAT && test_error_mentions(path), "len %zu: %s", len, yolo_last_error());
        yolo_ckpt_free(ck);
    }
    CHECK_MSG(accepted == 0, "%d of %d truncations accepted", accepted, tries);
    ckpt_write_file(path, bytes, size / 2);
    expect_refused(path, "truncated");

    /* A flipped byte in a blob's data or in meta.yaml: a checksum mismatch naming the member. */
    const yolo_ckpt_blob *mb = s.contents.blobs[YOLO_CKPT_MODEL];
    uint8_t *blob;
    size_t blob_size;
    CHECK(yolo_st_encode(mb->tensors, mb->count, NULL, 0, "model", &blob, &blob_size) == YOLO_OK);
    uint8_t *at = memmem(bytes, size, blob, blob_size);
    CHECK(at != NULL);
    char needle[700];
    if (at) {
        for (size_t off = 0; off < blob_size; off += blob_size / 7) {
            at[off] ^= 0x10;
            ckpt_write_file(path, bytes, size);
            at[off] ^= 0x10;
            snprintf(needle, sizeof needle, "checksum mismatch in member model.safetensors of %s", path);
            expect_refused(path, needle);
        }
    }
    free(blob);
    uint8_t *meta_at = memmem(bytes, size, "format_version: 1", 17);
    CHECK(meta_at != NULL);
    if (meta_at) {
        meta_at[16] ^= 0x01;
        ckpt_write_file(path, bytes, size);
        meta_at[16] ^= 0x01;
        snprintf(needle, sizeof needle, "checksum mismatch in member meta.yaml of %s", path);
        expect_refused(path, needle);
    }

    /* Random single-bit flips anywhere: refused naming the file, or (a flip
     * in a field nothing checks, e.g. a timestamp) loaded unchanged. */
    uint64_t r = 99;
    int refused = 0, harmless = 0;
    for (int i = 0; i < 600; i++) {
        size_t pos = (size_t)(ckpt_sample_rng(&r) % size);
        uint8_t bit = (uint8_t)(1u << (ckpt_sample_rng(&r) % 8));
        bytes[pos] ^= bit;
        ckpt_write_file(path, bytes, size);
        bytes[pos] ^= bit;
        yolo_ckpt *ck = NULL;
        yolo_status st = yolo_ckpt_read(path, &ck);
        if (st == YOLO_OK) {
            harmless++;
            CHECK_MSG(ckpt_same_as_sample(ck, &s), "flip at %zu loaded different contents", pos);
        } else {
            refused++;
            CHECK_MSG(st == YOLO_ERR_FORMAT && test_error_mentions(path), "flip at %zu: %s", pos, yolo_last_error());
        }
        yolo_ckpt_free(ck);
    }
    printf("random bit flips: %d refused, %d harmless (unchecked zip fields)\n", refused, harmless);
    CHECK(refused > 500);
    free(bytes);
    ckpt_sample_free(&s);
}

int main(void) {
    if (ckpt_tmpdir(dir, sizeof dir) != 0) return test_skip("cannot create a temporary folder");
    test_roundtrip();
    test_foreign_files();
    test_truncated_and_flipped();
    ckpt_rmdir(dir);
    return test_result("test_ckpt_file");
}

/* meta.yaml trees: emit -> parse round trips (fixed and random trees),
 * YAML typing, strict parsing, typed getters and the checkpoint keys. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_file.h"
#include "ckpt/meta.h"
#include "test_util.h"

static int roundtrip(const yolo_meta *m) {
    char *text = NULL;
    size_t len = 0;
    if (yolo_meta_to_yaml(m, &text, &len) != YOLO_OK) {
        fprintf(stderr, "emit: %s\n", yolo_last_error());
        return 0;
    }
    yolo_meta *back = NULL;
    int ok = yolo_meta_parse(text, len, "rt.yaml", &back) == YOLO_OK && yolo_meta_equal(m, back);
    if (!ok) fprintf(stderr, "round trip failed (%s) for:\n%s\n", yolo_last_error(), text);
    yolo_meta_free(back);
    free(text);
    return ok;
}

static void test_fixed_roundtrip(void) {
    yolo_meta *m = yolo_meta_new_map();
    yolo_meta_set_int(m, "zero", 0);
    yolo_meta_set_int(m, "min", INT64_MIN);
    yolo_meta_set_int(m, "max", INT64_MAX);
    double floats[] = {0.1, 1e-5, 1e20, -0.0, 0.0, 3.0, 5e-324, DBL_MAX, -2.5e-300, 1.0 / 3.0, INFINITY, -INFINITY, NAN};
    yolo_meta *fl = yolo_meta_set_list(m, "floats");
    for (size_t i = 0; i < sizeof floats / sizeof *floats; i++) yolo_meta_append_float(fl, floats[i]);
    const char *strs[] = {"", "null", "true", "123", "1.5", ".inf", "~", " lead", "trail ", "a: b", "# c", "- d",
                          "q\"uote", "back\\slash", "new\nline", "tab\there", "\x01\x1f\x7f", "\xc2\x85nel",
                          "\xe2\x80\xa8ls\xe2\x80\xa9ps", "\xef\xbb\xbf" "bom", "c1\xc2\x80\xc2\x9f", "\xef\xbf\xbe\xef\xbf\xbf", "üñí😀", "[x]", "{y}", "'s'", "%p", "@a", "`b",
                          "yes", "No", "0x10", "1e5", "-", "---", "...", "*alias", "&anchor", "!tag", "|", ">"};
    yolo_meta *sl = yolo_meta_set_list(m, "strings");
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) yolo_meta_append_str(sl, strs[i]);
    yolo_meta *keys = yolo_meta_set_map(m, "keys");
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) yolo_meta_set_int(keys, strs[i], (int64_t)i);
    yolo_meta_set_bool(m, "t", true);
    yolo_meta_set_bool(m, "f", false);
    yolo_meta_set_null(m, "nothing");
    yolo_meta_set_map(m, "empty_map");
    yolo_meta_set_list(m, "empty_list");
    yolo_meta *nest = yolo_meta_set_list(m, "nest");
    yolo_meta *inner = yolo_meta_append_list(nest);
    yolo_meta_append_list(yolo_meta_append_list(inner));
    yolo_meta_append_int(inner, 1);
    yolo_meta_append_map(nest);
    yolo_meta_append_list(nest);
    yolo_meta *row = yolo_meta_append_map(nest);
    yolo_meta_set_float(row, "metrics/mAP50-95(B)", 0.5);
    yolo_meta_set_list(row, "l");
    yolo_meta_append_str(yolo_meta_set_list(row, "l2"), "x");
    yolo_meta_set_map(yolo_meta_set_map(row, "m"), "deeper");
    char long_key[3000];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    yolo_meta_set_int(m, long_key, 1); /* YAML's implicit keys stop at 1024 characters */
    yolo_meta_set_map(yolo_meta_append_map(nest), long_key);
    yolo_meta_set_str(yolo_meta_set_map(yolo_meta_get_mut(m, "keys"), long_key + 1000), long_key + 1500, "v");
    CHECK(roundtrip(m));

    /* replace keeps position; remove */
    yolo_meta_set_str(m, "zero", "now a string");
    CHECK(strcmp(yolo_meta_key_at(m, 0), "zero") == 0 && yolo_meta_kind_of(yolo_meta_at(m, 0)) == YOLO_META_STR);
    yolo_meta_remove(m, "min");
    CHECK(yolo_meta_get(m, "min") == NULL);
    CHECK(roundtrip(m));
    CHECK(yolo_meta_set_str(m, "bad", "\xff") == YOLO_ERR_ARG);
    CHECK(yolo_meta_set_int(m, "\xc0\x80", 1) == YOLO_ERR_ARG);
    CHECK(yolo_meta_append_int(m, 1) == YOLO_ERR_ARG);
    CHECK(yolo_meta_set_int(fl, "k", 1) == YOLO_ERR_ARG);

    /* The emitted text is what PyYAML also types right: floats carry a '.' */
    char *text;
    size_t len;
    CHECK(yolo_meta_to_yaml(m, &text, &len) == YOLO_OK);
    CHECK(strstr(text, "- 1.0e+20\n") && strstr(text, "- 1.0000000000000001e-05\n") == NULL && strstr(text, "- 1.0e-05\n"));
    CHECK(strstr(text, "- 3.0\n") && strstr(text, "- .nan\n") && strstr(text, "- -.inf\n") && strstr(text, "- -0.0\n"));
    CHECK(strstr(text, "  \"yes\": ") && strstr(text, "- metrics/mAP50-95(B): 0.5\n"));
    free(text);
    yolo_meta_free(m);
}

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void random_string(uint64_t *s, char *buf, int n) {
    static const char *pieces[] = {"a", "Z", "0", " ", ":", "#", "-", "\"", "'", "\\", "\n", "\t", "é", "😀", "\x01",
                                   "\xc2\x85", "\xe2\x80\xa8", "{", "]", "&", "*", "!", "|", ">", "%", "@", "null", "1"};
    buf[0] = '\0';
    int k = (int)(rng_next(s) % (uint64_t)n);
    for (int i = 0; i < k; i++) strcat(buf, pieces[rng_next(s) % (sizeof pieces / sizeof *pieces)]);
}

static void random_fill(yolo_meta *c, uint64_t *s, int depth) {
    int n = (int)(rng_next(s) % 6);
    for (int i = 0; i < n; i++) {
        char key[128], str[128];
        random_string(s, key, 6);
        random_string(s, str, 8);
        bool map = yolo_meta_kind_of(c) == YOLO_META_MAP;
        int kind = (int)(rng_next(s) % (depth < 4 ? 8 : 6));
        union { uint64_t u; double d; } bits = {.u = rng_next(s)};
        double f = isnan(bits.d) ? 0.25 : bits.d;
        switch (kind) {
        case 0: map ? yolo_meta_set_null(c, key) : yolo_meta_append_null(c); break;
        case 1: map ? yolo_meta_set_bool(c, key, rng_next(s) & 1) : yolo_meta_append_bool(c, rng_next(s) & 1); break;
        case 2: map ? yolo_meta_set_int(c, key, (int64_t)rng_next(s)) : yolo_meta_append_int(c, (int64_t)rng_next(s)); break;
        case 3: map ? yolo_meta_set_float(c, key, f) : yolo_meta_append_float(c, f); break;
        case 4:
        case 5: map ? yolo_meta_set_str(c, key, str) : yolo_meta_append_str(c, str); break;
        case 6: random_fill(map ? yolo_meta_set_map(c, key) : yolo_meta_append_map(c), s, depth + 1); break;
        default: random_fill(map ? yolo_meta_set_list(c, key) : yolo_meta_append_list(c), s, depth + 1); break;
        }
    }
}

static void test_random_roundtrip(void) {
    uint64_t s = 88172645463325252ull;
    int failures = 0;
    for (int i = 0; i < 400 && failures < 3; i++) {
        yolo_meta *m = yolo_meta_new_map();
        random_fill(m, &s, 0);
        if (!roundtrip(m)) failures++;
        yolo_meta_free(m);
    }
    CHECK(failures == 0);
}

static void expect_parse_error(const char *text, const char *needle) {
    yolo_meta *m = NULL;
    yolo_status st = yolo_meta_parse(text, strlen(text), "bad.yaml", &m);
    CHECK_MSG(st == YOLO_ERR_FORMAT && !m, "accepted: %s", text);
    CHECK_MSG(test_error_mentions("bad.yaml") && test_error_mentions(needle), "for %s: expected '%s' in: %s", text,
              needle, yolo_last_error());
    yolo_meta_free(m);
}

static void test_parse(void) {
    const char *text = "a: 1\nb: -2\nc: 1.5\nd: 1e3\ne: .5\nf: ~\ng: null\nh: True\ni: 'quoted 1'\nj: \"2\"\n"
                       "k: plain text\nl: [1, x, {m: 2}]\nn: !!str 5\no: .inf\np: -.INF\nq: .nan\nr: +7\ns: 0x1F\n"
                       "t: |\n  block\n  text\n";
    yolo_meta *m = NULL;
    CHECK(yolo_meta_parse(text, strlen(text), "ok.yaml", &m) == YOLO_OK);
    if (m) {
        CHECK(yolo_meta_int(yolo_meta_get(m, "a")) == 1 && yolo_meta_int(yolo_meta_get(m, "b")) == -2);
        CHECK(yolo_meta_kind_of(yolo_meta_get(m, "c")) == YOLO_META_FLOAT && yolo_meta_float(yolo_meta_get(m, "c")) == 1.5);
        CHECK(yolo_meta_float(yolo_meta_get(m, "d")) == 1000.0 && yolo_meta_float(yolo_meta_get(m, "e")) == 0.5);
        CHECK(yolo_meta_kind_of(yolo_meta_get(m, "f")) == YOLO_META_NULL && yolo_meta_kind_of(yolo_meta_get(m, "g")) == YOLO_META_NULL);
        CHECK(yolo_meta_bool(yolo_meta_get(m, "h")));
        CHECK(strcmp(yolo_meta_str(yolo_meta_get(m, "i")), "quoted 1") == 0);
        CHECK(strcmp(yolo_meta_str(yolo_meta_get(m, "j")), "2") == 0);
        CHECK(strcmp(yolo_meta_str(yolo_meta_get(m, "k")), "plain text") == 0);
        const yolo_meta *l = yolo_meta_get(m, "l");
        CHECK(yolo_meta_size(l) == 3 && yolo_meta_int(yolo_meta_at(l, 0)) == 1);
        CHECK(yolo_meta_int(yolo_meta_get(yolo_meta_at(l, 2), "m")) == 2);
        CHECK(strcmp(yolo_meta_str(yolo_meta_get(m, "n")), "5") == 0);
        CHECK(isinf(yolo_meta_float(yolo_meta_get(m, "o"))) && yolo_meta_float(yolo_meta_get(m, "p")) < 0);
        CHECK(isnan(yolo_meta_float(yolo_meta_get(m, "q"))));
        CHECK(yolo_meta_int(yolo_meta_get(m, "r")) == 7);
        CHECK(yolo_meta_kind_of(yolo_meta_get(m, "s")) == YOLO_META_STR);
        CHECK(strcmp(yolo_meta_str(yolo_meta_get(m, "t")), "block\ntext\n") == 0);

        int64_t i;
        double d;
        const char *str;
        const yolo_meta *sub;
        CHECK(yolo_meta_get_int(m, "a", "ok.yaml", &i) == YOLO_OK && i == 1);
        CHECK(yolo_meta_get_float(m, "a", "ok.yaml", &d) == YOLO_OK && d == 1.0);
        CHECK(yolo_meta_get_int(m, "c", "ok.yaml", &i) == YOLO_ERR_FORMAT && test_error_mentions("key 'c' is a float, expected an integer"));
        CHECK(yolo_meta_get_str(m, "zz", "ok.yaml", &str) == YOLO_ERR_FORMAT && test_error_mentions("ok.yaml: required key 'zz' is missing"));
        CHECK(yolo_meta_get_list(m, "l", "ok.yaml", &sub) == YOLO_OK && sub == l);
        CHECK(yolo_meta_get_map(m, "l", "ok.yaml", &sub) == YOLO_ERR_FORMAT);
        yolo_meta_free(m);
    }
    expect_parse_error("a: &x 1\nb: *x\n", "alias");
    expect_parse_error("a: 1\na: 2\n", "duplicate key 'a'");
    expect_parse_error("a: 1\n---\nb: 2\n", "more than one YAML document");
    expect_parse_error("- 1\n- 2\n", "not a map");
    expect_parse_error("", "empty document");
    expect_parse_error("a: [1, 2\n", "line");
    expect_parse_error("a: b: c\n", "line 1");
    expect_parse_error("a: 1\n b: 2\nc\n", "line");
    expect_parse_error("? [1]\n: 2\n", "key must be a scalar");
    expect_parse_error("a: 99999999999999999999\n", "out of the 64-bit range");
    expect_parse_error("a: \"nul\\0here\"\n", "NUL");
    char deep[400] = "a: ";
    for (int i = 0; i < 80; i++) strcat(deep, "[");
    expect_parse_error(deep, "nesting deeper");
    expect_parse_error("a: \"\xff\"\n", "line");
}

static void test_ckpt_meta_keys(void) {
    yolo_ckpt_info info = {.task = "segment", .plugin_version = "2.0", .epoch = 4, .optimizer_steps = 12345678901234,
                           .ema_updates = 9, .best_fitness = NAN, .seed = -3, .sampler_epoch = 5, .sampler_batch = 17};
    yolo_meta *m = NULL;
    CHECK(yolo_ckpt_meta_new(&info, &m) == YOLO_OK);
    if (!m) return;
    yolo_ckpt_info back;
    CHECK(yolo_ckpt_meta_check(m, "meta", &back) == YOLO_OK);
    CHECK(strcmp(back.task, "segment") == 0 && strcmp(back.plugin_version, "2.0") == 0 && back.epoch == 4);
    CHECK(back.optimizer_steps == 12345678901234 && back.ema_updates == 9 && isnan(back.best_fitness));
    CHECK(back.seed == -3 && back.sampler_epoch == 5 && back.sampler_batch == 17);
    CHECK(back.format_version == YOLO_CKPT_FORMAT_VERSION && back.yolo_version && strlen(back.date) == 20);
    CHECK(roundtrip(m));

    const char *required[] = {"format_version", "yolo_version", "date", "task", "plugin_version", "epoch",
                              "optimizer_steps", "ema_updates", "best_fitness", "seed", "sampler", "train_args", "results"};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
        yolo_meta *c = yolo_meta_new_map();
        for (size_t k = 0; k < yolo_meta_size(m); k++)
            if (strcmp(yolo_meta_key_at(m, k), required[i]) != 0) yolo_meta_set_copy(c, yolo_meta_key_at(m, k), yolo_meta_at(m, k));
        CHECK_MSG(yolo_ckpt_meta_check(c, "meta.yaml of x.ckpt", NULL) == YOLO_ERR_FORMAT && test_error_mentions(required[i]) &&
                  test_error_mentions("x.ckpt"), "missing %s: %s", required[i], yolo_last_error());
        yolo_meta_free(c);
    }
    yolo_meta_set_str(m, "epoch", "4");
    CHECK(yolo_ckpt_meta_check(m, "meta.yaml of x.ckpt", NULL) == YOLO_ERR_FORMAT && test_error_mentions("key 'epoch' is a string"));
    yolo_meta_set_int(m, "epoch", 4);
    yolo_meta_set_int(yolo_meta_get_mut(m, "sampler"), "batch", -1);
    CHECK(yolo_ckpt_meta_check(m, "meta.yaml of x.ckpt", NULL) == YOLO_ERR_FORMAT && test_error_mentions("sampler"));
    yolo_meta_set_int(yolo_meta_get_mut(m, "sampler"), "batch", 0);
    yolo_meta_append_int(yolo_meta_get_mut(m, "results"), 3);
    CHECK(yolo_ckpt_meta_check(m, "meta.yaml of x.ckpt", NULL) == YOLO_ERR_FORMAT && test_error_mentions("results[0]"));
    yolo_meta_set_list(m, "results");
    yolo_meta_set_int(m, "format_version", 99);
    CHECK(yolo_ckpt_meta_check(m, "meta.yaml of x.ckpt", NULL) == YOLO_ERR_FORMAT && test_error_mentions("newer yolo"));
    yolo_meta_free(m);
    info.task = NULL;
    CHECK(yolo_ckpt_meta_new(&info, &m) == YOLO_ERR_ARG && m == NULL);
}

int main(void) {
    test_fixed_roundtrip();
    test_random_roundtrip();
    test_parse();
    test_ckpt_meta_keys();
    return test_result("test_ckpt_meta");
}

/* YOLO_CPU_ISA and the vector clones' dispatch (util/cpu_isa.h, vec.h):
 * - every accepted value parses, a bad one is an error naming the
 *   variable, the value and the accepted values (also from `yolo`, which
 *   exits 2 on it);
 * - with the dispatch level forced (test hook) to each level the machine
 *   has, every dispatched function reached here (BCE-with-logits, bf16
 *   rounding, SILU, SIGMOID, SOFTMAX rows, batch norm's statistics, apply,
 *   fused SiLU and backward, bf16 widening and ADD under amp) runs that
 *   level's clone, and gives bits identical to the portable clone's;
 * - run again under YOLO_CPU_ISA=avx2 (a child process), the level, the
 *   dispatch, bf16_row's hardware path and oneDNN's effective ISA are
 *   capped, and `yolo checks` says so, with OpenBLAS's Haswell kernels. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "test_util.h"
#include "util/bf16_row.h"
#include "util/cpu_isa.h"
#include "yolo/loss.h"

static void check_parse(void) {
    static const struct {
        const char *name;
        yolo_cpu_isa level;
    } ok[] = {{"default", YOLO_CPU_ISA_DEFAULT},
              {"avx2", YOLO_CPU_ISA_AVX2},
              {"avx512", YOLO_CPU_ISA_AVX512},
              {"avx512_bf16", YOLO_CPU_ISA_AVX512_BF16}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        yolo_cpu_isa l = (yolo_cpu_isa)-1;
        CHECK_MSG(yolo_cpu_isa_parse(ok[i].name, &l) == YOLO_OK && l == ok[i].level, "parse %s", ok[i].name);
#if defined(__x86_64__)
        CHECK_MSG(strcmp(yolo_cpu_isa_name(ok[i].level), ok[i].name) == 0, "name of %s", ok[i].name);
#endif
    }
    static const char *const bad[] = {"avx3", "AVX2", "avx512f", " avx2", "sse"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        yolo_cpu_isa l;
        CHECK_MSG(yolo_cpu_isa_parse(bad[i], &l) == YOLO_ERR_CONFIG, "'%s' parsed", bad[i]);
        CHECK_MSG(test_error_mentions("YOLO_CPU_ISA") && test_error_mentions(bad[i]) &&
                      test_error_mentions("avx2, avx512, avx512_bf16, default"),
                  "'%s': %s", bad[i], yolo_last_error());
    }
    /* the environment: a bad value is yolo_cpu_isa_check's error, unset caps nothing */
    setenv("YOLO_CPU_ISA", "avx3", 1);
    CHECK(yolo_cpu_isa_check() == YOLO_ERR_CONFIG && test_error_mentions("YOLO_CPU_ISA=avx3"));
    yolo_cpu_isa cap;
    bool set;
    setenv("YOLO_CPU_ISA", "avx2", 1);
    CHECK(yolo_cpu_isa_cap(&cap, &set) == YOLO_OK && set && cap == YOLO_CPU_ISA_AVX2);
    unsetenv("YOLO_CPU_ISA");
    CHECK(yolo_cpu_isa_cap(&cap, &set) == YOLO_OK && !set && cap == yolo_cpu_isa_machine());
    CHECK(yolo_cpu_isa_check() == YOLO_OK);
}

enum { N = 2, C = 8, H = 9, W = 11, NX = N * C * H * W, NB = 1003 };

typedef struct outputs {
    float act[NX], soft[NX], sig[NX], dx[NX], dgamma[C], dbeta[C]; /* fp32 graph */
    float amp_act[NX], amp_dx[NX];                                 /* the same under amp (bf16 values) */
    float bce_grad[NB];
    double bce;
    uint16_t rounded[NB];
} outputs;

/* silu(batch_norm(x)) (BN_SILU and its backward), softmax over W (rows),
 * sigmoid(x), and their gradients; under amp, silu(bn(x)) + silu(bn(x)):
 * bf16 values, widened and added. `picked` gets the clone the graph's
 * dispatched kernels ran (yolo_vector_isa_selected's bits). */
static void run_graph(yolo_backend *be, bool amp, float *act, float *soft, float *sig, float *dx, float *dgamma,
                      float *dbeta, int *picked) {
    yolo_backend_set_amp(be, amp);
    yolo_graph *g = yolo_graph_new(be);
    const int64_t xs[4] = {N, C, H, W}, cs[1] = {C};
    yolo_tensor *x = test_tensor_random(be, "x", 4, xs, 11, -2.0f, 2.0f, 1);
    yolo_tensor *gamma = test_tensor_random(be, "gamma", 1, cs, 12, 0.5f, 1.5f, 1);
    yolo_tensor *beta = test_tensor_random(be, "beta", 1, cs, 13, -0.5f, 0.5f, 1);
    yolo_tensor *rm = test_tensor_random(be, "rm", 1, cs, 14, -0.1f, 0.1f, 0);
    yolo_tensor *rv = test_tensor_random(be, "rv", 1, cs, 15, 0.5f, 1.5f, 0);
    yolo_tensor *a = yolo_silu(g, yolo_batch_norm(g, x, gamma, beta, rm, rv, true, 0.03f, 1e-3f));
    if (amp) a = yolo_add(g, a, yolo_silu(g, yolo_batch_norm(g, x, gamma, beta, rm, rv, true, 0.03f, 1e-3f)));
    yolo_tensor *s = yolo_softmax(g, x, 3), *sg = yolo_sigmoid(g, x);
    yolo_tensor *outs[3] = {a, s, sg}, *dys[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) CHECK(outs[i] && yolo_graph_mark_output(g, outs[i]) == YOLO_OK);
    CHECK(yolo_graph_backward_from(g, 3, outs, dys) == YOLO_OK);
    CHECK_MSG(yolo_graph_plan(g, NULL) == YOLO_OK, "plan: %s", yolo_last_error());
    float *d = malloc(NX * sizeof *d);
    for (int i = 0; i < 3; i++) {
        test_fill_uniform(d, NX, 20 + (uint64_t)i, -1.0f, 1.0f);
        CHECK(yolo_tensor_upload_f32(dys[i], d, NX) == YOLO_OK);
    }
    free(d);
    yolo_vector_isa_reset_selected();
    CHECK_MSG(yolo_graph_run(g) == YOLO_OK, "run: %s", yolo_last_error());
    *picked = yolo_vector_isa_selected();
    CHECK(yolo_tensor_download_f32(a, act, NX) == YOLO_OK);
    if (soft) CHECK(yolo_tensor_download_f32(s, soft, NX) == YOLO_OK);
    if (sig) CHECK(yolo_tensor_download_f32(sg, sig, NX) == YOLO_OK);
    CHECK(yolo_tensor_download_f32(x->grad, dx, NX) == YOLO_OK);
    if (dgamma) CHECK(yolo_tensor_download_f32(gamma->grad, dgamma, C) == YOLO_OK);
    if (dbeta) CHECK(yolo_tensor_download_f32(beta->grad, dbeta, C) == YOLO_OK);
    yolo_graph_free(g);
    yolo_tensor *ts[5] = {x, gamma, beta, rm, rv};
    for (int i = 0; i < 5; i++) yolo_tensor_free(ts[i]);
}

/* Whether the clones that ran (yolo_vector_isa_selected's bits) are those
 * of `want`: its own, with at most the avx2 clones of the AVX2-only
 * dispatches beside, and never the portable ones above the default. */
static bool ran(int bits, int want) {
    const int allowed = (1 << want) | (want >= YOLO_CPU_ISA_AVX2 ? 1 << YOLO_CPU_ISA_AVX2 : 0);
    return (bits & (1 << want)) && !(bits & ~allowed);
}

/* Everything at the forced `level`; each dispatched entry must run its clone. */
static void run_all(yolo_backend *be, int level, outputs *o) {
    const int want = level > YOLO_CPU_ISA_AVX512 ? YOLO_CPU_ISA_AVX512 : level;
    yolo_vector_isa_force(level);
    float x[NB], t[NB];
    test_fill_uniform(x, NB, 1, -20.0f, 20.0f);
    test_fill_uniform(t, NB, 2, 0.0f, 1.0f);
    yolo_vector_isa_reset_selected();
    o->bce = yolo_bce_with_logits(x, t, NB, 0.5f, o->bce_grad);
    CHECK_MSG(yolo_vector_isa_selected() == 1 << want, "level %s: BCE ran clones %#x", yolo_cpu_isa_name(level),
              yolo_vector_isa_selected());
    yolo_vector_isa_reset_selected();
    yolo_bf16_round_row_portable(x, o->rounded, NB);
    CHECK_MSG(yolo_vector_isa_selected() == 1 << want, "level %s: bf16 rounding ran clones %#x",
              yolo_cpu_isa_name(level), yolo_vector_isa_selected());
    CHECK_MSG(yolo_bf16_round_row_hardware() == (level >= YOLO_CPU_ISA_AVX512_BF16),
              "level %s: bf16_row's hardware path", yolo_cpu_isa_name(level));
    int picked;
    run_graph(be, false, o->act, o->soft, o->sig, o->dx, o->dgamma, o->dbeta, &picked);
    CHECK_MSG(ran(picked, want), "level %s: the graph's kernels ran clones %#x", yolo_cpu_isa_name(level), picked);
    run_graph(be, true, o->amp_act, NULL, NULL, o->amp_dx, NULL, NULL, &picked);
    CHECK_MSG(ran(picked, want), "level %s: the amp graph's kernels ran clones %#x", yolo_cpu_isa_name(level), picked);
    yolo_vector_isa_force(-1);
}

static void check_clones(void) {
    yolo_backend *be = NULL;
    if (yolo_backend_create("cpu", 2, &be) != YOLO_OK) {
        printf("no CPU backend: clones not compared (%s)\n", yolo_last_error());
        return;
    }
    static outputs ref, got;
    run_all(be, YOLO_CPU_ISA_DEFAULT, &ref);
    const yolo_cpu_isa machine = yolo_cpu_isa_machine();
    for (int level = YOLO_CPU_ISA_AVX2; level <= (int)machine; level++) {
        memset(&got, 0, sizeof got);
        run_all(be, level, &got);
        CHECK_MSG(memcmp(&ref, &got, sizeof ref) == 0, "level %s: results differ from the default clone's",
                  yolo_cpu_isa_name((yolo_cpu_isa)level));
        printf("level %-12s clone %-8s bit-identical to the default clone\n", yolo_cpu_isa_name((yolo_cpu_isa)level),
               yolo_cpu_isa_clone_name((yolo_cpu_isa)level));
    }
    yolo_backend_free(be);
}

/* In a child under YOLO_CPU_ISA=avx2: nothing forced, the cap alone. */
static int capped_child(void) {
    const yolo_cpu_isa machine = yolo_cpu_isa_machine();
    const yolo_cpu_isa want = machine < YOLO_CPU_ISA_AVX2 ? machine : YOLO_CPU_ISA_AVX2;
    CHECK_MSG(yolo_cpu_isa_level() == want, "level %s under YOLO_CPU_ISA=avx2",
              yolo_cpu_isa_name(yolo_cpu_isa_level()));
    CHECK(yolo_vector_level() == (int)want);
    CHECK(!yolo_bf16_round_row_hardware());
    float x[40], g[40];
    test_fill_uniform(x, 40, 3, -5.0f, 5.0f);
    yolo_vector_isa_reset_selected();
    yolo_bce_with_logits(x, NULL, 40, 1.0f, g);
    CHECK_MSG(yolo_vector_isa_selected() == 1 << want, "BCE ran clones %#x", yolo_vector_isa_selected());
#if defined(__x86_64__)
    if (machine >= YOLO_CPU_ISA_AVX2)
        CHECK_MSG(strcmp(yolo_cpu_isa_onednn(), "avx2") == 0, "oneDNN runs %s", yolo_cpu_isa_onednn());
#endif
    char line[512];
    yolo_cpu_isa_describe(line, sizeof line);
    printf("capped: %s\n", line);
    if (machine > YOLO_CPU_ISA_AVX2)
        CHECK_MSG(strstr(line, "ISA avx2 (capped by YOLO_CPU_ISA=avx2; machine ") != NULL, "%s", line);
    return test_result("test_cpu_isa --capped");
}

static void check_capped_child(void) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("YOLO_CPU_ISA", "avx2", 1);
        unsetenv("ONEDNN_MAX_CPU_ISA");
        execl("/proc/self/exe", "test_cpu_isa", "--capped", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the capped child failed (status %d)", status);
}

/* `yolo`: a bad value stops it (exit 2, the message); under avx2 `yolo
 * checks` prints the capped line, OpenBLAS re-executed on Haswell kernels. */
static void check_cli(void) {
    char dir[1024];
    if (!getenv("YOLO_BINARY_DIR") || !test_temp_dir(dir, sizeof dir)) {
        printf("YOLO_BINARY_DIR unset: the CLI is not checked\n");
        return;
    }
    setenv("YOLO_CPU_ISA", "avx3", 1);
    int rc = test_run_yolo(dir, "checks");
    char path[1100];
    snprintf(path, sizeof path, "%s/log.txt", dir);
    char *log = test_read_text(path);
    CHECK_MSG(rc == 2 && log && strstr(log, "YOLO_CPU_ISA=avx3") && strstr(log, "avx2, avx512, avx512_bf16, default"),
              "yolo checks under YOLO_CPU_ISA=avx3: exit %d, %s", rc, log ? log : "(no log)");
    free(log);
    const yolo_cpu_isa machine = yolo_cpu_isa_machine();
    if (machine <= YOLO_CPU_ISA_AVX2) {
        unsetenv("YOLO_CPU_ISA");
        return;
    }
    setenv("YOLO_CPU_ISA", "avx2", 1);
    rc = test_run_yolo(dir, "checks");
    unsetenv("YOLO_CPU_ISA");
    log = test_read_text(path);
    CHECK_MSG(log && strstr(log, "ISA avx2 (capped by YOLO_CPU_ISA=avx2; machine ") &&
                  strstr(log, "; oneDNN avx2; OpenBLAS Haswell; our kernels avx2"),
              "yolo checks under YOLO_CPU_ISA=avx2 (exit %d): %s", rc, log ? log : "(no log)");
    free(log);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--capped") == 0) return capped_child();
    char line[512];
    yolo_cpu_isa_describe(line, sizeof line);
    printf("%s\n", line);
    check_parse();
    check_clones();
    check_capped_child();
    check_cli();
    return test_result("test_cpu_isa");
}

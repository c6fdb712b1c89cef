/* The plain driver of a fuzz target (any compiler; CI runs it under gcc
 * ASan+UBSan): replays every file of the corpus folders given, then
 * mutates them (fuzz_mutate) for -seconds N and feeds each mutant to the
 * target's LLVMFuzzerTestOneInput. A crash, sanitizer report or abort is
 * a finding; the input that caused it is written to -crash FILE first.
 *   <target>_driver [-seconds N] [-seed N] [-runs N] [-crash FILE] [-mem-mb N] corpus...
 * -mem-mb N caps what the target may allocate at N MiB more than the
 * driver had mapped when it started (RLIMIT_AS), so an allocation a reader
 * should have refused fails instead of succeeding: targets that promise a
 * bounded reader treat the YOLO_ERR_NOMEM that follows as a finding. An
 * ASan build maps terabytes of shadow, so there the cap is ASan's own
 * (allocator_may_return_null=1:max_allocation_size_mb=N, from the
 * environment; tests/fuzz.cmake sets it) and -mem-mb sets nothing.
 * Under clang the same target file is linked with -fsanitize=fuzzer
 * instead (tests/fuzz.cmake). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_mutate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUTS 4096

static fuzz_input inputs[MAX_INPUTS];
static int n_inputs;
static const char *crash_path;

static void run(const uint8_t *data, size_t size) {
    if (crash_path) { /* what is about to run, in case it does not come back */
        FILE *f = fopen(crash_path, "wb");
        if (f) {
            fwrite(data, 1, size, f);
            fclose(f);
        }
    }
    LLVMFuzzerTestOneInput(data, size);
}

static int load_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz driver: cannot read %s\n", path);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        int rc = 0;
        while (d && (e = readdir(d)) && rc == 0) {
            if (e->d_name[0] == '.') continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rc = load_path(sub);
        }
        if (d) closedir(d);
        return rc;
    }
    if (n_inputs == MAX_INPUTS) return 0;
    FILE *f = fopen(path, "rb");
    uint8_t *buf = malloc((size_t)st.st_size + 1);
    size_t n = f && buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    if (f) fclose(f);
    if (!buf) return -1;
    inputs[n_inputs++] = (fuzz_input){buf, n};
    return 0;
}

#if defined(__SANITIZE_ADDRESS__)
#define DRIVER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DRIVER_ASAN 1
#endif
#endif

/* RLIMIT_AS: what is mapped now (/proc/self/statm) plus mb MiB. */
static int cap_memory(long mb) {
#ifdef DRIVER_ASAN
    (void)mb;
    return 0;
#else
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f || fscanf(f, "%lu", &pages) != 1) {
        if (f) fclose(f);
        fprintf(stderr, "fuzz driver: cannot read /proc/self/statm for -mem-mb\n");
        return -1;
    }
    fclose(f);
    rlim_t cap = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)mb << 20);
    struct rlimit rl = {cap, cap};
    if (setrlimit(RLIMIT_AS, &rl) != 0) {
        perror("fuzz driver: setrlimit");
        return -1;
    }
    return 0;
#endif
}

static double seconds_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

int main(int argc, char **argv) {
    double seconds = 10;
    long max_runs = -1, mem_mb = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "-seed") && i + 1 < argc) fuzz_seed(strtoull(argv[++i], NULL, 0));
        else if (!strcmp(argv[i], "-runs") && i + 1 < argc) max_runs = atol(argv[++i]);
        else if (!strcmp(argv[i], "-crash") && i + 1 < argc) crash_path = argv[++i];
        else if (!strcmp(argv[i], "-mem-mb") && i + 1 < argc) mem_mb = atol(argv[++i]);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [-seconds N] [-seed N] [-runs N] [-crash FILE] [-mem-mb N] corpus files/folders...\n",
                    argv[0]);
            return 2;
        } else if (load_path(argv[i]) != 0) return 1;
    }
    if (n_inputs == 0) {
        fprintf(stderr, "%s: no corpus given\n", argv[0]);
        return 2;
    }
    if (mem_mb > 0 && cap_memory(mem_mb) != 0) return 2;
    for (int i = 0; i < n_inputs; i++) run(inputs[i].data, inputs[i].size);
    size_t cap = 1 << 16;
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i].size + 256 > cap) cap = inputs[i].size + 256;
    uint8_t *buf = malloc(cap);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long runs = 0;
    for (; max_runs < 0 || runs < max_runs; runs++) {
        if ((runs & 15) == 0 && seconds_since(&t0) >= seconds) break;
        const fuzz_input *s = &inputs[fuzz_rand() % (uint64_t)n_inputs];
        memcpy(buf, s->data, s->size);
        run(buf, fuzz_mutate(buf, s->size, cap, inputs, n_inputs));
    }
    printf("%s: %d corpus inputs replayed, %ld mutated inputs in %.1f s: no crash\n", argv[0], n_inputs, runs,
           seconds_since(&t0));
    free(buf);
    for (int i = 0; i < n_inputs; i++) free(inputs[i].data);
    return 0;
}

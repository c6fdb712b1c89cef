/* Shared by the DDP tests: the processes of a run found through /proc (a
 * `world=2` run is the re-launching yolo, mpirun and two ranks). */
#ifndef YOLO_TEST_DDP_UTIL_H
#define YOLO_TEST_DDP_UTIL_H

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Whether the NUL-separated file holds the entry `want` (or, for a
 * command line, whether its text contains `want` when `substring`). */
static inline int ddp_proc_has(const char *pid, const char *file, const char *want, int substring) {
    char path[300], buf[65536];
    snprintf(path, sizeof path, "/proc/%s/%s", pid, file);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    if (substring) {
        for (size_t i = 0; i < n; i++)
            if (!buf[i]) buf[i] = ' ';
        return strstr(buf, want) != NULL;
    }
    for (size_t at = 0; at < n; at += strlen(buf + at) + 1)
        if (strcmp(buf + at, want) == 0) return 1;
    return 0;
}

/* Pids whose command line contains `tag`: all of them (rank < 0) or the
 * rank-`rank` process of an Open MPI or MPICH job. Returns how many (<= max). */
static inline int ddp_pids(const char *tag, int rank, pid_t *out, int max) {
    char want[64], want_pmi[64]; /* Open MPI's and MPICH's name for the rank */
    snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", rank);
    snprintf(want_pmi, sizeof want_pmi, "PMI_RANK=%d", rank);
    DIR *proc = opendir("/proc");
    struct dirent *e;
    int n = 0;
    while (proc && n < max && (e = readdir(proc)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == (int)getpid()) continue;
        if (!ddp_proc_has(e->d_name, "cmdline", tag, 1)) continue;
        if (rank >= 0 && !ddp_proc_has(e->d_name, "environ", want, 0) && !ddp_proc_has(e->d_name, "environ", want_pmi, 0))
            continue;
        out[n++] = (pid_t)atoi(e->d_name);
    }
    if (proc) closedir(proc);
    return n;
}

#endif

/* The DDP launch decisions (core/dist/launch.c): how many ranks a
 * command asks for, each rank's device from a device list, and the
 * launcher environment of Open MPI, MPICH and Slurm. */
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "dist/launch.h"
#include "test_util.h"
#include "yolo/config.h"

static int requested(const char *world, const char *device, yolo_status *st) {
    yolo_config *cfg = NULL;
    int n = -1;
    *st = yolo_config_new(&cfg);
    if (!*st && world) *st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "world", world, "command line");
    if (!*st && device) *st = yolo_config_set(cfg, YOLO_CONFIG_LAYER_CLI, "device", device, "command line");
    if (!*st) *st = yolo_dist_requested_world(cfg, &n);
    yolo_config_free(cfg);
    return n;
}

static void check_device(const char *device, int local_rank, int local_world, const char *want) {
    char out[64] = "";
    yolo_status st = yolo_dist_rank_device(device, local_rank, local_world, out, sizeof out);
    CHECK_MSG(st == YOLO_OK && strcmp(out, want) == 0, "device=%s rank %d/%d: '%s' (%s), want '%s'", device,
              local_rank, local_world, out, st ? yolo_last_error() : "ok", want);
}

static void clear_env(void) {
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                          "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
                          "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

int main(void) {
    yolo_status st;
    CHECK(requested(NULL, NULL, &st) == 1 && st == YOLO_OK);
    CHECK(requested("2", "cpu", &st) == 2 && st == YOLO_OK);
    CHECK(requested(NULL, "vulkan:0,1", &st) == 2 && st == YOLO_OK);
    CHECK(requested("3", "vulkan:0,1,2", &st) == 3 && st == YOLO_OK);
    CHECK(requested(NULL, "0,1,2,3", &st) == 4 && st == YOLO_OK);
    requested("3", "vulkan:0,1", &st);
    CHECK_MSG(st == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "world=3") &&
                  strstr(yolo_last_error(), "names 2 devices"),
              "world/device mismatch: %s", yolo_last_error());
    requested("0", NULL, &st);
    CHECK_MSG(st == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "world"), "world=0: %s", yolo_last_error());

    check_device("vulkan:0,1", 0, 2, "vulkan:0");
    check_device("vulkan:0,1", 1, 2, "vulkan:1");
    check_device("vulkan:3,5", 1, 2, "vulkan:5");
    check_device("2,3", 0, 2, "vulkan:2");
    check_device("cpu", 1, 2, "cpu");
    check_device("vulkan:1", 0, 1, "vulkan:1");
    char out[64];
    st = yolo_dist_rank_device("vulkan:0,1", 2, 3, out, sizeof out);
    CHECK_MSG(st == YOLO_ERR_CONFIG && strstr(yolo_last_error(), "3 ranks on this machine but 2 devices"),
              "more ranks than devices: %s", yolo_last_error());

    clear_env();
    yolo_dist_env e = yolo_dist_env_detect();
    CHECK(e.world == 1 && e.rank == 0 && e.launcher == NULL);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1), setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1), setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
    e = yolo_dist_env_detect();
    CHECK(e.world == 4 && e.rank == 3 && e.local_rank == 1 && e.local_world == 2 && !strcmp(e.launcher, "Open MPI"));
    clear_env();
    setenv("PMI_SIZE", "2", 1), setenv("PMI_RANK", "1", 1), setenv("MPI_LOCALRANKID", "1", 1);
    e = yolo_dist_env_detect();
    CHECK(e.world == 2 && e.rank == 1 && e.local_rank == 1 && !strcmp(e.launcher, "MPICH"));
    clear_env();
    setenv("SLURM_PROCID", "5", 1), setenv("SLURM_NTASKS", "8", 1), setenv("SLURM_LOCALID", "1", 1);
    e = yolo_dist_env_detect();
    CHECK(e.world == 8 && e.rank == 5 && e.local_rank == 1 && !strcmp(e.launcher, "Slurm"));
    clear_env();
    setenv("SLURM_PROCID", "0", 1), setenv("SLURM_NTASKS", "1", 1); /* a one-task allocation is not DDP */
    e = yolo_dist_env_detect();
    CHECK(e.world == 1 && e.launcher == NULL);
    clear_env();

    /* alone, every collective is the identity and needs no MPI */
    yolo_dist *d = NULL;
    CHECK(yolo_dist_open(10, &d) == YOLO_OK && yolo_dist_world(d) == 1 && yolo_dist_rank(d) == 0);
    double v[2] = {1.5, -2};
    CHECK(yolo_dist_allreduce_f64(d, v, 2, YOLO_DIST_SUM, "alone") == YOLO_OK && v[0] == 1.5 && v[1] == -2);
    CHECK(yolo_dist_agree(d, YOLO_OK, "alone") == YOLO_OK);
    CHECK(yolo_dist_open(0, &d) == YOLO_ERR_CONFIG);
    yolo_dist_close(d);
    return test_result("test_dist_launch");
}

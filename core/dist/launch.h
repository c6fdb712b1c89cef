/* launch.h — `yolo train device=vulkan:0,1` / `device=cpu world=2`: the
 * command re-launches itself under mpirun with one rank per device (or
 * `world` ranks), and a rank picks its own device from the list. */
#ifndef YOLO_DIST_LAUNCH_H
#define YOLO_DIST_LAUNCH_H

#include <stddef.h>

#include "yolo/config.h"

/* The ranks the configuration asks for: `world`, or the number of devices
 * in a device list (they must agree when both are given). */
yolo_status yolo_dist_requested_world(const yolo_config *cfg, int *world);

/* Whether `device` is one device yolo_backend_create opens (cpu, vulkan,
 * vulkan:N, N) or a list of GPU indices, one per rank (0,1 or vulkan:0,1);
 * the error names the value and the entry that is wrong. */
yolo_status yolo_dist_check_device(const char *device);

/* The same from a run's recorded `world` and `device` (device may be NULL). */
int yolo_dist_world_of(int world, const char *device);

/* Runs argv again under mpirun (Open MPI: adding --allow-run-as-root only
 * as root) or mpiexec (MPICH) with np ranks and waits for it. Returns rank
 * 0's failing exit code (else another rank's, else the launcher's; 128 +
 * signal if it was killed), with its reason in why ("rank 1 of 2: ..."),
 * or -1 with yolo_last_error() set when it could not be started. Open MPI is told not to kill the other ranks when one
 * dies (they reach their deadline, name it and MPI_Abort the job) and to
 * give them 3 s after a SIGTERM (Ctrl-C: they stop at the same batch and
 * rank 0 saves last.ckpt). */
int yolo_dist_relaunch(int argc, char **argv, int np, char *why, size_t why_size);

/* The re-launch passes the ranks a file (in this environment variable)
 * where a rank that ends with a non-zero exit code records it and why (one
 * line), since mpirun, told not to abort the others on a non-zero status,
 * returns 0; the launching process repeats the reason as its last line. */
#define YOLO_DIST_STATUS_ENV "YOLO_DIST_STATUS_FILE"
void yolo_dist_record_exit(int rank, int code, const char *why);

/* This rank's device: entry local_rank of a list ("vulkan:0,1" -> "vulkan:1"
 * for local rank 1; "vulkan:0,1" -> "vulkan:0"/"vulkan:1"; "0,1" means
 * vulkan), the device itself otherwise. */
yolo_status yolo_dist_rank_device(const char *device, int local_rank, int local_world, char *out, size_t size);

#endif

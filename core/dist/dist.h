/* dist.h — the ranks of a distributed run and their collectives over MPI.
 *
 * Under a launcher (mpirun/mpiexec of Open MPI or MPICH, or srun; read from
 * the environment) yolo_dist_open initialises MPI; otherwise the run is a
 * world of one and every collective is a no-op, so callers never branch.
 *
 * Every collective and barrier goes through one wait with a deadline
 * (dist_timeout=): a rank that dies or stalls makes the others fail with an
 * error naming the collective and the ranks that did not arrive, never hang.
 * For that each rank tells its peers, with a small message, which collective
 * (a sequence number and a name) it has reached; a timeout reports the ranks
 * still behind and where they were last seen. After a failure the
 * communicator is broken: later collectives fail at once and MPI is not
 * finalized (that would wait for the dead rank).
 *
 * MPI is called only from the thread that opened it. */
#ifndef YOLO_DIST_DIST_H
#define YOLO_DIST_DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yolo/error.h"

/* What the environment says about this process. */
typedef struct yolo_dist_env {
    int world, rank;             /* 1 and 0 when not launched by an MPI launcher */
    int local_rank, local_world; /* ranks on this machine */
    const char *launcher;        /* "Open MPI", "MPICH", "Slurm" or NULL */
} yolo_dist_env;

yolo_dist_env yolo_dist_env_detect(void);

typedef struct yolo_dist yolo_dist;

/* Opens the process's communicator (MPI_Init on the first open, reference
 * counted); timeout_s is the deadline of every collective. */
yolo_status yolo_dist_open(double timeout_s, yolo_dist **out);
/* Finalizes MPI with the last close unless a collective failed. */
void yolo_dist_close(yolo_dist *d);

int yolo_dist_rank(const yolo_dist *d);  /* 0 for NULL */
int yolo_dist_world(const yolo_dist *d); /* 1 for NULL */
int yolo_dist_local_rank(const yolo_dist *d);
int yolo_dist_local_world(const yolo_dist *d);

typedef enum yolo_dist_op { YOLO_DIST_SUM = 0, YOLO_DIST_MAX } yolo_dist_op;

/* In-place reductions over all ranks; `what` names the collective in errors. */
yolo_status yolo_dist_allreduce_f32(yolo_dist *d, float *data, int64_t count, yolo_dist_op op, const char *what);
yolo_status yolo_dist_allreduce_f64(yolo_dist *d, double *data, int64_t count, yolo_dist_op op, const char *what);
yolo_status yolo_dist_allreduce_i64(yolo_dist *d, int64_t *data, int64_t count, yolo_dist_op op, const char *what);

/* Non-blocking sums, for gradient buckets: start any number (the buffers
 * must stay untouched), then wait for all of them under one deadline. */
yolo_status yolo_dist_allreduce_f32_start(yolo_dist *d, float *data, int64_t count, const char *what);
yolo_status yolo_dist_wait_all(yolo_dist *d);

/* Rank 0's bytes to every rank. */
yolo_status yolo_dist_broadcast(yolo_dist *d, void *data, int64_t bytes, const char *what);
/* Rank 0's (*data, *size) to every rank; other ranks receive a malloc'd
 * copy (free it) in *data. */
yolo_status yolo_dist_broadcast_blob(yolo_dist *d, void **data, size_t *size, const char *what);
/* Every rank's bytes to rank 0: there blobs[r] (malloc'd, rank 0's own
 * included) and sizes[r] for r < world; NULL elsewhere. Free with
 * yolo_dist_free_blobs. */
yolo_status yolo_dist_gather_blobs(yolo_dist *d, const void *data, size_t size, void ***blobs, size_t **sizes,
                                   const char *what);
void yolo_dist_free_blobs(const yolo_dist *d, void **blobs, size_t *sizes);

yolo_status yolo_dist_barrier(yolo_dist *d, const char *what);

/* Makes a local outcome collective: every rank passes its status; all get
 * YOLO_OK only if every rank succeeded. A rank that failed keeps its own
 * error; the others get one naming the rank(s) that failed. */
yolo_status yolo_dist_agree(yolo_dist *d, yolo_status local, const char *what);

/* Whether a collective has failed (the communicator is unusable). */
bool yolo_dist_broken(const yolo_dist *d);

/* For the program's exit only (the CLI, after printing its error): when a
 * collective of this process failed, ends the whole MPI job with `code`
 * (MPI_Abort) so the launcher does not wait on the ranks left behind;
 * otherwise returns. */
void yolo_dist_end_job_if_broken(int code);

#endif

/* The communicator and its deadline-guarded collectives (dist.h). */
#define _POSIX_C_SOURCE 200809L
#include "dist/dist.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOTICE_SLOTS 8     /* notices in flight per peer; a slower peer just misses some */
#define MAX_PENDING 256    /* non-blocking requests between start and wait_all */
#define CHUNK (1 << 30)    /* elements per MPI call (counts are int) */
#define TAG_NOTICE 1
#define TAG_PING 2         /* "are you alive?", answered from any wait */
#define TAG_PONG 3
#define PING_SECONDS 1.0   /* how long a timed-out rank waits for the answers */

/* "I have reached collective #seq (what)", sent to every peer on entry. */
typedef struct notice {
    int64_t seq;
    char what[56];
} notice;

struct yolo_dist {
    int rank, world, local_rank, local_world;
    double timeout;
    bool broken;
    int refs;
    MPI_Comm comm, notice_comm;
    int64_t seq;          /* collectives entered */
    char what[64];        /* the current one */
    notice *seen;         /* [world]: the last notice of each peer */
    notice *recv_buf;     /* [world] */
    MPI_Request *recv_req;
    notice *send_buf;     /* [world * NOTICE_SLOTS] */
    MPI_Request *send_req;
    int64_t *ping_buf;    /* [world]: a ping received from each peer */
    MPI_Request *ping_req;
    MPI_Request pending[MAX_PENDING];
    int n_pending;
};

static yolo_dist *the_dist; /* MPI is initialised once per process */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    return end && end != v && x >= 0 && x < INT_MAX ? (int)x : fallback;
}

yolo_dist_env yolo_dist_env_detect(void) {
    yolo_dist_env e = {1, 0, 0, 1, NULL};
    if (getenv("OMPI_COMM_WORLD_SIZE")) {
        e.launcher = "Open MPI";
        e.world = env_int("OMPI_COMM_WORLD_SIZE", 1);
        e.rank = env_int("OMPI_COMM_WORLD_RANK", 0);
        e.local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
        e.local_world = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", e.world);
    } else if (getenv("PMI_SIZE")) {
        e.launcher = "MPICH";
        e.world = env_int("PMI_SIZE", 1);
        e.rank = env_int("PMI_RANK", 0);
        e.local_rank = env_int("MPI_LOCALRANKID", 0);
        e.local_world = env_int("MPI_LOCALNRANKS", e.world);
    } else if (getenv("SLURM_PROCID") && env_int("SLURM_NTASKS", 1) > 1) {
        e.launcher = "Slurm";
        e.world = env_int("SLURM_NTASKS", 1);
        e.rank = env_int("SLURM_PROCID", 0);
        e.local_rank = env_int("SLURM_LOCALID", 0);
        e.local_world = env_int("SLURM_NTASKS_PER_NODE", e.world);
    }
    if (e.world < 1) e.world = 1;
    if (e.local_world < 1) e.local_world = 1;
    return e;
}

/* ---- notices -------------------------------------------------------------- */

static void post_recv(yolo_dist *d, int peer) {
    MPI_Irecv(&d->recv_buf[peer], (int)sizeof(notice), MPI_BYTE, peer, TAG_NOTICE, d->notice_comm, &d->recv_req[peer]);
}

static void post_ping_recv(yolo_dist *d, int peer) {
    MPI_Irecv(&d->ping_buf[peer], 1, MPI_INT64_T, peer, TAG_PING, d->notice_comm, &d->ping_req[peer]);
}

/* Takes in the notices that have arrived and answers pings. */
static void drain_notices(yolo_dist *d) {
    for (int p = 0; p < d->world; p++) {
        if (p == d->rank) continue;
        int pinged = 0;
        if (d->ping_req[p] != MPI_REQUEST_NULL && MPI_Test(&d->ping_req[p], &pinged, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
            pinged) {
            static int64_t pong = 1;
            MPI_Request r;
            if (MPI_Isend(&pong, 1, MPI_INT64_T, p, TAG_PONG, d->notice_comm, &r) == MPI_SUCCESS) MPI_Request_free(&r);
            post_ping_recv(d, p);
        }
        for (;;) {
            int done = 0;
            if (d->recv_req[p] == MPI_REQUEST_NULL || MPI_Test(&d->recv_req[p], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
                !done)
                break;
            if (d->recv_buf[p].seq > d->seen[p].seq) d->seen[p] = d->recv_buf[p];
            post_recv(d, p);
        }
    }
}

/* Entering a collective: number it and tell the peers. */
static void enter(yolo_dist *d, const char *what) {
    d->seq++;
    snprintf(d->what, sizeof d->what, "%s", what);
    for (int p = 0; p < d->world; p++) {
        if (p == d->rank) continue;
        for (int s = 0; s < NOTICE_SLOTS; s++) {
            int k = p * NOTICE_SLOTS + s, done = 1;
            if (d->send_req[k] != MPI_REQUEST_NULL) MPI_Test(&d->send_req[k], &done, MPI_STATUS_IGNORE);
            if (!done) continue;
            d->send_buf[k].seq = d->seq;
            snprintf(d->send_buf[k].what, sizeof d->send_buf[k].what, "%s", what);
            MPI_Isend(&d->send_buf[k], (int)sizeof(notice), MPI_BYTE, p, TAG_NOTICE, d->notice_comm, &d->send_req[k]);
            break;
        }
    }
}

static yolo_status fail(yolo_dist *d, const char *fmt, const char *detail) {
    d->broken = true;
    return yolo_error(YOLO_ERR_DIST, "dist: %s #%lld on rank %d of %d %s%s", d->what, (long long)d->seq, d->rank,
                      d->world, fmt, detail);
}

/* Pings every peer and waits PING_SECONDS for the answers (a peer answers
 * from any collective it waits in); alive[p] = 1 for those that answered. */
static void ping_peers(yolo_dist *d, char *alive) {
    int64_t ping = 1, *pong = calloc((size_t)d->world, sizeof *pong);
    MPI_Request *req = malloc(sizeof *req * (size_t)d->world);
    if (!pong || !req) {
        memset(alive, 1, (size_t)d->world);
        free(pong), free(req);
        return;
    }
    for (int p = 0; p < d->world; p++) {
        alive[p] = p == d->rank;
        req[p] = MPI_REQUEST_NULL;
        if (p == d->rank) continue;
        MPI_Request s;
        if (MPI_Isend(&ping, 1, MPI_INT64_T, p, TAG_PING, d->notice_comm, &s) == MPI_SUCCESS) MPI_Request_free(&s);
        MPI_Irecv(&pong[p], 1, MPI_INT64_T, p, TAG_PONG, d->notice_comm, &req[p]);
    }
    double until = now() + (d->timeout < PING_SECONDS ? d->timeout : PING_SECONDS);
    for (int waiting = d->world - 1; waiting > 0 && now() < until;) {
        drain_notices(d);
        for (int p = 0; p < d->world; p++) {
            int done = 0;
            if (alive[p] || req[p] == MPI_REQUEST_NULL) continue;
            if (MPI_Test(&req[p], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) alive[p] = 1, waiting--;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    /* the pings' buffers must outlive unanswered receives: the communicator is broken from here on, so keep them */
    free(req);
}

/* The ranks that have not reached the current collective or do not answer, for the error. */
static yolo_status timeout_error(yolo_dist *d) {
    drain_notices(d);
    char *alive = calloc((size_t)d->world, 1);
    if (alive) ping_peers(d, alive);
    char list[1024] = "";
    size_t len = 0;
    int behind = 0;
    for (int p = 0; p < d->world && len + 128 < sizeof list; p++) {
        bool silent = alive && !alive[p];
        if (p == d->rank || (d->seen[p].seq >= d->seq && !silent)) continue;
        if (d->seen[p].seq >= d->seq) { /* arrived, then stopped answering: died inside the collective */
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d (arrived, then stopped answering)",
                                    behind ? ", " : "", p);
            behind++;
            continue;
        }
        if (d->seen[p].seq > 0)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d (last seen at %s #%lld)", behind ? ", " : "",
                                    p, d->seen[p].what, (long long)d->seen[p].seq);
        else
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d (never seen)", behind ? ", " : "", p);
        behind++;
    }
    free(alive);
    char detail[1200];
    if (behind)
        snprintf(detail, sizeof detail, ": rank%s %s did not arrive (dead or stalled; dist_timeout=%g)",
                 behind > 1 ? "s" : "", list, d->timeout);
    else
        snprintf(detail, sizeof detail,
                 ": every rank arrived but the collective did not complete (a rank died inside it; dist_timeout=%g)",
                 d->timeout);
    char head[64];
    snprintf(head, sizeof head, "timed out after %g s", d->timeout);
    return fail(d, head, detail);
}

/* Waits for n requests until the deadline, keeping notices flowing. */
static yolo_status wait_requests(yolo_dist *d, int n, MPI_Request *reqs) {
    double deadline = now() + d->timeout;
    long sleep_ns = 20000;
    MPI_Status statuses[MAX_PENDING]; /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's size annotation */
    if (n > MAX_PENDING) n = MAX_PENDING;
    for (int spins = 0;; spins++) {
        int done = 0;
        int rc = MPI_Testall(n, reqs, &done, statuses);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING + 2] = ": ";
            int len = 0;
            MPI_Error_string(rc, msg + 2, &len);
            return fail(d, "failed", msg);
        }
        if (done) return YOLO_OK;
        drain_notices(d);
        if (now() > deadline) return timeout_error(d);
        if (spins > 200) { /* a short spin for fast collectives, then sleep up to 2 ms between polls */
            struct timespec ts = {0, sleep_ns};
            nanosleep(&ts, NULL);
            if (sleep_ns < 2000000) sleep_ns += sleep_ns / 4;
        }
    }
}

static yolo_status check_usable(yolo_dist *d, const char *what) {
    if (d->broken)
        return yolo_error(YOLO_ERR_DIST, "dist: %s on rank %d: an earlier collective failed; the run cannot continue",
                          what, d->rank);
    if (d->n_pending)
        return yolo_error(YOLO_ERR_DIST, "dist: %s on rank %d while %d non-blocking reductions are pending", what,
                          d->rank, d->n_pending);
    return YOLO_OK;
}

/* ---- open / close --------------------------------------------------------- */

static void finalize_at_exit(void) {
    int done = 0;
    MPI_Finalized(&done);
    if (the_dist && !the_dist->broken && !done) MPI_Finalize();
}

static yolo_status init_mpi(yolo_dist *d, const yolo_dist_env *env) {
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return yolo_error(YOLO_ERR_DIST, "dist: MPI_Init failed (launched by %s as rank %d of %d)", env->launcher,
                          env->rank, env->world);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &d->comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &d->notice_comm);
    MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(d->notice_comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(d->comm, &d->rank);
    MPI_Comm_size(d->comm, &d->world);
    MPI_Comm local;
    if (MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
        MPI_Comm_rank(local, &d->local_rank);
        MPI_Comm_size(local, &d->local_world);
        MPI_Comm_free(&local);
    }
    d->seen = calloc((size_t)d->world, sizeof *d->seen);
    d->recv_buf = calloc((size_t)d->world, sizeof *d->recv_buf);
    d->recv_req = malloc(sizeof *d->recv_req * (size_t)d->world);
    d->send_buf = calloc((size_t)d->world * NOTICE_SLOTS, sizeof *d->send_buf);
    d->send_req = malloc(sizeof *d->send_req * (size_t)d->world * NOTICE_SLOTS);
    d->ping_buf = calloc((size_t)d->world, sizeof *d->ping_buf);
    d->ping_req = malloc(sizeof *d->ping_req * (size_t)d->world);
    if (!d->seen || !d->recv_buf || !d->recv_req || !d->send_buf || !d->send_req || !d->ping_buf || !d->ping_req)
        return yolo_error(YOLO_ERR_NOMEM, "dist: out of memory");
    for (int i = 0; i < d->world * NOTICE_SLOTS; i++) d->send_req[i] = MPI_REQUEST_NULL;
    for (int p = 0; p < d->world; p++) {
        d->recv_req[p] = d->ping_req[p] = MPI_REQUEST_NULL;
        if (p != d->rank) post_recv(d, p), post_ping_recv(d, p);
    }
    if (!inited) atexit(finalize_at_exit);
    return YOLO_OK;
}

yolo_status yolo_dist_open(double timeout_s, yolo_dist **out) {
    *out = NULL;
    if (!(timeout_s > 0)) return yolo_error(YOLO_ERR_CONFIG, "dist_timeout=%g: must be > 0 seconds", timeout_s);
    if (the_dist) {
        the_dist->refs++;
        the_dist->timeout = timeout_s;
        *out = the_dist;
        return YOLO_OK;
    }
    yolo_dist_env env = yolo_dist_env_detect();
    yolo_dist *d = calloc(1, sizeof *d);
    if (!d) return yolo_error(YOLO_ERR_NOMEM, "dist: out of memory");
    *d = (yolo_dist){.rank = 0, .world = 1, .local_rank = 0, .local_world = 1, .timeout = timeout_s, .refs = 1};
    if (env.world > 1) {
        yolo_status st = init_mpi(d, &env);
        if (st) {
            free(d->seen), free(d->recv_buf), free(d->recv_req), free(d->send_buf), free(d->send_req);
            free(d->ping_buf), free(d->ping_req);
            free(d);
            return st;
        }
    }
    the_dist = d;
    *out = d;
    return YOLO_OK;
}

void yolo_dist_close(yolo_dist *d) {
    if (d && d->refs > 0) d->refs--; /* MPI stays up until exit: it cannot be initialised twice */
}

int yolo_dist_rank(const yolo_dist *d) { return d ? d->rank : 0; }
int yolo_dist_world(const yolo_dist *d) { return d ? d->world : 1; }
int yolo_dist_local_rank(const yolo_dist *d) { return d ? d->local_rank : 0; }
int yolo_dist_local_world(const yolo_dist *d) { return d ? d->local_world : 1; }
bool yolo_dist_broken(const yolo_dist *d) { return d && d->broken; }

void yolo_dist_end_job_if_broken(int code) {
    if (the_dist && the_dist->broken) MPI_Abort(MPI_COMM_WORLD, code);
}

/* ---- collectives ---------------------------------------------------------- */

static yolo_status start_allreduce(yolo_dist *d, void *data, int64_t count, MPI_Datatype type, size_t elem,
                                   yolo_dist_op op) {
    for (int64_t at = 0; at < count; at += CHUNK) {
        if (d->n_pending == MAX_PENDING) return fail(d, "failed", ": too many reductions in flight");
        int n = (int)(count - at < CHUNK ? count - at : CHUNK);
        int rc = MPI_Iallreduce(MPI_IN_PLACE, (char *)data + (size_t)at * elem, n, type, op == YOLO_DIST_MAX ? MPI_MAX : MPI_SUM,
                                d->comm, &d->pending[d->n_pending]);
        if (rc != MPI_SUCCESS) return fail(d, "failed", ": MPI_Iallreduce refused");
        d->n_pending++;
    }
    return YOLO_OK;
}

static yolo_status allreduce(yolo_dist *d, void *data, int64_t count, MPI_Datatype type, size_t elem, yolo_dist_op op,
                             const char *what) {
    if (!d || d->world == 1 || count <= 0) return YOLO_OK;
    yolo_status st = check_usable(d, what);
    if (st) return st;
    enter(d, what);
    st = start_allreduce(d, data, count, type, elem, op);
    return st ? st : yolo_dist_wait_all(d);
}

yolo_status yolo_dist_allreduce_f32(yolo_dist *d, float *data, int64_t count, yolo_dist_op op, const char *what) {
    return allreduce(d, data, count, MPI_FLOAT, sizeof(float), op, what);
}
yolo_status yolo_dist_allreduce_f64(yolo_dist *d, double *data, int64_t count, yolo_dist_op op, const char *what) {
    return allreduce(d, data, count, MPI_DOUBLE, sizeof(double), op, what);
}
yolo_status yolo_dist_allreduce_i64(yolo_dist *d, int64_t *data, int64_t count, yolo_dist_op op, const char *what) {
    return allreduce(d, data, count, MPI_INT64_T, sizeof(int64_t), op, what);
}

yolo_status yolo_dist_allreduce_f32_start(yolo_dist *d, float *data, int64_t count, const char *what) {
    if (!d || d->world == 1 || count <= 0) return YOLO_OK;
    if (d->broken) return check_usable(d, what);
    if (d->n_pending == 0) enter(d, what); /* a group of buckets is one collective */
    return start_allreduce(d, data, count, MPI_FLOAT, sizeof(float), YOLO_DIST_SUM);
}

yolo_status yolo_dist_wait_all(yolo_dist *d) {
    if (!d || d->world == 1 || d->n_pending == 0) return YOLO_OK;
    yolo_status st = wait_requests(d, d->n_pending, d->pending);
    d->n_pending = 0;
    return st;
}

yolo_status yolo_dist_broadcast(yolo_dist *d, void *data, int64_t bytes, const char *what) {
    if (!d || d->world == 1 || bytes <= 0) return YOLO_OK;
    yolo_status st = check_usable(d, what);
    if (st) return st;
    enter(d, what);
    for (int64_t at = 0; at < bytes; at += CHUNK) {
        if (d->n_pending == MAX_PENDING) {
            if ((st = yolo_dist_wait_all(d))) return st;
        }
        int n = (int)(bytes - at < CHUNK ? bytes - at : CHUNK);
        if (MPI_Ibcast((char *)data + at, n, MPI_BYTE, 0, d->comm, &d->pending[d->n_pending]) != MPI_SUCCESS)
            return fail(d, "failed", ": MPI_Ibcast refused");
        d->n_pending++;
    }
    return yolo_dist_wait_all(d);
}

yolo_status yolo_dist_broadcast_blob(yolo_dist *d, void **data, size_t *size, const char *what) {
    if (!d || d->world == 1) return YOLO_OK;
    uint64_t n = d->rank == 0 ? (uint64_t)*size : 0;
    yolo_status st = yolo_dist_broadcast(d, &n, sizeof n, what);
    if (st) return st;
    if (d->rank != 0) {
        *data = malloc(n ? n : 1);
        *size = (size_t)n;
        if (!*data) return yolo_error(YOLO_ERR_NOMEM, "dist: %s: out of memory for %llu bytes", what, (unsigned long long)n);
    }
    st = yolo_dist_broadcast(d, *data, (int64_t)n, what);
    if (st && d->rank != 0) {
        free(*data);
        *data = NULL;
    }
    return st;
}

yolo_status yolo_dist_gather_blobs(yolo_dist *d, const void *data, size_t size, void ***blobs, size_t **sizes,
                                   const char *what) {
    *blobs = NULL;
    *sizes = NULL;
    int world = yolo_dist_world(d), root = yolo_dist_rank(d) == 0;
    if (size > INT_MAX) return yolo_error(YOLO_ERR_ARG, "dist: %s: %zu bytes is over the 2 GiB a gather takes", what, size);
    if (root) {
        *blobs = calloc((size_t)world, sizeof **blobs);
        *sizes = calloc((size_t)world, sizeof **sizes);
        if (!*blobs || !*sizes) {
            free(*blobs), free(*sizes);
            *blobs = NULL, *sizes = NULL;
            return yolo_error(YOLO_ERR_NOMEM, "dist: %s: out of memory", what);
        }
    }
    yolo_status st = YOLO_OK;
    if (world == 1) {
        (*blobs)[0] = malloc(size ? size : 1);
        if (!(*blobs)[0]) st = yolo_error(YOLO_ERR_NOMEM, "dist: %s: out of memory", what);
        else memcpy((*blobs)[0], data, size), (*sizes)[0] = size;
        if (st) yolo_dist_free_blobs(d, *blobs, *sizes), *blobs = NULL, *sizes = NULL;
        return st;
    }
    if ((st = check_usable(d, what))) return st;
    enter(d, what);
    int mine = (int)size, *counts = root ? calloc((size_t)world, sizeof(int)) : NULL,
        *displs = root ? calloc((size_t)world, sizeof(int)) : NULL;
    char *all = NULL;
    if (root && (!counts || !displs)) st = yolo_error(YOLO_ERR_NOMEM, "dist: %s: out of memory", what);
    if (!st) {
        if (MPI_Igather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, d->comm, &d->pending[0]) != MPI_SUCCESS)
            st = fail(d, "failed", ": MPI_Igather refused");
        else d->n_pending = 1, st = yolo_dist_wait_all(d);
    }
    int64_t total = 0;
    for (int r = 0; root && !st && r < world; r++) displs[r] = (int)total, total += counts[r];
    if (!st && total > INT_MAX) st = fail(d, "failed", ": the blobs add up to more than 2 GiB");
    if (!st && root && !(all = malloc(total ? (size_t)total : 1))) st = yolo_error(YOLO_ERR_NOMEM, "dist: %s: out of memory", what);
    if (!st) {
        if (MPI_Igatherv(data, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, d->comm, &d->pending[0]) != MPI_SUCCESS)
            st = fail(d, "failed", ": MPI_Igatherv refused");
        else d->n_pending = 1, st = yolo_dist_wait_all(d);
    }
    for (int r = 0; root && !st && r < world; r++) {
        (*blobs)[r] = malloc(counts[r] ? (size_t)counts[r] : 1);
        if (!(*blobs)[r]) st = yolo_error(YOLO_ERR_NOMEM, "dist: %s: out of memory", what);
        else memcpy((*blobs)[r], all + displs[r], (size_t)counts[r]), (*sizes)[r] = (size_t)counts[r];
    }
    free(all), free(counts), free(displs);
    if (st && root) yolo_dist_free_blobs(d, *blobs, *sizes), *blobs = NULL, *sizes = NULL;
    return st;
}

void yolo_dist_free_blobs(const yolo_dist *d, void **blobs, size_t *sizes) {
    if (blobs)
        for (int r = 0; r < yolo_dist_world(d); r++) free(blobs[r]);
    free(blobs);
    free(sizes);
}

yolo_status yolo_dist_barrier(yolo_dist *d, const char *what) {
    if (!d || d->world == 1) return YOLO_OK;
    yolo_status st = check_usable(d, what);
    if (st) return st;
    enter(d, what);
    if (MPI_Ibarrier(d->comm, &d->pending[0]) != MPI_SUCCESS) return fail(d, "failed", ": MPI_Ibarrier refused");
    d->n_pending = 1;
    return yolo_dist_wait_all(d);
}

yolo_status yolo_dist_agree(yolo_dist *d, yolo_status local, const char *what) {
    if (!d || d->world == 1) return local;
    int64_t *failed = calloc((size_t)d->world, sizeof *failed);
    if (!failed) return local ? local : yolo_error(YOLO_ERR_NOMEM, "dist: %s: out of memory", what);
    failed[d->rank] = local != YOLO_OK;
    yolo_status st = yolo_dist_allreduce_i64(d, failed, d->world, YOLO_DIST_MAX, what);
    if (local || st) {
        free(failed);
        return local ? local : st;
    }
    char list[512] = "";
    size_t len = 0;
    int n = 0;
    for (int r = 0; r < d->world && len + 16 < sizeof list; r++)
        if (failed[r]) len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", n++ ? ", " : "", r);
    free(failed);
    if (!n) return YOLO_OK;
    return yolo_error(YOLO_ERR_DIST, "%s failed on rank%s %s (its error is printed by that rank)", what, n > 1 ? "s" : "",
                      list);
}

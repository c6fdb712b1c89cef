/* Internal op codes and the exact contract of every kernel.
 *
 * Every backend implements each op below. Unless stated, tensors are f32,
 * contiguous, row-major; `src[i]` are the node's inputs and `out` the node
 * itself. iparams/fparams hold the op's constants. Shapes have been checked
 * by the builder (core/graph/builders.c); kernels may trust them. The
 * builders give every src of ADD/SUB/MUL/SUM_TO/BROADCAST_TO the same ndim
 * as out (smaller operands are reshaped with leading 1s), so broadcasting
 * kernels only compare dimension by dimension.
 *
 * YOLO_OP_LIST(X) calls X(name, differentiable) once per op, its contract in
 * the comment beside it. The list makes the enum yolo_op and drives
 * yolo_op_name and yolo_op_differentiable. */
#ifndef YOLO_OPS_H
#define YOLO_OPS_H

#include <stdbool.h>

#include "graph/node.h"

#define YOLO_OP_LIST(X) \
    X(NONE, false)            /* inputs and persistent leaves: no kernel */ \
    X(VIEW, true)             /* shares storage of view_of at view_offset: no kernel */ \
    /* conv: i = {stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups} */ \
    X(CONV2D, true)           /* src x[N,C,H,W], w[O,C/g,kh,kw], (bias[O]) -> [N,O,Ho,Wo] */ \
    X(CONV2D_BWD_DATA, false) /* src dy[N,O,Ho,Wo], w -> dx[N,C,H,W] (shape of out); also ConvTranspose forward */ \
    X(CONV2D_BWD_WEIGHT, false) /* src x[N,C,H,W], dy[N,O,Ho,Wo] -> dw[O,C/g,kh,kw] (shape of out) */ \
    X(CONV_TRANSPOSE2D, true) /* src x[N,C,H,W], w[C,O/g,kh,kw], (bias[O]) -> [N,O,Ho,Wo] = CONV2D_BWD_DATA(x, w) (+ bias) */ \
    /* batch norm: statistics per channel over N,H,W of x[N,C,H,W] (or [N,C]) */ \
    X(BN_STATS, true)         /* src x, (running_mean[C], running_var[C]) -> [2,C]: row0 mean, row1 biased var. \
                                 i0 = update running stats (1/0); f0 = momentum: running = (1-m)*running + m*stat, \
                                 running_var takes the unbiased var (count/(count-1)) */ \
    X(BN_APPLY, true)         /* src x, mean[C], var[C], gamma[C], beta[C] -> gamma*(x-mean)/sqrt(var+eps)+beta; f0 = eps */ \
    X(BN_APPLY_BWD_PARAMS, false) /* src x, mean, var, gamma, dy -> [4,C]: dgamma, dbeta, dmean, dvar (f0 = eps) */ \
    X(BN_APPLY_BWD_DATA, false)   /* src var, gamma, dy -> dx = dy*gamma/sqrt(var+eps) (f0 = eps) */ \
    X(SYNC_BN_STATS, true)    /* src local stats[2,C] (BN_STATS rows: mean, biased var), running_mean[C], running_var[C] \
                                 -> [2,C] statistics over all ranks of the graph's collective (collective.h), \
                                 each rank holding i0 values per channel: mean = avg of means, var = \
                                 avg(var + mean^2) - mean^2. f0 = momentum: the running stats updated as \
                                 BN_STATS does (unbiased with the global count), i1 = update (1/0) */ \
    X(SYNC_BN_STATS_BWD, false) /* src local[2,C], global[2,C], dglobal[2,C] -> dlocal: G = dglobal summed over \
                                 the ranks, dmean_r = (G_mean + 2 G_var (mean_r - mean)) / W, dvar_r = G_var / W */ \
    X(BN_STATS_BWD, false)    /* src x, stats[2,C], dstats[2,C] -> dx = dmean/M + dvar*2*(x-mean)/M, M = N*H*W */ \
    X(BN_BWD, false)          /* src x, stats[2,C], gamma[C], dy -> 1-D [numel(x) + 4C]: first dx (x's layout), then \
                                 the [4,C] rows of BN_APPLY_BWD_PARAMS(x, mean, var, gamma, dy) (dgamma, dbeta, \
                                 dmean, dvar; mean, var = rows of stats); dx = BN_APPLY_BWD_DATA + BN_STATS_BWD \
                                 with those dmean, dvar: dy*gamma/sqrt(var+eps) + (dmean/M + dvar*2/M*(x-mean)). \
                                 f0 = eps. Emitted by autograd for training batch norm, BN_STATS(x) -> BN_APPLY(x, \
                                 its rows, ...) with stats read by nothing else; one op, so each channel's x and dy \
                                 are read from memory once for the sums and again (from cache) for dx. A fifth src \
                                 beta[C]: the planner folded in the BN_SILU_BWD that made dy (yolo_graph_plan, \
                                 YOLO_BACKEND_CAP_FOLD_SILU_BWD): dy is SiLU's output gradient, and the op's dy is \
                                 BN_SILU_BWD(x, mean, var, gamma, beta, dy) (same float ops), kept in dx's slot */ \
    /* batch norm + SiLU, fused by the planner (yolo_graph_plan) where a BN_APPLY node's only readers are one SILU \
       and that SILU's SILU_BWD nodes; no gradient rule (the rewrite runs after backward) */ \
    X(BN_SILU, false)         /* src x, mean[C], var[C], gamma[C], beta[C] -> silu(z), z = BN_APPLY's value (same float \
                                 ops: (x-mean)*(gamma/sqrt(var+eps))+beta); f0 = eps */ \
    X(BN_SILU_BWD, false)     /* src x, mean, var, gamma, beta, dy -> SILU_BWD(z, dy) with z recomputed as in BN_SILU; \
                                 f0 = eps */ \
    /* elementwise */ \
    X(SILU, true)             /* x*sigmoid(x) */ \
    X(SILU_BWD, false)        /* src x, dy -> dy*s*(1+x*(1-s)), s = sigmoid(x) */ \
    X(RELU, true)             /* max(x,0) */ \
    X(RELU_BWD, false)        /* src x, dy -> x > 0 ? dy : 0 */ \
    X(SIGMOID, true)          /* 1/(1+exp(-x)) */ \
    X(SIGMOID_BWD, false)     /* src y (the sigmoid output), dy -> dy*y*(1-y) */ \
    X(HARDSWISH, true)        /* x*min(max(x+3,0),6)/6 */ \
    X(HARDSWISH_BWD, false)   /* src x, dy -> x < -3 ? 0 : x <= 3 ? dy*(x/3+0.5) : dy (PyTorch's) */ \
    X(ADD, true)              /* a + b, numpy broadcasting of src shapes to out shape */ \
    X(SUB, true)              /* a - b, broadcasting */ \
    X(MUL, true)              /* a * b, broadcasting */ \
    X(SCALE, true)            /* x * f0 */ \
    X(DETACH, false)          /* a copy of src x (f0 = 1: SCALE's kernels) that passes no gradient back: torch's \
                                 detach() (YOLO26's one-to-one head reads the features without training them) */ \
    X(CAST, true)             /* convert src dtype to out dtype, then * f0 (f16 stored as IEEE half) */ \
    X(FILL, false)            /* every element = f0 (no src) */ \
    /* shape */ \
    X(CONCAT, true)           /* n srcs along axis i0 */ \
    X(SLICE, true)            /* src x along axis i0 from i1, length = out.shape[i0] */ \
    X(SLICE_BWD, false)       /* src dy -> zeros of out's shape with dy placed along axis i0 at i1 */ \
    X(BROADCAST_TO, true)     /* src x (dims 1 or equal) repeated to out's shape */ \
    X(SUM_TO, true)           /* src x summed over dims where out has 1 and x not */ \
    /* spatial */ \
    X(UPSAMPLE_NEAREST, true) /* src x[N,C,H,W] -> [N,C,H*i0,W*i0] */ \
    X(UPSAMPLE_NEAREST_BWD, false) /* src dy[N,C,H*f,W*f] -> [N,C,H,W] sum over each f*f block, i0 = f */ \
    X(MAXPOOL2D, true)        /* src x; i = {kernel, stride, pad}; -inf padding */ \
    X(MAXPOOL2D_BWD, false)   /* src x, dy -> dx: dy routed to the first max of each window (ties: lowest index), \
                                 accumulated where windows overlap; i as MAXPOOL2D */ \
    /* linear algebra and softmax */ \
    X(MATMUL, true)           /* src a, b; i0 = transpose_a, i1 = transpose_b; 2-D, or 3-D batched: \
                                 a[B,..], b[B,..] -> out[B,M,N], one product per batch index */ \
    X(SOFTMAX, true)          /* along axis i0 */ \
    X(SOFTMAX_BWD, false)     /* src y, dy -> y*(dy - sum(dy*y)) along axis i0 */ \
    X(LOG_SOFTMAX, true)      /* along axis i0 */ \
    X(LOG_SOFTMAX_BWD, false) /* src y (log-softmax output), dy -> dy - exp(y)*sum(dy) along axis i0 */ \
    /* reductions */ \
    X(SUM, true)              /* all elements -> [1] */ \
    X(SUM_SQUARES, true)      /* sum of x^2 -> [1] */ \
    /* in-place updates of persistent tensors (out is a view of src0) */ \
    X(SGD_UPDATE, false)      /* src param, grad, momentum_buf, hyper[4], (grad_scale[1]) */ \
    X(ADAMW_UPDATE, false)    /* src param, grad, m, v, hyper[6], (grad_scale[1]) */ \
    X(MUON_MOMENTUM, false)   /* src grad, momentum_buf, hyper[6], (grad_scale[1]) -> update u (grad's shape): \
                                 buf.lerp_(g, 1-b); u = nesterov ? g.lerp(buf, b) : buf; 0s on a skipped step */ \
    X(MUON_NORMALIZE, false)  /* src x, sum_sq[1] -> x / (sqrt(sum_sq) + f0) (f0 = 1e-7: Muon's eps) */ \
    X(MUSGD_UPDATE, false)    /* src param, grad, ortho (param's shape), sgd_buf, hyper[6], (grad_scale[1]) */ \
    X(EMA_UPDATE, false)      /* src ema, param, hyper[1] = decay, (step_scale[1]: 0 leaves ema unchanged) */ \
    X(ACCUMULATE, false)      /* src dst (persistent), x: dst += x */ \
    X(ZERO, false)            /* src t: t = 0 */ \
    X(GRAD_CLIP_SCALE, false) /* src norm_sq[1], hyper[2] -> [1]: the gradient factor of clip_grad_norm_ \
                                 (yolo_grad_clip_scale); 0 when norm_sq is not finite */

typedef enum yolo_op {
#define YOLO_OP_ENUM(name, diff) YOLO_OP_##name,
    YOLO_OP_LIST(YOLO_OP_ENUM)
#undef YOLO_OP_ENUM
    YOLO_OP_COUNT
} yolo_op;

const char *yolo_op_name(int op);
bool yolo_op_differentiable(int op);

#endif

/* yolo/graph.h — computation graphs with automatic differentiation.
 *
 * Build a forward graph once for an input shape, derive its backward graph,
 * plan memory, then run the plan as often as wanted:
 *
 *     yolo_graph *g = yolo_graph_new(backend);
 *     yolo_tensor *x = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
 *     yolo_tensor *y = yolo_silu(g, yolo_conv2d(g, x, w, NULL, &(yolo_conv2d_params){...}));
 *     yolo_tensor *loss = yolo_mean(g, y);
 *     yolo_graph_backward(g, loss);          // w->grad += dloss/dw on every run
 *     yolo_graph_plan(g, &info);             // info.peak_bytes
 *     yolo_tensor_upload(x, ...); yolo_graph_run(g); yolo_tensor_download(loss, ...);
 *
 * Op builders never abort: on a bad argument they return NULL, record the
 * first error in the graph (yolo_graph_status) and set yolo_last_error() to
 * a message naming the op and the shapes. Builders given NULL inputs return
 * NULL, so a chain can be checked once at the end.
 *
 * Persistent tensors (parameters, running statistics, optimizer state) may
 * be used by any number of graphs; a graph never owns them. A graph owns
 * its inputs and nodes, freed with yolo_graph_free. */
#ifndef YOLO_GRAPH_H
#define YOLO_GRAPH_H

#include "yolo/export.h"
#include "yolo/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

YOLO_API yolo_graph *yolo_graph_new(yolo_backend *backend);
YOLO_API void yolo_graph_free(yolo_graph *g);
/* YOLO_OK, or the first error a builder met (message in yolo_last_error at that time,
 * kept in yolo_graph_error). */
YOLO_API yolo_status yolo_graph_status(const yolo_graph *g);
YOLO_API const char *yolo_graph_error(const yolo_graph *g);
YOLO_API yolo_backend *yolo_graph_backend(const yolo_graph *g);
YOLO_API int yolo_graph_node_count(const yolo_graph *g);

/* A graph input of the given shape, filled with yolo_tensor_upload after planning. */
YOLO_API yolo_tensor *yolo_graph_input(yolo_graph *g, const char *name, yolo_dtype dtype, int ndim, const int64_t *shape);
/* Keeps t alive to the end of the run so the host can download it. */
YOLO_API yolo_status yolo_graph_mark_output(yolo_graph *g, yolo_tensor *t);
/* Names a node (for error messages and debugging); returns t. */
YOLO_API yolo_tensor *yolo_set_name(yolo_tensor *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- convolution ---- */
typedef struct yolo_conv2d_params {
    int stride_h, stride_w;     /* 0 means 1 */
    int pad_h, pad_w;
    int dilation_h, dilation_w; /* 0 means 1 */
    int groups;                 /* 0 means 1 */
} yolo_conv2d_params;

/* x [N,C,H,W], w [O, C/groups, kh, kw], bias [O] or NULL -> [N,O,Ho,Wo]. */
YOLO_API yolo_tensor *yolo_conv2d(yolo_graph *g, yolo_tensor *x, yolo_tensor *w, yolo_tensor *bias, const yolo_conv2d_params *p);
/* Transposed convolution (PyTorch ConvTranspose2d without output_padding):
 * x [N,C,H,W], w [C, O/groups, kh, kw], bias [O] or NULL ->
 * [N, O, (H-1)*s - 2p + d*(kh-1) + 1, ...]. */
YOLO_API yolo_tensor *yolo_conv_transpose2d(yolo_graph *g, yolo_tensor *x, yolo_tensor *w, yolo_tensor *bias, const yolo_conv2d_params *p);

/* ---- normalization ---- */
/* Batch norm over N,H,W per channel of x [N,C,H,W] (or [N,C]).
 * training: normalizes with the batch mean and biased variance and updates
 * running_mean/var as running = (1-momentum)*running + momentum*batch
 * (the running variance takes the unbiased batch variance, as PyTorch).
 * Otherwise normalizes with the running statistics. gamma, beta,
 * running_mean, running_var are [C]. */
YOLO_API yolo_tensor *yolo_batch_norm(yolo_graph *g, yolo_tensor *x, yolo_tensor *gamma, yolo_tensor *beta,
                             yolo_tensor *running_mean, yolo_tensor *running_var,
                             bool training, float momentum, float eps);

/* ---- elementwise ---- */
YOLO_API yolo_tensor *yolo_silu(yolo_graph *g, yolo_tensor *x);
YOLO_API yolo_tensor *yolo_relu(yolo_graph *g, yolo_tensor *x);
YOLO_API yolo_tensor *yolo_sigmoid(yolo_graph *g, yolo_tensor *x);
/* x * min(max(x + 3, 0), 6) / 6, as PyTorch's nn.Hardswish */
YOLO_API yolo_tensor *yolo_hardswish(yolo_graph *g, yolo_tensor *x);
/* Broadcasting as numpy: shapes are right-aligned, a dimension of 1 stretches. */
YOLO_API yolo_tensor *yolo_add(yolo_graph *g, yolo_tensor *a, yolo_tensor *b);
YOLO_API yolo_tensor *yolo_sub(yolo_graph *g, yolo_tensor *a, yolo_tensor *b);
YOLO_API yolo_tensor *yolo_mul(yolo_graph *g, yolo_tensor *a, yolo_tensor *b);
/* x * factor. */
YOLO_API yolo_tensor *yolo_scale(yolo_graph *g, yolo_tensor *x, float factor);
/* x's values, through which backward passes no gradient (torch's detach()). */
YOLO_API yolo_tensor *yolo_detach(yolo_graph *g, yolo_tensor *x);
/* Converts dtype (f32 <-> f16; u8 and i32 -> f32), then multiplies by factor
 * (1/255 turns u8 pixels into [0,1]). */
YOLO_API yolo_tensor *yolo_cast(yolo_graph *g, yolo_tensor *x, yolo_dtype dtype, float factor);

/* ---- shape ---- */
/* A view with another shape of the same element count (no copy). */
YOLO_API yolo_tensor *yolo_reshape(yolo_graph *g, yolo_tensor *x, int ndim, const int64_t *shape);
/* Concatenates n tensors along axis (shapes equal elsewhere). */
YOLO_API yolo_tensor *yolo_concat(yolo_graph *g, int n, yolo_tensor *const *xs, int axis);
/* x[..., start:start+length, ...] along axis (a copy). */
YOLO_API yolo_tensor *yolo_slice(yolo_graph *g, yolo_tensor *x, int axis, int64_t start, int64_t length);
/* Splits x along axis into n equal chunks written to out[0..n-1]; returns the first or NULL. */
YOLO_API yolo_tensor *yolo_chunk(yolo_graph *g, yolo_tensor *x, int n, int axis, yolo_tensor **out);
/* Repeats x (whose dims are 1 or equal to shape's) up to shape. */
YOLO_API yolo_tensor *yolo_broadcast_to(yolo_graph *g, yolo_tensor *x, int ndim, const int64_t *shape);

/* ---- spatial ---- */
/* Nearest-neighbour upsampling by an integer factor on H and W. */
YOLO_API yolo_tensor *yolo_upsample_nearest(yolo_graph *g, yolo_tensor *x, int factor);
/* Max pooling (padding counts as -inf). */
YOLO_API yolo_tensor *yolo_maxpool2d(yolo_graph *g, yolo_tensor *x, int kernel, int stride, int pad);
/* [N,C,H,W] -> [N,C,1,1] mean. */
YOLO_API yolo_tensor *yolo_global_avgpool(yolo_graph *g, yolo_tensor *x);

/* ---- linear algebra ---- */
/* Matrix product: op(a) [M,K] x op(b) [K,N] -> [M,N], op transposes when asked;
 * or batched, a and b 3-D with the same batch size B: [B,M,N], one product
 * per batch index (attention's q^T k and v attn^T). */
YOLO_API yolo_tensor *yolo_matmul(yolo_graph *g, yolo_tensor *a, yolo_tensor *b, bool transpose_a, bool transpose_b);
/* x [N,K], w [M,K], bias [M] or NULL -> [N,M] (PyTorch nn.Linear). */
YOLO_API yolo_tensor *yolo_linear(yolo_graph *g, yolo_tensor *x, yolo_tensor *w, yolo_tensor *bias);
/* Along axis. */
YOLO_API yolo_tensor *yolo_softmax(yolo_graph *g, yolo_tensor *x, int axis);
YOLO_API yolo_tensor *yolo_log_softmax(yolo_graph *g, yolo_tensor *x, int axis);

/* ---- reductions ---- */
/* Sum / mean of all elements -> shape [1]. */
YOLO_API yolo_tensor *yolo_sum(yolo_graph *g, yolo_tensor *x);
YOLO_API yolo_tensor *yolo_mean(yolo_graph *g, yolo_tensor *x);
/* Sums the dimensions where shape has 1 (the inverse of broadcasting). */
YOLO_API yolo_tensor *yolo_sum_to(yolo_graph *g, yolo_tensor *x, int ndim, const int64_t *shape);
/* Sum of squares of all elements -> [1] (gradient norms). */
YOLO_API yolo_tensor *yolo_sum_squares(yolo_graph *g, yolo_tensor *x);

/* ---- optimizer and EMA (in-place updates of persistent tensors) ----
 * Hyper-parameters live in a small f32 tensor so that a recorded graph is
 * replayed with new values (the learning rate changes every step).
 * grad_scale [1] multiplies the gradient first (clipping, accumulation); NULL means 1. */
enum { YOLO_SGD_LR, YOLO_SGD_MOMENTUM, YOLO_SGD_WEIGHT_DECAY, YOLO_SGD_NESTEROV, YOLO_SGD_HYPER_COUNT };
/* SGD as PyTorch: g = grad*scale + wd*p; buf = momentum*buf + g;
 * p -= lr * (nesterov ? g + momentum*buf : buf). hyper [YOLO_SGD_HYPER_COUNT]. */
YOLO_API yolo_tensor *yolo_sgd_update(yolo_graph *g, yolo_tensor *param, yolo_tensor *grad, yolo_tensor *momentum_buf,
                             yolo_tensor *hyper, yolo_tensor *grad_scale);
enum { YOLO_ADAMW_LR, YOLO_ADAMW_BETA1, YOLO_ADAMW_BETA2, YOLO_ADAMW_EPS, YOLO_ADAMW_WEIGHT_DECAY,
       YOLO_ADAMW_STEP, YOLO_ADAMW_HYPER_COUNT };
/* AdamW as PyTorch: p *= 1 - lr*wd; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2;
 * p -= lr * (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps), t = step (>= 1). */
YOLO_API yolo_tensor *yolo_adamw_update(yolo_graph *g, yolo_tensor *param, yolo_tensor *grad, yolo_tensor *m, yolo_tensor *v,
                               yolo_tensor *hyper, yolo_tensor *grad_scale);
/* (ABI 1.5) Ultralytics 8.4's MuSGD on a matrix or conv filter p, in three
 * steps around the Newton-Schulz orthogonalization the caller builds from
 * matmuls (train/optimizer.c): with g = grad*scale and b = momentum,
 *   u = yolo_muon_momentum(...): buf.lerp_(g, 1-b); u = nesterov ? g.lerp(buf, b) : buf
 *   x = yolo_muon_normalize(x, sum_sq): x / (sqrt(sum_sq) + 1e-7), sum_sq = yolo_sum_squares(x)
 *   yolo_musgd_update(...): p -= lr*muon*ortho; g' = g + wd*p; sgd_buf = b*sgd_buf + g';
 *                           p -= lr*sgd*(nesterov ? g' + b*sgd_buf : sgd_buf)
 * hyper [YOLO_MUSGD_HYPER_COUNT]; a grad_scale of 0 (a skipped step) leaves
 * the buffers and p as they are (u is then 0). */
enum { YOLO_MUSGD_LR, YOLO_MUSGD_MOMENTUM, YOLO_MUSGD_WEIGHT_DECAY, YOLO_MUSGD_NESTEROV, YOLO_MUSGD_MUON,
       YOLO_MUSGD_SGD, YOLO_MUSGD_HYPER_COUNT };
YOLO_API yolo_tensor *yolo_muon_momentum(yolo_graph *g, yolo_tensor *grad, yolo_tensor *momentum_buf, yolo_tensor *hyper,
                                         yolo_tensor *grad_scale);
YOLO_API yolo_tensor *yolo_muon_normalize(yolo_graph *g, yolo_tensor *x, yolo_tensor *sum_sq);
YOLO_API yolo_tensor *yolo_musgd_update(yolo_graph *g, yolo_tensor *param, yolo_tensor *grad, yolo_tensor *ortho,
                                        yolo_tensor *sgd_buf, yolo_tensor *hyper, yolo_tensor *grad_scale);
/* ema = decay*ema + (1-decay)*param; hyper [1] = decay. */
YOLO_API yolo_tensor *yolo_ema_update(yolo_graph *g, yolo_tensor *ema, yolo_tensor *param, yolo_tensor *hyper);
/* The same after an optimizer step whose grad_scale (yolo_grad_clip_scale)
 * step_scale [1] holds: 0 (a skipped step) leaves ema as it is, as the SGD
 * and AdamW updates leave their tensors, so the skip needs no host read. */
YOLO_API yolo_tensor *yolo_ema_update_gated(yolo_graph *g, yolo_tensor *ema, yolo_tensor *param, yolo_tensor *hyper,
                                            yolo_tensor *step_scale);
/* Sets a persistent tensor to zero when the graph runs (gradient reset). */
YOLO_API yolo_tensor *yolo_zero(yolo_graph *g, yolo_tensor *t);
/* dst += x when the graph runs (dst persistent, x of its shape). */
YOLO_API yolo_tensor *yolo_accumulate(yolo_graph *g, yolo_tensor *dst, yolo_tensor *x);
/* The grad_scale of the updates, computed on the device from norm_sq [1]
 * (the sum of squares of every gradient, times loss_scale^2): with
 * hyper = {max_norm, unscale = 1/loss_scale} and norm = sqrt(norm_sq)*unscale,
 * unscale * (max_norm > 0 && norm + 1e-6 > max_norm ? max_norm/(norm + 1e-6) : 1),
 * as torch.nn.utils.clip_grad_norm_ after GradScaler.unscale_. A non-finite
 * norm_sq gives 0, and the SGD and AdamW updates skip the step (parameters
 * and state untouched) when their grad_scale is 0. */
enum { YOLO_CLIP_MAX_NORM, YOLO_CLIP_UNSCALE, YOLO_CLIP_HYPER_COUNT };
YOLO_API yolo_tensor *yolo_grad_clip_scale(yolo_graph *g, yolo_tensor *norm_sq, yolo_tensor *hyper);

/* ---- autograd ---- */
/* Appends the backward pass of a scalar `loss` (seeded with 1): every
 * parameter reached (requires_grad) gets grad += dloss/dparam on each run. */
YOLO_API yolo_status yolo_graph_backward(yolo_graph *g, yolo_tensor *loss);
/* The same for several outputs whose gradients the host supplies (a loss
 * computed on the host): for each outputs[i] a graph input of its shape is
 * created and returned in grad_inputs[i], to be uploaded before each run. */
YOLO_API yolo_status yolo_graph_backward_from(yolo_graph *g, int n, yolo_tensor *const *outputs, yolo_tensor **grad_inputs);

/* ---- planning and running ---- */
typedef struct yolo_graph_plan_info {
    size_t peak_bytes;     /* planned activation memory (inputs + nodes) */
    size_t naive_bytes;    /* sum of all node sizes, without reuse */
    int n_nodes;
} yolo_graph_plan_info;

/* Assigns storage to every input and node by liveness (buffers whose
 * lifetimes do not overlap share memory). Build-time; call once. */
YOLO_API yolo_status yolo_graph_plan(yolo_graph *g, yolo_graph_plan_info *info);
/* Runs every node in order. Plans first if needed. */
YOLO_API yolo_status yolo_graph_run(yolo_graph *g);
/* Runs only the nodes before / from the backward pass, so that a loss
 * computed on the host fits between them (yolo_graph_backward_from):
 * run_forward, download outputs, upload their gradients, run_backward.
 * Without a backward pass, run_forward runs everything. */
YOLO_API yolo_status yolo_graph_run_forward(yolo_graph *g);
YOLO_API yolo_status yolo_graph_run_backward(yolo_graph *g);

#ifdef __cplusplus
}
#endif
#endif

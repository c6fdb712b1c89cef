/* The optimizer steps (shaders/optim.comp): SGD with momentum/Nesterov,
 * AdamW and MuSGD's three steps, in place on persistent tensors, and the
 * gradient-clipping factor; the EMA update, gradient accumulation and
 * zeroing are in vk_ops_eltwise.c. */
#include <string.h>

#include "backend/vulkan/vk_ops.h"

/* optim.comp's dispatch of op; slot 5 (the grad_scale) is node source
 * `scale_src` when there is one, else a read-only repeat of slot 4. */
static void optim_dispatch(yolo_vk_recorder *r, const yolo_tensor *node, uint32_t op, int scale_src,
                           yolo_vk_dispatch *d, yolo_vk_arg args[8]) {
    const bool has_scale = scale_src >= 0 && node->node->n_src > scale_src && node->node->src[scale_src];
    yolo_vk_dispatch_init(d, "optim");
    d->spec[0] = r->ctx->wg;
    d->spec[1] = op;
    d->spec[2] = has_scale;
    d->n_spec = 3;
    memset(args, 0, sizeof(yolo_vk_arg) * 8);
    if (has_scale) args[5] = (yolo_vk_arg){.t = node->node->src[scale_src], .whole = true};
    else args[5].alias = 5;
}

/* optim.comp slots: 0 param, 1 grad, 2 state 1, 3 state 2, 4 hyper, 5 scale. */
static yolo_status run_optim(yolo_vk_recorder *r, const yolo_tensor *out, uint32_t op) {
    const bool adamw = op == 1;
    const int hyper = adamw ? 4 : 3;
    yolo_vk_dispatch d;
    yolo_vk_arg args[8];
    optim_dispatch(r, out, op, hyper + 1, &d, args);
    args[0] = (yolo_vk_arg){.t = out->node->src[0], .write = true};
    args[1] = (yolo_vk_arg){.t = out->node->src[1]};
    args[2] = (yolo_vk_arg){.t = out->node->src[2], .write = true};
    if (adamw) args[3] = (yolo_vk_arg){.t = out->node->src[3], .write = true};
    else args[3].alias = 3; /* writable: repeats the momentum buffer */
    args[4] = (yolo_vk_arg){.t = out->node->src[hyper], .whole = true};
    return yolo_vk_run_flat(r, &d, args, yolo_vk_numel(out->node->src[0]));
}

/* OP 2: one invocation; slot 0 the scale out, 1 norm_sq, 4 hyper. */
static yolo_status op_clip_scale(yolo_vk_recorder *r, const yolo_tensor *node) {
    yolo_vk_dispatch d;
    yolo_vk_arg args[8];
    optim_dispatch(r, node, 2, -1, &d, args); /* slot 5 repeats the hyper-parameters */
    args[0] = (yolo_vk_arg){.t = node, .write = true};
    args[1] = (yolo_vk_arg){.t = node->node->src[0]};
    args[2].alias = 1; /* writable: repeat the output */
    args[3].alias = 1;
    args[4] = (yolo_vk_arg){.t = node->node->src[1], .whole = true};
    return yolo_vk_run_flat(r, &d, args, 1);
}

/* OP 3 MUON_MOMENTUM: slot 0 the update u (out), 1 grad, 2 momentum buffer, 4 hyper, 5 scale. */
static yolo_status op_muon_momentum(yolo_vk_recorder *r, const yolo_tensor *out) {
    yolo_vk_dispatch d;
    yolo_vk_arg args[8];
    optim_dispatch(r, out, 3, 3, &d, args);
    args[0] = (yolo_vk_arg){.t = out, .write = true};
    args[1] = (yolo_vk_arg){.t = out->node->src[0]};
    args[2] = (yolo_vk_arg){.t = out->node->src[1], .write = true};
    args[3].alias = 3; /* writable: repeats the momentum buffer */
    args[4] = (yolo_vk_arg){.t = out->node->src[2], .whole = true};
    return yolo_vk_run_flat(r, &d, args, yolo_vk_numel(out));
}

/* OP 4 MUSGD_UPDATE: slot 0 param, 1 grad, 2 SGD buffer, 3 ortho, 4 hyper, 5 scale. */
static yolo_status op_musgd(yolo_vk_recorder *r, const yolo_tensor *out) {
    yolo_vk_dispatch d;
    yolo_vk_arg args[8];
    optim_dispatch(r, out, 4, 5, &d, args);
    args[0] = (yolo_vk_arg){.t = out->node->src[0], .write = true};
    args[1] = (yolo_vk_arg){.t = out->node->src[1]};
    args[2] = (yolo_vk_arg){.t = out->node->src[3], .write = true};
    args[3] = (yolo_vk_arg){.t = out->node->src[2]};
    args[4] = (yolo_vk_arg){.t = out->node->src[4], .whole = true};
    return yolo_vk_run_flat(r, &d, args, yolo_vk_numel(out->node->src[0]));
}

/* OP 5 MUON_NORMALIZE: slot 0 out, 1 x, 4 sum_sq; PF(1) = eps. */
static yolo_status op_muon_normalize(yolo_vk_recorder *r, const yolo_tensor *out) {
    yolo_vk_dispatch d;
    yolo_vk_arg args[8];
    optim_dispatch(r, out, 5, -1, &d, args); /* slot 5 repeats sum_sq */
    union { float f; uint32_t u; } eps = {.f = out->node->fparams[0]};
    d.push[9] = eps.u;
    args[0] = (yolo_vk_arg){.t = out, .write = true};
    args[1] = (yolo_vk_arg){.t = out->node->src[0]};
    args[2].alias = 1; /* writable: repeats the output */
    args[3].alias = 1;
    args[4] = (yolo_vk_arg){.t = out->node->src[1], .whole = true};
    return yolo_vk_run_flat(r, &d, args, yolo_vk_numel(out));
}

static yolo_status op_sgd(yolo_vk_recorder *r, const yolo_tensor *n) { return run_optim(r, n, 0); }
static yolo_status op_adamw(yolo_vk_recorder *r, const yolo_tensor *n) { return run_optim(r, n, 1); }

yolo_vk_op_fn yolo_vk_optim_op(int op) {
    switch (op) {
    case YOLO_OP_SGD_UPDATE: return op_sgd;
    case YOLO_OP_ADAMW_UPDATE: return op_adamw;
    case YOLO_OP_GRAD_CLIP_SCALE: return op_clip_scale;
    case YOLO_OP_MUON_MOMENTUM: return op_muon_momentum;
    case YOLO_OP_MUSGD_UPDATE: return op_musgd;
    case YOLO_OP_MUON_NORMALIZE: return op_muon_normalize;
    default: return NULL;
    }
}

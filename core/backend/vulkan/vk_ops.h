/* Op glue of the Vulkan backend: for each op of graph/ops.h, the kernels,
 * specialization constants, push constants and bindings it records.
 *
 * Every binding a shader declares is bound (validation counts references in
 * specialized-away branches as uses): an unused read-only binding aliases
 * one of the op's inputs, an unused writable one the op's output. */
#ifndef YOLO_VK_OPS_H
#define YOLO_VK_OPS_H

#include "backend/vulkan/vk_recorder.h"
#include "graph/ops.h"

typedef yolo_status (*yolo_vk_op_fn)(yolo_vk_recorder *r, const yolo_tensor *node);

/* NULL for ops without a kernel (NONE, VIEW) and for unknown ops. */
yolo_vk_op_fn yolo_vk_op_for(int op);

/* Per-file tables (NULL when the op is not theirs). */
yolo_vk_op_fn yolo_vk_eltwise_op(int op);
yolo_vk_op_fn yolo_vk_shape_op(int op);
yolo_vk_op_fn yolo_vk_reduce_op(int op);
yolo_vk_op_fn yolo_vk_norm_op(int op);
yolo_vk_op_fn yolo_vk_gemm_op(int op);
yolo_vk_op_fn yolo_vk_optim_op(int op);

int64_t yolo_vk_numel(const yolo_tensor *t);

/* Refuses, naming the op, the tensor and the dtypes, a node with an f16 or
 * bf16 operand that no kernel takes (vk_ops_dtypes.c); YOLO_OK otherwise. */
yolo_status yolo_vk_check_dtypes(const yolo_vk_context *ctx, const yolo_tensor *node);

/* Elements of `elem_bytes` one binding may cover (a multiple of 64, so
 * chunk boundaries stay word aligned for every dtype). */
int64_t yolo_vk_max_elems(const yolo_vk_recorder *r, size_t elem_bytes);

/* One binding slot of a flat (elementwise) kernel. */
typedef struct yolo_vk_arg {
    const yolo_tensor *t; /* NULL: unused or alias */
    bool write;
    bool whole;     /* bound entirely in every chunk (hyper-parameters, per-channel vectors) */
    int8_t alias;   /* slot + 1 of the binding this one repeats, 0 for none */
} yolo_vk_arg;

/* Runs `tmpl` over elements [0, n) of its tensors (f32, or f16 for a
 * shader built with half_io.glsl; push offsets in units of each tensor's
 * element size), in as many dispatches as the binding limit needs:
 * non-whole slots bind the chunk's elements. PU(0) gets the chunk's element count, PU(23) its first index; one
 * invocation per element (workgroups of ctx->wg). */
yolo_status yolo_vk_run_flat(yolo_vk_recorder *r, const yolo_vk_dispatch *tmpl, const yolo_vk_arg args[8],
                             int64_t n);

/* fp16 copy (round to nearest even, as the CPU backend) of the f32 elements
 * [first, first+count) of t into dst from byte 0 (cast16.comp); the range
 * fits one binding. amp's GEMM inputs. */
yolo_status yolo_vk_to_half(yolo_vk_recorder *r, const yolo_tensor *t, int64_t first, int64_t count,
                            const yolo_buffer *dst);

/* Sets slot `slot` to repeat slot `of` (an unused binding of a shader). */
void yolo_vk_alias(yolo_vk_dispatch *d, int slot, int of);

/* Generic reduction (shaders/reduce.comp), used by SUM*, SUM_TO, batch norm
 * and split-K: out[j] = scale * sum_r v(j, r) (+ out[j] when accumulate)
 * over a 4-D view of x with the given kept and reduced dims (each dim is
 * kept or reduced: one of the two is 1) and element strides. */
typedef struct yolo_vk_reduce_args {
    const yolo_buffer *x_buf;
    VkDeviceSize x_offset;       /* bytes, start of x */
    VkDeviceSize x_bytes;        /* extent read from x */
    const yolo_buffer *y_buf;    /* mode 3 */
    VkDeviceSize y_offset;
    const yolo_buffer *c_buf;    /* modes 2, 3: per-output center */
    VkDeviceSize c_offset;
    const yolo_buffer *out_buf;
    VkDeviceSize out_offset;
    int64_t kept[4], reduced[4], stride[4];
    int mode;      /* 0 x, 1 x^2, 2 (x-c)^2, 3 y*(x-c) */
    float scale;
    bool accumulate;
} yolo_vk_reduce_args;
yolo_status yolo_vk_reduce(yolo_vk_recorder *r, const yolo_vk_reduce_args *a);

/* Merges a (big, small) pair of right-aligned broadcast shapes into at most
 * 4 groups of equal broadcast pattern (as the CPU backend): dims[] outermost
 * first and, per group, whether `small` is broadcast there. Returns groups. */
int yolo_vk_broadcast_groups(const yolo_tensor *big, const yolo_tensor *small, int64_t dims[4], bool bcast[4]);

#endif

#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// reduce.comp with subgroup sums in the workgroup step (devices with
// subgroup arithmetic in compute; YOLO_VK_DISABLE_SUBGROUP turns it off).
// Sums over the "reduced" dimensions of a 4-D view of x, for every index of
// the "kept" dimensions: out[j] = scale * sum_r v(j, r). SUM, SUM_SQUARES,
// SUM_TO, batch-norm statistics and split-K partial sums all use it.
//   v = x (MODE 0), x^2 (1), (x - c[j])^2 (2), y * (x - c[j]) (3)
// SMALL = 1: one invocation per output, looping over all of r (the host
// keeps that loop within lavapipe's per-invocation budget).
// SMALL = 0: one workgroup per (output, chunk of WG*ITER values), a
// shared-memory tree; with several chunks each writes a partial sum
// out[chunk * n_out + j] that a second pass adds up.
// before common.glsl: its helpers read gl_WorkGroupSize
layout(local_size_x_id = 0) in;
#define USE_SUBGROUP
#include "common.glsl"
#include "reduce_body.glsl"

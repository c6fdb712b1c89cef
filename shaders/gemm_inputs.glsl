// Element type of the GEMM inputs A (binding 0) and B (binding 1). Built
// twice (cmake/shaders.cmake): fp32, and with GEMM_F16 (amp=True) reading
// fp16 copies through 16-bit storage, widened to fp32 on load, so products
// and sums stay fp32. Included before common.glsl: extensions come first.
#ifdef GEMM_F16
#extension GL_EXT_shader_16bit_storage : require
#define GEMM_IN float16_t
#else
#define GEMM_IN float
#endif
// GEMM_COOP: the cooperative-matrix core (gemm_coop.glsl), on fp16 tiles.
#ifdef GEMM_COOP
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#ifndef GEMM_COOP_EMULATED
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#endif
#endif

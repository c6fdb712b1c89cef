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

// Element type of a kernel's activation bindings. Built twice
// (cmake/shaders.cmake): fp32, and with HALF_IO as <name>_f16 for amp's f16
// activations (core/graph/narrow.c), which move as IEEE half bits through
// 16-bit storage and convert as cast16 does (half_value, half_bits in
// common.glsl: round to nearest even). Included before common.glsl:
// extensions come first.
#ifdef HALF_IO
#extension GL_EXT_shader_16bit_storage : require
#define ACT uint16_t
#define ACT_LOAD(v) half_value(uint(v))
#define ACT_STORE(f) uint16_t(half_bits(f))
#else
#define ACT float
#define ACT_LOAD(v) (v)
#define ACT_STORE(f) (f)
#endif

/* The vector math of util/vec.h for VEC_W floats (8 or 16): vec.h includes
 * this file once per width, so v8_exp and v16_exp (and the rest) are one
 * text. Not a header of its own: no include guard, and VEC_W must be set.
 *
 * Every width does the same IEEE operations per lane, so a lane's value is
 * the same whichever width computed it. */
#ifndef VEC_W
#error "util/vec_math.h is included by util/vec.h with VEC_W set"
#endif

#define VM_CAT_(a, b) a##b
#define VM_CAT(a, b) VM_CAT_(a, b)
#define VM_T(kind) VM_CAT(VM_CAT(v, VEC_W), kind)               /* v8f, v16i, ... */
#define VM_FN(name) VM_CAT(VM_CAT(v, VEC_W), VM_CAT(_, name))   /* v8_exp, ... */
#define VF VM_T(f)
#define VI VM_T(i)
#define VU VM_T(u)
#define VH VM_T(h)
#define VS(x) ((VF){0} + (x))  /* x in every lane */
#define VSU(x) ((VU){0} + (x))
#define VSEL(mask, a, b) ((VF)(((mask) & (VI)(a)) | (~(mask) & (VI)(b))))

/* e^x within 1.5 ulp on [-87, 88] (Cephes expf): x = n*ln2 + r, e^r by a
 * degree-6 polynomial, 2^n through the exponent bits. Inputs are clamped
 * to that range, NaN stays NaN. */
static inline __attribute__((always_inline)) void VM_FN(exp)(const VF *in, VF *out) {
    VF x = VSEL((VI)(*in < VS(-87.0f)), VS(-87.0f), *in);
    x = VSEL((VI)(x > VS(88.0f)), VS(88.0f), x);
    const VF magic = VS(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
    const VF t = x * VS(1.44269504088896341f) + magic;
    const VF n = t - magic;
    const VI ni = (VI)t - 0x4b400000;
    const VF r = (x - n * VS(0.693359375f)) - n * VS(-2.12194440e-4f);
    VF p = VS(1.9875691500e-4f);
    p = p * r + VS(1.3981999507e-3f);
    p = p * r + VS(8.3334519073e-3f);
    p = p * r + VS(4.1665795894e-2f);
    p = p * r + VS(1.6666665459e-1f);
    p = p * r + VS(5.0000001201e-1f);
    p = p * r * r + r + VS(1.0f);
    *out = p * (VF)((VU)(ni + 127) << 23); /* unsigned: NaN lanes must not overflow a signed shift */
}

/* log(1 + e) for e in [0, 1], within 2 ulp (Cephes logf's polynomial). The
 * reduced argument is e itself below sqrt(2) - 1, so tiny e keep their
 * precision (log(1.0f + e) would round them away), and (1 + e) / 2 - 1
 * (exact) above it. */
static inline __attribute__((always_inline)) void VM_FN(log1p_unit)(const VF *e, VF *out) {
    const VI big = (VI)(*e > VS(0.41421356f));
    const VF x = VSEL(big, (VS(1.0f) + *e) * VS(0.5f) - VS(1.0f), *e);
    const VF k = VSEL(big, VS(1.0f), VS(0.0f));
    const VF z = x * x;
    VF p = VS(7.0376836292e-2f);
    p = p * x + VS(-1.1514610310e-1f);
    p = p * x + VS(1.1676998740e-1f);
    p = p * x + VS(-1.2420140846e-1f);
    p = p * x + VS(1.4249322787e-1f);
    p = p * x + VS(-1.6668057665e-1f);
    p = p * x + VS(2.0000714765e-1f);
    p = p * x + VS(-2.4999993993e-1f);
    p = p * x + VS(3.3333331174e-1f);
    VF y = x * z * p + k * VS(-2.12194440e-4f) - VS(0.5f) * z;
    *out = (x + y) + k * VS(0.693359375f);
}

static inline __attribute__((always_inline)) void VM_FN(sigmoid)(const VF *x, VF *out) {
    const VF neg = -*x;
    VF e;
    VM_FN(exp)(&neg, &e);
    *out = VS(1.0f) / (VS(1.0f) + e);
}

/* SiLU and its backward; dy is unused by the forward (the kernels' map
 * signature). */
static inline __attribute__((always_inline)) void VM_FN(silu)(const VF *x, const VF *dy, VF *o) {
    (void)dy;
    VF s;
    VM_FN(sigmoid)(x, &s);
    *o = *x * s;
}
static inline __attribute__((always_inline)) void VM_FN(silu_bwd)(const VF *x, const VF *dy, VF *o) {
    VF s;
    VM_FN(sigmoid)(x, &s);
    *o = *dy * s * (VS(1.0f) + *x * (VS(1.0f) - s));
}

/* Floats to bf16 as the CPU's VCVTNEPS2BF16 (and so oneDNN's reorders)
 * does it: round to nearest even, NaN to a quiet NaN, denormals to a signed
 * zero. yolo_f32_to_bf16 is the scalar twin. */
static inline __attribute__((always_inline)) void VM_FN(to_bf16)(const VF *x, uint16_t *out) {
    const VU u = (VU)*x;
    const VU mag = u & 0x7fffffffu;
    VU r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const VU nan = (VU)(mag > VSU(0x7f800000u)), denormal = (VU)((u & 0x7f800000u) == VSU(0));
    r = (nan & ((u >> 16) | 0x40u)) | (~nan & r);
    r = (denormal & ((u >> 16) & 0x8000u)) | (~denormal & r);
    const VH h = __builtin_convertvector(r, VH);
    memcpy(out, &h, sizeof h);
}

/* bf16 widened to floats (exact). */
static inline __attribute__((always_inline)) void VM_FN(from_bf16)(const uint16_t *p, VF *out) {
    VH h;
    memcpy(&h, p, sizeof h);
    *out = (VF)(__builtin_convertvector(h, VU) << 16);
}

/* acc[l] += v[l] widened to double, for each lane l (four at a time). */
static inline __attribute__((always_inline)) void VM_FN(add_to_doubles)(const VF *v, double *acc) {
    for (int l = 0; l < VEC_W; l += 4) {
        v4f f;
        v4d d;
        memcpy(&f, (const float *)v + l, sizeof f);
        memcpy(&d, acc + l, sizeof d);
        d += __builtin_convertvector(f, v4d);
        memcpy(acc + l, &d, sizeof d);
    }
}

#undef VM_CAT_
#undef VM_CAT
#undef VM_T
#undef VM_FN
#undef VF
#undef VI
#undef VU
#undef VH
#undef VS
#undef VSU
#undef VSEL

"""float16 and bfloat16 in generated kernels: the rule both printers follow, and its C helpers.

Note [Half dtypes]: float16 and bfloat16 live in memory as 2-byte values and are computed in
float, as ATen's kernels do (``opmath_t``): a load widens, arithmetic, reductions and GEMM
accumulators are float, a store rounds to nearest even. So a half value in the IR is a
``float`` variable and its buffer holds the 16 bits. A fused chain keeps its intermediates in
float (as torch.compile's Inductor does on the CPU) and rounds once, at the store, where eager
rounds after every op: compiled results may differ from eager by those intermediate roundings.
A conversion the program asks for (``to_dtype``) rounds there: into a half dtype, and out of
one (a half value computed in float is first rounded to what eager's tensor would hold).

The C printer (cprinter.py) converts with the portable bit manipulation below, bit for bit as
the CPU's eager kernels (NumPy's float16, ml_dtypes' bfloat16) do: every finite value, the
subnormals, overflow to inf, and NaN (float16 keeps a NaN's sign and top payload bits;
bfloat16 makes it ``0x7FC0`` with its sign). float64 and integers round through float, as
eager's ``cast_into`` and PyTorch's ``c10::Half(float)`` do (so a double just past a tie can
round to even, where NumPy's direct conversion would not). tests/compile/test_inductor_half.py
checks all 65,536 bit patterns of each type and the float32 edges against NumPy and ml_dtypes.
The OpenCL printer (oclprinter.py) widens with ``vload_half`` and rounds with
``vstore_half_rte`` and ``bf16_round``.
"""

HALF = frozenset(("float16", "bfloat16"))
STORAGE_C_TYPE = "uint16_t"     # a half buffer's element in C: its bits

# C helpers (in cprinter.py's preamble); names by dtype
_WIDEN = {"float16": "strata_f16_to_float", "bfloat16": "strata_bf16_to_float"}
_NARROW = {"float16": "strata_float_to_f16", "bfloat16": "strata_float_to_bf16"}

C_HELPERS = r"""typedef union { float f; uint32_t u; } strata_float_word;
static inline uint32_t strata_bits_of(float f) { strata_float_word w; w.f = f; return w.u; }
static inline float strata_float_of(uint32_t u) { strata_float_word w; w.u = u; return w.f; }
/* float16 bits -> float, exact; inf and NaN keep their sign and payload */
static inline float strata_f16_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, rest = h & 0x7FFFu;
    const uint32_t normal = (rest << 13) + (112u << 23);      /* exponent bias 15 -> 127 */
    const uint32_t special = (rest << 13) | 0x7F800000u;
    const uint32_t small = strata_bits_of((float)rest * 0x1p-24f);   /* 0 and subnormals */
    return strata_float_of(sign | (rest >= 0x7C00u ? special : rest >= 0x0400u ? normal : small));
}
/* float -> float16 bits, round to nearest even (Maratyszcza's FP16: the addition rounds the
   mantissa to float16's width, a subnormal's too, in the FPU's rounding mode; a value beyond
   float16 becomes inf by the first product); a NaN keeps its sign and top payload bits and
   stays a NaN, as NumPy's npy_floatbits_to_halfbits */
static inline uint16_t strata_float_to_f16(float f) {
    const uint32_t w = strata_bits_of(f), twice = w + w, sign = (w >> 16) & 0x8000u;
    const uint32_t payload = (w & 0x007FFFFFu) >> 13;
    const uint32_t nan = 0x7C00u + payload + (payload == 0);
    uint32_t bias = twice & 0xFF000000u;
    bias = bias < 0x71000000u ? 0x71000000u : bias;
    const float base = strata_float_of((bias >> 1) + 0x07800000u) +
                       (fabsf(f) * 0x1p+112f) * 0x1p-110f;
    const uint32_t bits = strata_bits_of(base);
    const uint32_t finite = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
    return (uint16_t)(sign | (twice > 0xFF000000u ? nan : finite));
}
static inline float strata_bf16_to_float(uint16_t b) { return strata_float_of((uint32_t)b << 16); }
/* float -> bfloat16 bits, round to nearest even on the bits; NaN -> 0x7FC0 with its sign */
static inline uint16_t strata_float_to_bf16(float f) {
    const uint32_t w = strata_bits_of(f);
    const uint32_t rounded = (w + 0x7FFFu + ((w >> 16) & 1u)) >> 16;
    return (uint16_t)(f != f ? ((w >> 16) & 0x8000u) | 0x7FC0u : rounded);
}
"""


def c_load(dtype, element) -> str:
    """The C value (float) of the half element ``element`` (its 16 bits)."""
    return f"{_WIDEN[dtype]}({element})"


def c_stored(dtype, value) -> str:
    """The 16 bits to store for ``value`` (of any C arithmetic type: through float)."""
    return f"{_NARROW[dtype]}((float)({value}))"


def c_loaded(dtype, element) -> str:
    """The C value of a buffer's ``element`` (a half element widened)."""
    return c_load(dtype, element) if dtype in HALF else element


def c_store(dtype, element, value) -> str:
    """``element = value;`` into a buffer of ``dtype``: a half value rounds to its 16 bits
    (or writes the bits it was loaded or rounded from)."""
    if dtype not in HALF:
        return f"{element} = {value};"
    if getattr(value, "bits", None) is not None and value.dtype == dtype:
        return f"{element} = {value.bits};"
    return f"{element} = {c_stored(dtype, value)};"

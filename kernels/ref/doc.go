// Package ref holds float64 reference implementations of the bundled qsa
// kernels (kernels/qsa_prompt.metal and kernels/qsa_prep.metal) and the
// comparisons that decide whether a kernel's output is right.
//
// metalab checks variants bitwise against their baseline; these references
// are what keeps a wrong kernel from becoming a baseline in the first place.
// Each reference reads the same input bytes the kernel reads (int8 arrays,
// fp16 and fp32 bit patterns, the QsaParams block) and returns, for every
// output element, the exact value in float64 and an error bound derived from
// the float32 operations the kernel performs: |got - want| <= bound. The
// bounds are worst-case rounding bounds, independent of summation order, so
// the cooperative and the fallback path of qsa_flash are held to the same
// reference. A NaN or infinite expected value must be matched exactly, and
// elements a kernel must not write are expected to keep their bytes.
//
// Quantised outputs (int8 with fp16 group scales) are checked against the
// pre-quantisation values: the scale within its rounding bound, and every
// int8 value equal to the rounding of x/scale for some x inside x's bound.
package ref

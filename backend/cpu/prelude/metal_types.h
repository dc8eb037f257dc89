// metal_types.h — <metal_types>: Metal's scalar, vector and matrix type
// names in the global namespace as well as in namespace metal.
//
// In Metal these are built-in types, usable before `using namespace
// metal;` (ggml's common header writes `typedef half ggml_half;` right
// after including <metal_stdlib>). The prelude defines them in namespace
// metal and brings them into the global namespace here, so both spellings
// name the same types and `using namespace metal;` is never ambiguous. The
// library templates (vec, matrix, simdgroup_matrix, ...) and functions stay
// in namespace metal only, as in Metal.
#pragma once
#include "metal_matrix.h"
#include "metal_scalar.h"
#include "metal_vector.h"

// Under nvcc the CUDA runtime already owns these names in the global
// namespace (float4, uint2, ...); a CUDA translation unit puts the kernel's
// source inside namespace metal instead (backend/cuda/runtime/mtl_cuda.h),
// where Metal's names come first.
#if !defined(__CUDACC__)
using metal::uchar;
using metal::ushort;
using metal::uint;
using metal::ulong;
using metal::half;
using metal::bfloat;
using metal::float2; using metal::float3; using metal::float4; using metal::packed_float2; using metal::packed_float3; using metal::packed_float4;
using metal::half2; using metal::half3; using metal::half4; using metal::packed_half2; using metal::packed_half3; using metal::packed_half4;
using metal::bfloat2; using metal::bfloat3; using metal::bfloat4; using metal::packed_bfloat2; using metal::packed_bfloat3; using metal::packed_bfloat4;
using metal::int2; using metal::int3; using metal::int4; using metal::packed_int2; using metal::packed_int3; using metal::packed_int4;
using metal::uint2; using metal::uint3; using metal::uint4; using metal::packed_uint2; using metal::packed_uint3; using metal::packed_uint4;
using metal::short2; using metal::short3; using metal::short4; using metal::packed_short2; using metal::packed_short3; using metal::packed_short4;
using metal::ushort2; using metal::ushort3; using metal::ushort4; using metal::packed_ushort2; using metal::packed_ushort3; using metal::packed_ushort4;
using metal::char2; using metal::char3; using metal::char4; using metal::packed_char2; using metal::packed_char3; using metal::packed_char4;
using metal::uchar2; using metal::uchar3; using metal::uchar4; using metal::packed_uchar2; using metal::packed_uchar3; using metal::packed_uchar4;
using metal::bool2; using metal::bool3; using metal::bool4; using metal::packed_bool2; using metal::packed_bool3; using metal::packed_bool4;
using metal::long2; using metal::long3; using metal::long4; using metal::packed_long2; using metal::packed_long3; using metal::packed_long4;
using metal::ulong2; using metal::ulong3; using metal::ulong4; using metal::packed_ulong2; using metal::packed_ulong3; using metal::packed_ulong4;
using metal::float2x2; using metal::float2x3; using metal::float2x4; using metal::float3x2; using metal::float3x3; using metal::float3x4; using metal::float4x2; using metal::float4x3; using metal::float4x4;
using metal::half2x2; using metal::half2x3; using metal::half2x4; using metal::half3x2; using metal::half3x3; using metal::half3x4; using metal::half4x2; using metal::half4x3; using metal::half4x4;
#endif  // !__CUDACC__

// math.cpp — reads "function x y z" lines (float bit patterns in hex, or
// half bit patterns for the h_ functions) and prints the result bits. The
// "vec" line checks that vector forms agree with scalar forms per lane.
#include <cstdio>
#include <cstring>
#include <metal_stdlib>
using namespace metal;

struct Fn {
  const char* name;
  float (*f)(float, float, float);
};

#define F1(n) {#n, [](float x, float, float) { return float(n(x)); }}
#define F2(n) {#n, [](float x, float y, float) { return float(n(x, y)); }}
#define F3(n) {#n, [](float x, float y, float z) { return float(n(x, y, z)); }}
#define H1(n) {"h_" #n, [](float x, float, float) { return float(n(half(x))); }}
#define H2(n) {"h_" #n, [](float x, float y, float) { return float(n(half(x), half(y))); }}
#define H3(n) {"h_" #n, [](float x, float y, float z) { return float(n(half(x), half(y), half(z))); }}

static const Fn fns[] = {
    F1(sqrt), F1(rsqrt), F1(floor), F1(ceil), F1(round), F1(rint), F1(trunc), F1(fract), F1(fabs), F1(abs), F1(sign),
    F1(saturate), F1(exp), F1(exp2), F1(exp10), F1(log), F1(log2), F1(log10), F1(sin), F1(cos), F1(tan), F1(asin),
    F1(acos), F1(atan), F1(sinpi), F1(cospi), F1(tanpi), F1(sinh), F1(cosh), F1(tanh), F2(pow), F2(powr), F2(atan2), F2(fmod), F2(fmin), F2(fmax),
    F2(min), F2(max), F2(copysign), F2(step), F2(divide), F3(fma), F3(mix), F3(clamp), F3(smoothstep),
    {"ldexp", [](float x, float y, float) { return ldexp(x, int(y)); }},
    {"frexp_m", [](float x, float, float) { int e; return frexp(x, e); }},
    {"frexp_e", [](float x, float, float) { int e; frexp(x, e); return float(e); }},
    {"modf_f", [](float x, float, float) { float ip; return modf(x, ip); }},
    {"modf_i", [](float x, float, float) { float ip; modf(x, ip); return ip; }},
    {"median3", [](float x, float y, float z) { return median3(x, y, z); }},
    {"fmax3", [](float x, float y, float z) { return fmax3(x, y, z); }},
    {"imedian3", [](float x, float y, float z) { return float(median3(int(x), int(y), int(z))); }},
    {"sinpi@", [](float x, float, float) { return sinpi(x); }},
    {"cospi@", [](float x, float, float) { return cospi(x); }},
    {"tanpi@", [](float x, float, float) { return tanpi(x); }},
    {"sincos_s", [](float x, float, float) { float c; return sincos(x, c); }},
    {"sincos_c", [](float x, float, float) { float c; sincos(x, c); return c; }},
    {"isnan", [](float x, float, float) { return float(isnan(x)); }},
    {"isinf", [](float x, float, float) { return float(isinf(x)); }},
    {"isfinite", [](float x, float, float) { return float(isfinite(x)); }},
    {"signbit", [](float x, float, float) { return float(signbit(x)); }},
    {"dot3", [](float x, float y, float z) { return dot(float3(x, y, z), float3(z, x, y)); }},
    {"length3", [](float x, float y, float z) { return length(float3(x, y, z)); }},
    {"cross_y", [](float x, float y, float z) { return cross(float3(x, y, z), float3(z, x, y)).y; }},
    {"normalize_x", [](float x, float y, float z) { return normalize(float3(x, y, z)).x; }},
    {"fast_exp", [](float x, float, float) { return fast::exp(x); }},
    {"precise_sqrt", [](float x, float, float) { return precise::sqrt(x); }},
    {"h_exp", [](float x, float, float) { return float(exp(half(x))); }},
    {"isordered", [](float x, float y, float) { return float(isordered(x, y)); }},
    {"isunordered", [](float x, float y, float) { return float(isunordered(x, y)); }},
    {"logb", [](float x, float, float) { return logb(x); }},
    {"ilogb", [](float x, float, float) { return float(ilogb(x)); }},
    // A scalar where a vector is expected stands for a vector of it: each
    // component of the vector form is the scalar function.
    {"fmax_sv", [](float x, float y, float) { return fmax(x, float4(y, 1, 2, 3)).x; }},
    {"step_sv", [](float x, float y, float) { return step(x, float3(0, y, 1)).y; }},
    {"clamp_vss", [](float x, float y, float z) { return clamp(float2(0, x), y, z).y; }},
    {"smoothstep_ssv", [](float x, float y, float z) { return smoothstep(x, y, float4(0, 0, 0, z)).w; }},
    H1(sqrt), H1(floor), H1(sin), H1(fract), H2(fmin), H2(max), H3(fma), H3(clamp), H3(mix),
};

template <class V, class F>
bool same_per_lane(V v, V w, V u, F f) {
  auto r = f(v, w, u);
  for (int i = 0; i < V::mtl_vec_size; i++) {
    float a = float(r[i]), b = float(f(v[i], w[i], u[i]));
    if (as_type<uint>(a) != as_type<uint>(b) && !(isnan(a) && isnan(b))) return false;
  }
  return true;
}

int main() {
  char name[32];
  unsigned x, y, z;
  while (std::scanf("%31s %x %x %x", name, &x, &y, &z) == 4) {
    float fx = as_type<float>(x), fy = as_type<float>(y), fz = as_type<float>(z);
    if (!std::strcmp(name, "vec")) {
      float4 v(fx, fy, fz, fx + fy), w(fy, fz, fx, 0.5f), u(fz, fx, fy, 2.0f);
      half4 hv(v), hw(w), hu(u);
      bool ok = same_per_lane(v, w, u, [](auto a, auto, auto) { return sin(a); }) &&
                same_per_lane(v, w, u, [](auto a, auto b, auto) { return pow(a, b); }) &&
                same_per_lane(v, w, u, [](auto a, auto b, auto c) { return fma(a, b, c); }) &&
                same_per_lane(v, w, u, [](auto a, auto b, auto c) { return mix(a, b, c); }) &&
                same_per_lane(v, w, u, [](auto a, auto b, auto c) { return clamp(a, b, c); }) &&
                same_per_lane(v, w, u, [](auto a, auto b, auto) { return fmin(a, b); }) &&
                same_per_lane(hv, hw, hu, [](auto a, auto, auto) { return exp(a); }) &&
                same_per_lane(hv, hw, hu, [](auto a, auto b, auto) { return max(a, b); }) &&
                all(isnan(float4(fx, fy, fz, NAN)) == bool4(isnan(fx), isnan(fy), isnan(fz), true)) &&
                same_per_lane(v, w, u, [](auto a, auto, auto) { return clamp(a, 0.0f, 1.0f); }) &&
                same_per_lane(v, w, u, [](auto a, auto b, auto) { return mix(a, b, 0.25f); }) &&
                same_per_lane(hv, hw, hu, [](auto a, auto b, auto c) { return fma(a, b, c); });
      std::printf("%d\n", ok);
      continue;
    }
    bool found = false;
    for (const Fn& f : fns) {
      if (!std::strcmp(f.name, name)) {
        std::printf("%08x\n", as_type<uint>(f.f(fx, fy, fz)));
        found = true;
      }
    }
    if (!found) std::printf("unknown\n");
  }
}

#include <metal_stdlib>
#include <metal_array>
#include <metal_uniform>
using namespace metal;

// A struct shared with the host: metal::array lays out exactly like T[N].
struct Params {
    array<float, 4> weights;
    array<uint, 2> shape;
};
static_assert(sizeof(Params) == 24, "array layout");

// The taps of a filter, at global scope in constant memory.
constant array<float, 5> kTaps = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

// dot_ref sums a view's elements times weights, walking it with a
// range-based for loop.
float dot_ref(array_ref<float> v, const thread array<float, 5>& w) {
    float s = 0.0f;
    uint k = 0;
    for (float x : v) {
        s += x * w[k++];
    }
    return s;
}

// scaled returns a copy of an array with every element times f (arrays are
// values: the caller's copy is unchanged).
template <typename T, size_t N>
array<T, N> scaled(array<T, N> a, T f) {
    for (size_t k = 0; k < a.size(); k++) {
        a[k] *= f;
    }
    return a;
}

// containers: a 5-tap filter through array_ref views of a thread array,
// the uniform scale and metal::array values and sizes.
kernel void containers(constant Params& p [[buffer(0)]],
                       device const float* x [[buffer(1)]],
                       device float* y [[buffer(2)]],
                       uint i [[thread_position_in_grid]],
                       uint n [[threads_per_grid]]) {
    uniform<uint> len = make_uniform(n);
    array<float, 5> w = kTaps;
    float win[5];
    for (int k = 0; k < 5; k++) {
        win[k] = x[(i + uint(k)) % len];
    }
    array<float, 5> twice = scaled(w, 2.0f);
    device float* o = y + i * 6;
    o[0] = dot_ref(make_array_ref(win), w);
    o[1] = dot_ref(array_ref<float>(win + 1, 3), twice);
    o[2] = p.weights[i % 4] * float(p.shape.back()) + float(p.shape.front());
    o[3] = float(w.size() + twice.max_size()) + (w.empty() ? 1.0f : 0.0f) + w[4];
    o[4] = *(kTaps.end() - 1) + kTaps.data()[1] + make_array_ref(kTaps)[2];
    array<int, 0> none;
    o[5] = float(len) + (none.empty() && none.begin() == none.end() ? 0.5f : 0.0f);
}

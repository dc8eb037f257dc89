package msl

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// largeCounts is what genLarge emitted, to check the parse against.
type largeCounts struct {
	kernels, instantiations, loops, pragmaLoops, barriers, macroUses, tgDecls int
}

// genLarge synthesises a Metal source of at least minLines lines in the
// style of large ML kernel libraries: heavy macros, templates, template
// structs with member functions, function constants, function-pointer
// template parameters, GNU range initialisers, #if branches, lambdas,
// operator(), static_assert, using aliases, namespaces and extern "C".
func genLarge(minLines int) ([]byte, largeCounts) {
	var b bytes.Buffer
	var c largeCounts
	b.WriteString(`#include <metal_stdlib>
using namespace metal;

#define N_SIMDWIDTH 32
#define FOR_UNROLL(x) _Pragma("clang loop unroll(full)") for (x)
#define UNROLL _Pragma("unroll")
#define TG_SYNC() threadgroup_barrier(mem_flags::mem_threadgroup)
#define REDUCE4(v) for (int _r = 0; _r < 4; ++_r) { v += 1; }
#define MAX(a, b) ((a) > (b) ? (a) : (b))

constant bool FC_flag [[function_constant(0)]];
constant int  FC_n    [[function_constant(1)]];

typedef struct { half d; uint8_t qs[16]; } block_q;
using acc_t = float4;

template <typename T> T op_add(T a, T b) { return a + b; }
template <typename T> T op_max(T a, T b) { return MAX(a, b); }
`)
	for u := 0; b.Len() == 0 || strings.Count(b.String(), "\n") < minLines; u++ {
		fmt.Fprintf(&b, `
// ---- unit %[1]d ----
#define BLOCK_%[1]d %[2]d
#define NSG_%[1]d 4
#if BLOCK_%[1]d > 64
#define WIDE_%[1]d 1
#else
#define WIDE_%[1]d 0
#endif
#if 0
Notes for unit %[1]d: don't lex this; it's prose with @ and $ and 'quotes.
#endif

enum class Kind%[1]d : int { A = %[1]d, B, C = 1 << 4 };
static_assert(BLOCK_%[1]d %% 32 == 0, "block size");
constexpr constant int SIZE_%[1]d = BLOCK_%[1]d * 2;

namespace unit%[1]d {
template <typename T, short NR>
struct Acc {
    T sum[NR];
    T operator()(T x) const { return x * sum[0]; }
    void push(short i, T x) {
        UNROLL
        for (short r = 0; r < NR; ++r) { sum[r] += (r == i) ? x : T(0); }
    }
};

extern "C" {
inline float c_helper_%[1]d(float x);
}
}

template <typename T, T (*op)(T, T)>
METAL_FUNC_%[1]d T reduce_%[1]d(threadgroup T* buf, ushort tid) {
    threadgroup T partial[NSG_%[1]d];
    float lut[8] = { [0 ... 7] = 0.0f };
    auto get = [&](int i) -> T { return buf[i] + T(lut[i & 7]); };
#if WIDE_%[1]d
    for (ushort s = BLOCK_%[1]d / 2; s > 0; s >>= 1) {
        if (tid < s) { buf[tid] = op(buf[tid], get(tid + s)); }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
#else
    #pragma clang loop unroll(full)
    for (ushort s = BLOCK_%[1]d / 2; s > 0; s >>= 1) {
        if (tid < s) { buf[tid] = op(buf[tid], get(tid + s)); }
        TG_SYNC();
    }
#endif
    switch (tid %% 3) {
    case 0: { partial[0] = buf[0]; break; }
    default: break;
    }
    return buf[0];
}

kernel void kernel_sum_%[1]d(
        device const float * src [[buffer(0)]],
        device       float * dst [[buffer(1)]],
        constant     int   & n   [[buffer(2)]],
        uint   tgid [[threadgroup_position_in_grid]],
        ushort tid  [[thread_index_in_threadgroup]]) {
    threadgroup float shared[BLOCK_%[1]d];
    threadgroup float4 extra[SIZE_%[1]d / 8][2];
    float acc = 0.0f;
    int i = 0;
    while (i < n) { acc += src[i]; i += BLOCK_%[1]d; }
    do { acc *= 0.5f; } while (acc > 1.0f);
    shared[tid] = acc;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    dst[tgid] = reduce_%[1]d<float, op_add<float>>(shared, tid);
    REDUCE4(acc);
    if (FC_flag) { dst[0] = extra[0][0].x; } else { dst[1] = 0; }
}

template <typename T, short NR>
kernel void kernel_mv_%[1]d(
        device const T * x [[buffer(0)]],
        device       T * y [[buffer(1)]],
        threadgroup  char * shmem [[threadgroup(0)]],
        uint3  tgpig [[threadgroup_position_in_grid]],
        ushort tiisg [[thread_index_in_simdgroup]]) {
    threadgroup T sums[NR][N_SIMDWIDTH];
    unit%[1]d::Acc<T, NR> a;
    FOR_UNROLL(short r = 0; r < NR; ++r) {
        sums[r][tiisg] = x[r * N_SIMDWIDTH + tiisg];
    }
    _Pragma("clang loop unroll(full)")
    for (short r = 0; r < NR; ++r) { a.push(r, sums[r][tiisg]); }
    simdgroup_barrier(mem_flags::mem_none);
    y[tgpig.x] = a(sums[0][0]);
}

typedef decltype(kernel_mv_%[1]d<float, 4>) kernel_mv_%[1]d_t;
template [[host_name("kernel_mv_%[1]d_f32")]] kernel kernel_mv_%[1]d_t kernel_mv_%[1]d<float, 4>;
template [[host_name("kernel_mv_%[1]d_f16")]] kernel decltype(kernel_mv_%[1]d<half, 2>) kernel_mv_%[1]d<half, 2>;
`, u, 32*(1+u%4))
		c.kernels += 2
		c.instantiations += 2
		// Loops per unit: Acc::push 1, reduce 2 (both #if branches are
		// lexed when the condition is undecided; here it is decided, so 1),
		// kernel_sum while+do, kernel_mv 1 (+1 hidden in FOR_UNROLL).
		c.loops += 1 + 1 + 2 + 1
		c.pragmaLoops += 1 + 1 // push, kernel_mv second loop
		c.barriers += 1 + 1    // kernel_sum, kernel_mv simdgroup
		c.macroUses += 2       // REDUCE4, FOR_UNROLL
		c.tgDecls += 3 + 1     // kernel_sum (+reduce's partial), kernel_mv
		if 32*(1+u%4) > 64 {
			c.barriers++ // the WIDE branch's barrier
		} else {
			c.pragmaLoops++
			c.macroUses++ // TG_SYNC
		}
	}
	// The METAL_FUNC_* qualifiers are defined once at the top.
	var defs bytes.Buffer
	for u := 0; strings.Contains(b.String(), fmt.Sprintf("METAL_FUNC_%d ", u)); u++ {
		fmt.Fprintf(&defs, "#define METAL_FUNC_%d inline __attribute__((always_inline))\n", u)
	}
	return append(defs.Bytes(), b.Bytes()...), c
}

// enumerate does what a mutation pass and a threadgroup check do with a file.
func enumerate(f *File) (c largeCounts, err error) {
	c.instantiations = len(f.Instantiations)
	for _, fn := range f.Funcs {
		if fn.Body == nil {
			continue
		}
		Walk(fn.Body, func(s Stmt) bool {
			switch s := s.(type) {
			case *For:
				c.loops++
				if len(s.Pragmas) > 0 {
					c.pragmaLoops++
				}
			case *While:
				c.loops++
				if len(s.Pragmas) > 0 {
					c.pragmaLoops++
				}
			case *Do:
				c.loops++
			case *Barrier:
				c.barriers++
			case *MacroUse:
				c.macroUses++
			}
			return true
		})
	}
	for _, k := range f.Kernels() {
		c.kernels++
		m, err := ThreadgroupMemory(f, k.Name, Env{})
		if err != nil {
			return c, err
		}
		c.tgDecls += len(m.Decls)
	}
	return c, nil
}

func TestParseLarge(t *testing.T) {
	src, want := genLarge(10000)
	if n := bytes.Count(src, []byte("\n")); n < 10000 {
		t.Fatalf("generated %d lines, want 10000+", n)
	}
	f, err := Parse("large.metal", src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	checkSpans(t, f)
	got, err := enumerate(f)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("counts\n got %+v\nwant %+v", got, want)
	}
	// Every plain kernel's memory is known, template helpers included.
	for _, k := range f.Kernels() {
		if k.Template != nil {
			continue
		}
		m, err := ThreadgroupMemory(f, k.Name, Env{})
		if err != nil {
			t.Fatal(err)
		}
		if !m.Known || len(m.Decls) != 3 {
			t.Errorf("%s: want 3 known declarations: %s", k.Name, render(m))
		}
	}
	// Every instantiation resolves, with its template arguments bound.
	for _, in := range f.Instantiations {
		m, err := ThreadgroupMemory(f, in.HostName, Env{})
		if err != nil {
			t.Fatal(err)
		}
		if !m.Known || m.Total == 0 {
			t.Errorf("%s: threadgroup memory unknown or zero: %s", in.HostName, render(m))
		}
	}
}

func BenchmarkParseLarge(b *testing.B) {
	src, _ := genLarge(10000)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for b.Loop() {
		f, err := Parse("large.metal", src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := enumerate(f); err != nil {
			b.Fatal(err)
		}
	}
}

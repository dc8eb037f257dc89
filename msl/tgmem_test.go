package msl

import (
	"fmt"
	"github.com/rogpeppe/go-internal/txtar"
	"strings"
	"testing"
)

const tgSrc = `
#define TILE 32
constant int NSG = 4;
struct Pair { float a; half b; };

void leaf(threadgroup float* p) {
    threadgroup uint flags[NSG];
    p[0] = 0;
}

float mid(float x) {
    threadgroup Pair pairs[2];
    leaf(nullptr);
    return x;
}

kernel void plain(device float* out [[buffer(0)]],
                  threadgroup float* dyn [[threadgroup(0)]],
                  threadgroup half4* dyn2 [[ threadgroup(TILE / 16) ]],
                  uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float a[TILE][2];
    threadgroup half b[3];
    threadgroup float4 c, d[2];
    out[tid] = mid(a[0][0]);
}

template <typename T, int N>
kernel void tmpl(device T* out [[buffer(0)]]) {
    threadgroup T buf[N];
    threadgroup T* ptr;
    out[0] = buf[0];
}

template [[host_name("tmpl_h128")]] kernel void tmpl<half, 128>(device half*);

kernel void dynamic(device float* out, constant uint& n) {
    threadgroup float good[16];
    threadgroup float bad[n];
    threadgroup simdgroup_float8x8 m;
}

[[host_name("renamed")]] kernel void hn() {
    threadgroup char c[EXTRA];
}
`

// render prints a TGMem compactly for comparison.
func render(m *TGMem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "total=%d known=%v", m.Total, m.Known)
	for _, d := range m.Decls {
		if d.Known {
			fmt.Fprintf(&b, " %s.%s:%s@%d+%d/%d", d.Func, d.Name, d.FullType(), d.Offset, d.Size, d.Align)
		} else {
			fmt.Fprintf(&b, " %s.%s:%s?(%s)", d.Func, d.Name, d.FullType(), d.Why)
		}
	}
	for _, h := range m.HostSet {
		fmt.Fprintf(&b, " host[%d]=%s:%s", h.Index, h.Name, h.Type)
	}
	return b.String()
}

func TestThreadgroupMemory(t *testing.T) {
	f, err := Parse("tg.metal", []byte(tgSrc))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		kernel string
		env    Env
		want   string
	}{
		{"plain", Env{},
			"total=352 known=true plain.a:float[32][2]@0+256/4 plain.b:half[3]@256+6/2 plain.c:float4@272+16/16 plain.d:float4[2]@288+32/16" +
				" mid.pairs:Pair[2]@320+16/4 leaf.flags:uint[4]@336+16/4 host[0]=dyn:float* host[2]=dyn2:half4*"},
		{"tmpl_h128", Env{}, "total=256 known=true tmpl.buf:half[128]@0+256/2"},
		{"tmpl", Env{TemplateArgs: map[string]string{"T": "float", "N": "3"}}, "total=16 known=true tmpl.buf:float[3]@0+12/4"},
		{"tmpl", Env{}, "total=0 known=false tmpl.buf:T[N]?(unknown size of type T (template parameter of tmpl not bound))"},
		{"dynamic", Env{}, "total=64 known=false dynamic.good:float[16]@0+64/4 dynamic.bad:float[n]?(cannot evaluate array dimension n) dynamic.m:simdgroup_float8x8?(unknown size of type simdgroup_float8x8)"},
		{"renamed", Env{Defines: map[string]string{"EXTRA": "5"}}, "total=16 known=true hn.c:char[5]@0+5/1"},
		{"hn", Env{}, "total=0 known=false hn.c:char[EXTRA]?(cannot evaluate array dimension EXTRA)"},
	}
	for _, tt := range tests {
		t.Run(tt.kernel, func(t *testing.T) {
			m, err := ThreadgroupMemory(f, tt.kernel, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(m); got != tt.want {
				t.Errorf("ThreadgroupMemory(%s)\n got %s\nwant %s", tt.kernel, got, tt.want)
			}
		})
	}
	if _, err := ThreadgroupMemory(f, "nope", Env{}); err == nil || err.Error() != `kernel "nope" not found` {
		t.Errorf("ThreadgroupMemory(nope) error = %v", err)
	}
}

// TestThreadgroupMemoryFlash sizes the kernel of the flash golden file:
// Qs 8*128 halves, four 8*32 float partial buffers and a 128-float
// reduction buffer; the alias P is a pointer, not an allocation.
func TestThreadgroupMemoryFlash(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/parse/flash.txtar")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("flash.metal", ar.Files[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ThreadgroupMemory(f, "qsa_flash", Env{})
	if err != nil {
		t.Fatal(err)
	}
	want := "total=6656 known=true qsa_flash.Qs:half[1024]@0+2048/2 qsa_flash.S0:float[256]@2048+1024/4 qsa_flash.S1:float[256]@3072+1024/4" +
		" qsa_flash.S2:float[256]@4096+1024/4 qsa_flash.S3:float[256]@5120+1024/4 qsa_flash.red:float[128]@6144+512/4 host[0]=dyn:float*"
	if got := render(m); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestEntry(t *testing.T) {
	f, err := Parse("tg.metal", []byte(tgSrc))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, fn, targs, err string }{
		{"plain", "plain", "map[]", ""},
		{"tmpl_h128", "tmpl", "map[N:128 T:half]", ""},
		{"renamed", "hn", "map[]", ""},
		{"leaf", "leaf", "map[]", ""},
		{"missing", "", "", `kernel "missing" not found`},
	}
	for _, tt := range tests {
		fn, targs, err := f.Entry(tt.name)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("Entry(%s) error = %v, want %s", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Entry(%s): %v", tt.name, err)
			continue
		}
		if fn.Name != tt.fn || fmt.Sprint(targs) != tt.targs {
			t.Errorf("Entry(%s) = %s %v, want %s %s", tt.name, fn.Name, targs, tt.fn, tt.targs)
		}
	}
	var nilFile *File
	if _, _, err := nilFile.Entry("x"); err == nil {
		t.Error("Entry on a nil File succeeded")
	}
	// An Env with a Func but no File must not panic.
	if _, ok := (&Env{Func: f.Func("plain")}).Eval("TILE"); ok {
		t.Error("Eval without a File resolved a file macro")
	}
}

// TestParseWithDefines checks that -D defines decide #if branches, so that
// threadgroup memory counts only the active declaration.
func TestParseWithDefines(t *testing.T) {
	src := []byte(`kernel void k() {
#if defined(FAST) && FAST > 1
    threadgroup float a[64];
#else
    threadgroup float a[128];
#endif
}
`)
	tests := []struct {
		defines map[string]string
		want    int64
	}{
		{nil, 256 + 512}, // undecided: both branches count
		{map[string]string{"FAST": "2"}, 256},
		{map[string]string{"FAST": ""}, 512},
	}
	for _, tt := range tests {
		f, err := ParseWith("d.metal", src, tt.defines)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ThreadgroupMemory(f, "k", Env{Defines: tt.defines})
		if err != nil {
			t.Fatal(err)
		}
		if !m.Known || m.Total != tt.want {
			t.Errorf("defines %v: %s, want total %d", tt.defines, render(m), tt.want)
		}
	}
}

// TestThreadgroupMemoryTemplateHelpers checks that explicit template
// arguments at call sites bind a helper's parameters, that each distinct
// instantiation is counted, and that recursion through templates ends.
func TestThreadgroupMemoryTemplateHelpers(t *testing.T) {
	src := []byte(`
template <typename T, int N>
T red(T x) {
    threadgroup T scratch[N];
    return scratch[0] + x;
}
template <typename T>
T deduced(T x) {
    threadgroup T buf[2];
    return buf[0];
}
template <int N>
int rec(int x) { threadgroup int r[N + 1]; return rec<N + 1>(x); }

template <typename T>
kernel void k(device T* out) {
    out[0] = red<T, 16>(out[0]) + red<float, 4>(1.0f) + red<T, 16>(out[1]);
    out[1] = deduced(out[0]);
}
template [[host_name("k_h")]] kernel void k<half>(device half*);
kernel void r() { rec<0>(1); }
`)
	f, err := Parse("t.metal", src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ThreadgroupMemory(f, "k_h", Env{})
	if err != nil {
		t.Fatal(err)
	}
	want := "total=48 known=false red.scratch:half[16]@0+32/2 red.scratch:float[4]@32+16/4 deduced.buf:T[2]?(unknown size of type T (template parameter of deduced not bound))"
	if got := render(m); got != want {
		t.Errorf("k_h:\n got %s\nwant %s", got, want)
	}
	m, err = ThreadgroupMemory(f, "r", Env{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Decls); n != maxInsts-1 {
		t.Errorf("recursive template: %d decls, want %d", n, maxInsts-1)
	}
}

// TestThreadgroupMemoryPointers checks that pointer and reference
// declarators into threadgroup memory allocate nothing, wherever they sit in
// a declaration.
func TestThreadgroupMemoryPointers(t *testing.T) {
	src := `kernel void k(device float *o [[buffer(0)]]) {
    threadgroup float a[4], *p, b[2];
    threadgroup float *q, c;
    threadgroup float &r = a[0];
    threadgroup float (*pa)[4] = nullptr;
    threadgroup float /* note */ * s;
    threadgroup float * const cp = a;
}
`
	f, err := Parse("p.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ThreadgroupMemory(f, "k", Env{})
	if err != nil {
		t.Fatal(err)
	}
	want := "total=32 known=true k.a:float[4]@0+16/4 k.b:float[2]@16+8/4 k.c:float@24+4/4"
	if got := render(m); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

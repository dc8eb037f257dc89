package msl

import (
	"fmt"
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
			fmt.Fprintf(&b, " %s.%s:%s@%d+%d/%d", d.Func, d.Name, d.Type, d.Offset, d.Size, d.Align)
		} else {
			fmt.Fprintf(&b, " %s.%s:?(%s)", d.Func, d.Name, d.Why)
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
			"total=352 known=true plain.a:float@0+256/4 plain.b:half@256+6/2 plain.c:float4@272+16/16 plain.d:float4@288+32/16" +
				" mid.pairs:Pair@320+16/4 leaf.flags:uint@336+16/4 host[0]=dyn:float* host[2]=dyn2:half4*"},
		{"tmpl_h128", Env{}, "total=272 known=true tmpl.buf:T@0+256/2 tmpl.ptr:T*@256+8/8"},
		{"tmpl", Env{TemplateArgs: map[string]string{"T": "float", "N": "3"}}, "total=32 known=true tmpl.buf:T@0+12/4 tmpl.ptr:T*@16+8/8"},
		{"tmpl", Env{}, "total=16 known=false tmpl.buf:?(unknown size of type T) tmpl.ptr:T*@0+8/8"},
		{"dynamic", Env{}, "total=64 known=false dynamic.good:float@0+64/4 dynamic.bad:?(cannot evaluate array dimension n) dynamic.m:?(unknown size of type simdgroup_float8x8)"},
		{"renamed", Env{Defines: map[string]string{"EXTRA": "5"}}, "total=16 known=true hn.c:char@0+5/1"},
		{"hn", Env{}, "total=0 known=false hn.c:?(cannot evaluate array dimension EXTRA)"},
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

package ref_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"metalab/backend"
	"metalab/msl"
)

// TestThreadgroupMemory compiles every qsa entry point and checks its
// static threadgroup memory against the budget the kernels are designed
// for: at most the 16 KiB limit, and for qsa_flash between 6 and 9 KiB so
// that splitting its partial score buffers still fits below the limit. The
// size computed from the source must agree with the compiled program's.
func TestThreadgroupMemory(t *testing.T) {
	b := cpuBackend(t)
	entries := map[string][]string{
		"qsa_prompt.metal": {"qsa_flash", "qsa_score", "qsa_attn_part", "qsa_merge"},
		"qsa_prep.metal":   {"qsa_prep", "qsa_pool"},
	}
	for file, names := range entries {
		path := filepath.Join(kernelsDir(), file)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := msl.Parse(path, text)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			p, err := b.Compile(context.Background(), backend.Source{
				Name: path, Text: text, Dir: filepath.Dir(path), Entry: name,
				Constants: map[string]backend.Value{"COOP_K4": {Type: "bool", Bits: 1}},
			})
			if err != nil {
				t.Fatalf("compile %s: %v", name, err)
			}
			n := p.ThreadgroupMemory()
			p.Close()
			t.Logf("%s: %d bytes of static threadgroup memory", name, n)
			m, err := msl.ThreadgroupMemory(f, name, msl.Env{})
			if err != nil {
				t.Fatalf("msl: %v", err)
			}
			if !m.Known || m.Total != int64(n) {
				t.Errorf("%s: source says %d bytes (known %v), the compiled program %d", name, m.Total, m.Known, n)
			}
			if n > 16384 {
				t.Errorf("%s: %d bytes of threadgroup memory, over the 16 KiB limit", name, n)
			}
			if name == "qsa_flash" && (n < 6*1024 || n > 9*1024) {
				t.Errorf("qsa_flash: %d bytes of threadgroup memory, want 6..9 KiB", n)
			}
		}
	}
}

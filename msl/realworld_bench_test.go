package msl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParseFile parses and enumerates a real Metal source named by
// METALAB_PARSE_FILE, the way BenchmarkParseLarge does a synthetic one, so
// that parse speed can be measured on files too large or too foreign to
// keep in the repository. METALAB_PARSE_INCLUDES names its -I directories,
// separated like PATH; the file's own directory is searched first.
func BenchmarkParseFile(b *testing.B) {
	name := os.Getenv("METALAB_PARSE_FILE")
	if name == "" {
		b.Skip("set METALAB_PARSE_FILE to a .metal file to benchmark parsing it")
	}
	src, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{ReadFile: os.ReadFile}
	if dirs := os.Getenv("METALAB_PARSE_INCLUDES"); dirs != "" {
		opts.IncludeDirs = filepath.SplitList(dirs)
	}
	f, err := ParseOptions(name, src, opts)
	if err != nil {
		b.Fatalf("Parse: %v", err)
	}
	for _, in := range f.Includes {
		if in.File != nil {
			b.Logf("header %s: %d bytes", in.Path, len(in.File.Src))
		}
	}
	c, err := enumerate(f)
	if err != nil {
		b.Fatalf("enumerate: %v", err)
	}
	b.Logf("%s: %d bytes, %+v", name, len(src), c)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for b.Loop() {
		f, err := ParseOptions(name, src, opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := enumerate(f); err != nil {
			b.Fatal(err)
		}
	}
}

// genHeaders synthesises the two headers of a ggml-style library: block
// formats with static_asserts and lookup tables (common.h), and tuning
// macros, function constant indices and kernel argument structs (impl.h),
// of about 1,800 and 700 lines.
func genHeaders() map[string]string {
	var common, impl strings.Builder
	common.WriteString("#ifndef COMMON_DECL\n#if defined(COMMON_DECL_METAL)\n#include <metal_stdlib>\ntypedef half ggml_half;\n#define COMMON_DECL\n#endif\n#if defined(COMMON_DECL)\n")
	for i := 0; strings.Count(common.String(), "\n") < 1800; i++ {
		fmt.Fprintf(&common, `
#define QK_%[1]d %[2]d
typedef struct {
    ggml_half d;          // delta
    ggml_half m;          // min
    uint8_t qs[QK_%[1]d / 2]; // nibbles
} block_q%[1]d;
static_assert(sizeof(block_q%[1]d) == 2 * sizeof(ggml_half) + QK_%[1]d / 2, "wrong block size");
constexpr constant uint8_t kmask_%[1]d[8] = {
    1, 2, 4, 8, 16, 32, 64, 128,
};
`, i, 32*(1+i%4))
	}
	common.WriteString("#endif\n#endif\n")
	impl.WriteString("#ifndef IMPL_H\n#define IMPL_H\n#define N_SIMDWIDTH_H 32\n#define FOR_UNROLL_H(x) _Pragma(\"clang loop unroll(full)\") for (x)\n")
	for i := 0; strings.Count(impl.String(), "\n") < 700; i++ {
		fmt.Fprintf(&impl, `
#define N_R0_%[1]d 4
#define N_SG_%[1]d 2
#define FC_OP_%[1]d %[2]d
typedef struct {
    int32_t  ne00;
    int32_t  ne01;
    uint64_t nb01;
    uint64_t nb02;
    float    eps;
} kargs_%[1]d;
`, i, 100*i)
	}
	impl.WriteString("#endif\n")
	return map[string]string{"inc/common.h": common.String(), "inc/impl.h": impl.String()}
}

// largeWithHeaders is genLarge(12000) including the generated headers
// the way ggml-metal.metal includes its two.
func largeWithHeaders() ([]byte, map[string]string) {
	src, _ := genLarge(12000)
	head := "#define COMMON_DECL_METAL\n#include \"common.h\"\n#include \"impl.h\"\n"
	return append([]byte(head), src...), genHeaders()
}

// TestParseWithHeaders checks the benchmark's input: both headers read,
// their sizes known to the file, nothing lost.
func TestParseWithHeaders(t *testing.T) {
	src, files := largeWithHeaders()
	f, err := ParseOptions("large.metal", src, Options{IncludeDirs: []string{"inc"}, ReadFile: memFS(files)})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Includes) != 3 || f.Includes[0].File == nil || f.Includes[1].File == nil || !f.Includes[2].Metal {
		t.Fatalf("includes = %+v", f.Includes)
	}
	env := &Env{File: f}
	if s, _, ok := env.Layout("block_q3"); !ok || s != 2+2+64 {
		t.Errorf("sizeof block_q3 = %d, %v", s, ok)
	}
	if v, ok := env.Eval("FC_OP_5 + N_R0_5"); !ok || v != 504 {
		t.Errorf("FC_OP_5 + N_R0_5 = %d, %v", v, ok)
	}
	if len(f.Warnings) != 0 {
		t.Errorf("warnings: %v", f.Warnings[:min(3, len(f.Warnings))])
	}
}

// BenchmarkParseIncludes parses and enumerates a 12,000-line ggml-style
// file with its two generated headers (about 2,500 lines more), the
// front end's work for one command on such a library.
func BenchmarkParseIncludes(b *testing.B) {
	src, files := largeWithHeaders()
	opts := Options{IncludeDirs: []string{"inc"}, ReadFile: memFS(files)}
	n := len(src)
	for _, h := range files {
		n += len(h)
	}
	b.SetBytes(int64(n))
	b.ResetTimer()
	for b.Loop() {
		f, err := ParseOptions("large.metal", src, opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := enumerate(f); err != nil {
			b.Fatal(err)
		}
	}
}

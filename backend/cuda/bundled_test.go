package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/msl"
	"metalab/spec"
)

// The bundled kernels: every entry point metalab ships a kernel or a spec
// for, as the cuda backend compiles it. The compile tests (nvcc, no GPU)
// and the parity test (a GPU) share this list.

// root is the repository root, from this package's directory.
const root = "../.."

// bundledSpecs are the specs of the bundled kernels, relative to root.
var bundledSpecs = []string{
	"kernels/qsa_prompt.yaml",
	"kernels/qsa_prep.yaml",
	"kernels/examples/ggml/ggml-ops.yaml",
	"kernels/examples/mlx/kernels.yaml",
	"kernels/examples/candle/candle-ops.yaml",
	"kernels/examples/mfa/attention.yaml",
	"kernels/examples/tensor/matmul2d.yaml",
	"kernels/examples/trust/ggml_norm.yaml",
	"kernels/examples/trust/histogram.yaml",
	"kernels/examples/trust/layer_norm.yaml",
	"kernels/examples/trust/simd_slices.yaml",
	"kernels/examples/trust/softmax.yaml",
	"kernels/examples/trust/tree.yaml",
}

// bundledSources are the bundled kernel sources without a spec, relative
// to root: each of their entry points is compiled with no defines.
var bundledSources = []string{"kernels/example.metal"}

// conformanceDir holds the cpu backend's conformance kernels.
const conformanceDir = "backend/cpu/conformance/testdata"

// cudaUnsupported are the conformance kernels the cuda backend does not
// compile, each with the reason. TestCompileBundled fails when one of them
// compiles after all (the list is then stale) or when another fails.
var cudaUnsupported = map[string]string{
	"limits.metal softmax_f16": "Limits<half>::min, a static constexpr data member of class type (half is a class in the prelude), " +
		"is bound to a reference in device code (a conditional's lvalue, a const& argument): CUDA gives a static data " +
		"member no device copy and no memory space may be declared on one, so nvcc calls it undefined in device code",
}

// A bundledKernel is one entry point of a bundled kernel in one
// configuration (its function constants and defines).
type bundledKernel struct {
	name    string // spec or file, entry and configuration: "qsa_prompt.yaml qsa_flash COOP_K4=false"
	src     backend.Source
	threads int // the most threads per threadgroup its spec dispatches, 0 without a spec
}

// sourceTGMem is msl's estimate of the kernel's static threadgroup
// memory, as check reports it: the declarations in order, each aligned,
// the total rounded up to 16 bytes.
func (k bundledKernel) sourceTGMem() (*msl.TGMem, error) {
	f, err := msl.ParseOptions(k.src.Name, k.src.Text, msl.Options{Defines: k.src.Defines, IncludeDirs: append([]string{k.src.Dir}, k.src.IncludeDirs...), ReadFile: os.ReadFile})
	if err != nil {
		return nil, err
	}
	return msl.ThreadgroupMemory(f, k.src.Entry, msl.Env{File: f, Defines: k.src.Defines})
}

// configKey names a configuration: its constants and defines, sorted.
func configKey(consts map[string]backend.Value, defines map[string]string) string {
	var keys []string
	for k, v := range consts {
		val := fmt.Sprintf("%#x", v.Bits)
		if v.Type == "bool" {
			val = fmt.Sprint(v.Bits != 0)
		}
		keys = append(keys, k+"="+val)
	}
	for k, v := range defines {
		keys = append(keys, "-D"+k+"="+v)
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

// specKernels returns the entry points of a spec, one per configuration
// its case sets use, and the other entry points of its sources, in the
// first configuration (no stage runs them: threads is 0).
func specKernels(t testing.TB, path string) []bundledKernel {
	t.Helper()
	s, err := spec.Load(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := s.Cases()
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*bundledKernel{}
	var order []string
	for _, c := range cases {
		in, err := s.Instantiate(c)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, st := range in.Stages {
			key := st.Source + "\x00" + st.Entry + "\x00" + configKey(st.Constants, st.Defines)
			k := byKey[key]
			if k == nil {
				text, err := os.ReadFile(st.Source)
				if err != nil {
					t.Fatal(err)
				}
				name := filepath.Base(path) + " " + st.Entry
				if cfg := configKey(st.Constants, st.Defines); cfg != "" {
					name += " " + cfg
				}
				k = &bundledKernel{name: name, src: backend.Source{
					Name: st.Source, Text: text, Dir: filepath.Dir(st.Source), IncludeDirs: st.IncludeDirs,
					Entry: st.Entry, Defines: st.Defines, Constants: st.Constants,
				}}
				byKey[key] = k
				order = append(order, key)
			}
			k.threads = max(k.threads, st.Threads.Count())
		}
	}
	var out []bundledKernel
	entries := map[string]bool{}
	var sources []bundledKernel // the first configuration of each source
	for _, key := range order {
		k := *byKey[key]
		out = append(out, k)
		if !entries[k.src.Name] {
			sources = append(sources, k)
		}
		entries[k.src.Name] = true
		entries[k.src.Name+"\x00"+k.src.Entry] = true
	}
	// The entry points no stage runs (candle's macros make more kernels
	// than its spec uses), in the sources' first configuration.
	for _, k := range sources {
		f, err := msl.ParseOptions(k.src.Name, k.src.Text, msl.Options{Defines: k.src.Defines,
			IncludeDirs: append([]string{k.src.Dir}, k.src.IncludeDirs...), ReadFile: os.ReadFile})
		if f == nil {
			t.Fatalf("%s: %v", k.src.Name, err)
		}
		for _, ep := range f.EntryPoints() {
			if entries[k.src.Name+"\x00"+ep.Name] || ep.Func.Template != nil && ep.Inst == nil {
				continue
			}
			entries[k.src.Name+"\x00"+ep.Name] = true
			src := k.src
			src.Entry = ep.Name
			out = append(out, bundledKernel{name: filepath.Base(path) + " " + ep.Name + " (no stage)", src: src})
		}
	}
	return out
}

// fileKernels returns every entry point of a .metal file, with no defines.
func fileKernels(t testing.TB, path string) []bundledKernel {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := msl.ParseOptions(path, text, msl.Options{ReadFile: os.ReadFile})
	if f == nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []bundledKernel
	for _, ep := range f.EntryPoints() {
		if ep.Func.Template != nil && ep.Inst == nil {
			continue // a template kernel with no instantiation: no entry point
		}
		out = append(out, bundledKernel{name: filepath.Base(path) + " " + ep.Name,
			src: backend.Source{Name: path, Text: text, Dir: filepath.Dir(path), Entry: ep.Name}})
	}
	return out
}

// bundledKernels lists every bundled entry point: the specs' (with each
// configuration their case sets use), the sources' without a spec, and,
// with conformance set, the cpu backend's conformance kernels.
func bundledKernels(t testing.TB, conformance bool) []bundledKernel {
	t.Helper()
	var all []bundledKernel
	staged := map[string]bool{}
	for _, p := range bundledSpecs {
		for _, k := range specKernels(t, p) {
			all = append(all, k)
			if k.threads > 0 {
				staged[k.src.Name+"\x00"+k.src.Entry] = true
			}
		}
	}
	var out []bundledKernel
	for _, k := range all {
		if k.threads == 0 && staged[k.src.Name+"\x00"+k.src.Entry] {
			continue // another spec runs it
		}
		out = append(out, k)
	}
	for _, p := range bundledSources {
		out = append(out, fileKernels(t, filepath.Join(root, p))...)
	}
	if conformance {
		files, err := filepath.Glob(filepath.Join(root, conformanceDir, "*.metal"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			out = append(out, fileKernels(t, f)...)
		}
	}
	return out
}

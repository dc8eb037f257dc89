package cuda

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"metalab/backend"
	"metalab/internal/testenv"
)

// The tests in this file compile every bundled kernel through the
// backend's own path (translate, then nvcc with KernelFlags into the
// compile cache) for testArch(), and read the objects: they need nvcc,
// not a GPU.

// buildArch is the architecture the tests build for: the GPU's when the
// backend has found one (the objects Compile loads), else testArch().
func buildArch(b *Backend) string {
	if b.arch != "" {
		return b.arch
	}
	return testArch()
}

// build translates and compiles k, as Compile does before loading.
func build(t *testing.T, b *Backend, k bundledKernel) (string, error) {
	t.Helper()
	return b.Build(context.Background(), k.src, buildArch(b))
}

// TestCompileBundled compiles every bundled kernel for the GPU: the
// specs' entry points in every configuration their case sets use, the
// kernels without a spec, and the cpu backend's conformance kernels but
// those cudaUnsupported lists (which must still fail, with a compile
// error: a kernel that compiles is taken off the list).
func TestCompileBundled(t *testing.T) {
	b := toolBackend(t, Options{})
	ks := bundledKernels(t, true)
	seen := map[string]bool{}
	for _, k := range ks {
		seen[k.name] = true
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			_, err := build(t, b, k)
			if why, ok := cudaUnsupported[k.name]; ok {
				var f *backend.Failure
				if !errors.As(err, &f) || f.Kind != backend.CompileError {
					t.Fatalf("listed as unsupported (%s), but Build = %v: take it off cudaUnsupported", why, err)
				}
				t.Logf("unsupported, as expected: %s\n%s", why, f.Msg)
				return
			}
			if err != nil {
				var f *backend.Failure
				if errors.As(err, &f) {
					t.Fatalf("%s\n%s", f.Msg, f.Log)
				}
				t.Fatal(err)
			}
		})
	}
	for name := range cudaUnsupported {
		if !seen[name] {
			t.Errorf("cudaUnsupported lists %q, which is no bundled kernel", name)
		}
	}
	t.Logf("%d kernels", len(ks))
}

// resources are what the compiled entry uses, as cuobjdump reads them
// from the object: what cudaFuncGetAttributes reports on the GPU.
type resources struct {
	regs, shared, local int
}

var entryUsage = regexp.MustCompile(`Function mtl_entry_0:\s*\n\s*REG:(\d+) STACK:\d+ SHARED:(\d+) LOCAL:(\d+)`)

// objectResources reads the resources of the object's entry with
// cuobjdump --dump-resource-usage.
func objectResources(t *testing.T, b *Backend, so string) resources {
	t.Helper()
	tool, err := exec.LookPath("cuobjdump")
	if err != nil {
		tool = filepath.Join(filepath.Dir(b.nvcc[0]), "cuobjdump")
	}
	out, err := exec.Command(tool, "--dump-resource-usage", so).CombinedOutput()
	if err != nil {
		testenv.Optional(t, "nvcc", fmt.Sprintf("cuobjdump --dump-resource-usage: %v (it comes with the CUDA toolkit)\n%s", err, out))
	}
	m := entryUsage.FindSubmatch(out)
	if m == nil {
		t.Fatalf("cuobjdump names no mtl_entry_0 in %s:\n%s", so, out)
	}
	atoi := func(b []byte) int { n, _ := strconv.Atoi(string(b)); return n }
	return resources{regs: atoi(m[1]), shared: atoi(m[2]), local: atoi(m[3])}
}

// A tableKernel is one kernel of an object's table, as `runner -tables`
// prints it: what the runner reports at LOAD without a GPU.
type tableKernel struct {
	name                string
	maxThreads, layout  int
	tgMem, slots, nbufs int
}

var tableLine = regexp.MustCompile(`^kernel (\S+) max_threads (\d+) tg_layout (\d) threadgroup_memory (\d+) slots (\d+) buffers (\d+)$`)

var runnerOnce struct {
	sync.Once
	path string
	err  error
}

// objectTables runs the runner's -tables on so.
func objectTables(t *testing.T, b *Backend, so string) []tableKernel {
	t.Helper()
	runnerOnce.Do(func() { runnerOnce.path, runnerOnce.err = b.buildRunner(context.Background()) })
	if runnerOnce.err != nil {
		t.Fatal(runnerOnce.err)
	}
	out, err := exec.Command(runnerOnce.path, "-tables", so).CombinedOutput()
	if err != nil {
		t.Fatalf("runner -tables %s: %v\n%s", so, err, out)
	}
	var ks []tableKernel
	for _, line := range strings.Split(string(out), "\n") {
		m := tableLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		ks = append(ks, tableKernel{name: m[1], maxThreads: n(2), layout: n(3), tgMem: n(4), slots: n(5), nbufs: n(6)})
	}
	return ks
}

// blockRegisters is how many registers a block of threads needs at regs
// per thread on sm_70 and later: whole warps, each allocated in units of
// 256 registers.
func blockRegisters(regs, threads int) int {
	warps := (threads + 31) / 32
	return warps * ((regs*32 + 255) / 256 * 256)
}

// maxBlockRegisters is the register file a block may use (64K on every
// architecture since sm_50).
const maxBlockRegisters = 65536

// reservedShared is the shared memory a compiled object of arch counts in
// its entry's static shared memory beyond the kernel's declarations: from
// sm_90 on, ptxas places a kernel's shared memory after a 1 KiB region the
// system reserves, and the object's .nv.shared section (what cuobjdump
// reports) covers it; ptxas -v and older architectures leave it out. A
// kernel that touches no shared memory has no section, and no reserve.
func reservedShared(arch string, shared int) int {
	n, err := strconv.Atoi(strings.TrimPrefix(arch, "sm_"))
	if err != nil || n < 90 || shared == 0 {
		return 0
	}
	return 1024
}

// unusedStorage are the bundled kernels that declare threadgroup storage
// they never touch, which nvcc drops (Metal may too): their static shared
// memory is below the declarations' sizes.
var unusedStorage = map[string]string{
	"kernels.yaml gemv_float32_bm1_tm4": "MLX's gemv declares tgp_memory[1] when BM is 1 and reads it only when BM > 1",
}

// A tgFigures is the static threadgroup memory of a kernel, four ways.
type tgFigures struct {
	msl       int64 // msl's estimate: Metal's rule over the source's declarations
	sum       int   // the declarations' sizes
	padded    bool  // Metal's layout pads between declarations or rounds the total
	metal     int   // ThreadgroupMemory: Metal's rule over the TU's slot table (runner -tables)
	nvcc      int   // the object's static shared memory (cuobjdump), its reserve taken off
	reserved  int   // the part of the object's figure the system reserves (reservedShared)
	regs      int   // registers per thread
	spill     int   // local memory per thread
	tableOK   bool  // the table lays out every declaration
	tableDecl int   // slots in the table
}

// figures compiles k and measures its threadgroup memory.
func figures(t *testing.T, b *Backend, k bundledKernel) tgFigures {
	t.Helper()
	so, err := build(t, b, k)
	if err != nil {
		var f *backend.Failure
		if errors.As(err, &f) {
			t.Fatalf("%s\n%s", f.Msg, f.Log)
		}
		t.Fatal(err)
	}
	m, err := k.sourceTGMem()
	if err != nil || !m.Known {
		t.Fatalf("msl's estimate: %+v, %v", m, err)
	}
	fg := tgFigures{msl: m.Total, padded: m.Declared%16 != 0}
	for _, d := range m.Decls {
		if d.Offset != int64(fg.sum) {
			fg.padded = true
		}
		fg.sum += int(d.Size)
	}
	res := objectResources(t, b, so)
	fg.reserved = reservedShared(buildArch(b), res.shared)
	fg.nvcc, fg.regs, fg.spill = res.shared-fg.reserved, res.regs, res.local
	tables := objectTables(t, b, so)
	if len(tables) != 1 || tables[0].name != k.src.Entry {
		t.Fatalf("runner -tables: %+v, want one kernel %s", tables, k.src.Entry)
	}
	fg.metal, fg.tableOK, fg.tableDecl = tables[0].tgMem, tables[0].layout == 1, tables[0].slots
	if fg.tableDecl != len(m.Decls) || !fg.tableOK {
		t.Errorf("the table lays out %d slots (every declaration: %v), msl %d declarations", fg.tableDecl, fg.tableOK, len(m.Decls))
	}
	return fg
}

// check holds the figures to one another: ThreadgroupMemory is msl's
// estimate exactly; nvcc's figure lies between the declarations' sizes and
// it, and is it where Metal's layout has no padding or rounding.
func (fg tgFigures) check(t *testing.T, name string) {
	t.Helper()
	if fg.metal != int(fg.msl) {
		t.Errorf("ThreadgroupMemory will be %d bytes (Metal's rule over the table), msl estimates %d", fg.metal, fg.msl)
	}
	_, unused := unusedStorage[name]
	switch {
	case fg.nvcc > int(fg.msl):
		t.Errorf("nvcc allocates %d bytes of static shared memory, more than msl's %d", fg.nvcc, fg.msl)
	case fg.nvcc < fg.sum && !unused:
		t.Errorf("nvcc allocates %d bytes of static shared memory, less than the declarations' %d", fg.nvcc, fg.sum)
	case fg.nvcc >= fg.sum && unused:
		t.Errorf("listed in unusedStorage, but nvcc allocates %d bytes, the declarations' %d or more", fg.nvcc, fg.sum)
	case !fg.padded && !unused && fg.nvcc != int(fg.msl):
		t.Errorf("nvcc allocates %d bytes of static shared memory, msl estimates %d and Metal's layout has no padding", fg.nvcc, fg.msl)
	}
}

// TestThreadgroupMemoryBundled holds what the runner will report for each
// bundled kernel to msl's source estimate, without a GPU:
//
//   - ThreadgroupMemory (the runner's LOAD, here its -tables on the same
//     object) counts by Metal's rule and must equal msl's Total;
//   - nvcc's static shared memory (StaticSharedMemory, from
//     cudaFuncGetAttributes; here cuobjdump on the object, the system's
//     reserve taken off) lies between the declarations' sizes and that
//     total, and equals it where Metal's layout needs no padding or
//     rounding.
//
// It also holds the entry's registers to the largest threadgroup the spec
// dispatches: a block needing more than the register file would be a
// launch the GPU refuses. The figures are logged as a table.
func TestThreadgroupMemoryBundled(t *testing.T) {
	b := toolBackend(t, Options{})
	var mu sync.Mutex
	rows := map[string]string{}
	t.Run("kernels", func(t *testing.T) {
		for _, k := range bundledKernels(t, true) {
			if _, ok := cudaUnsupported[k.name]; ok {
				continue
			}
			t.Run(k.name, func(t *testing.T) {
				t.Parallel()
				fg := figures(t, b, k)
				fg.check(t, k.name)
				row := fmt.Sprintf("%-60s %6d %6d %6d %6d %5d %4d %5d", k.name, fg.msl, fg.sum, fg.metal, fg.nvcc, fg.reserved, fg.regs, k.threads)
				mu.Lock()
				rows[k.name] = row
				mu.Unlock()
				if k.threads > 0 && (fg.regs > 255 || blockRegisters(fg.regs, k.threads) > maxBlockRegisters) {
					t.Errorf("%d registers per thread: a threadgroup of %d threads needs %d, more than the %d a block has",
						fg.regs, k.threads, blockRegisters(fg.regs, k.threads), maxBlockRegisters)
				}
				if fg.spill > 0 {
					t.Logf("spills: %d bytes of local memory per thread", fg.spill)
				}
			})
		}
	})
	var names []string
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	var tb strings.Builder
	fmt.Fprintf(&tb, "%-60s %6s %6s %6s %6s %5s %4s %5s\n", "kernel", "msl", "decls", "metal", "nvcc", "+rsv", "regs", "tg")
	for _, n := range names {
		tb.WriteString(rows[n] + "\n")
	}
	t.Logf("static threadgroup memory in bytes (%s): msl's estimate (Total); the declarations' sizes; ThreadgroupMemory, Metal's rule over the TU's table; nvcc's static shared memory and the system's reserve the object counts besides; registers per thread; the largest threadgroup the spec dispatches:\n%s", testArch(), tb.String())
}

package conformance

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"metalab/backend"
	"metalab/backend/cpu"
	"metalab/backend/cpu/prelude"
	"metalab/internal/testenv"
)

// translateFunc is the translator the suite's backends use.
var translateFunc = cpu.DefaultTranslate

// cacheDir is shared by all runs of the suite: everything in it is keyed by
// content hash.
func cacheDir() string { return filepath.Join(os.TempDir(), "metalab-conformance-cache") }

// newBackendAt returns a backend of its own with its cache in dir and the
// given number of runner workers (0: one per core).
func newBackendAt(t testing.TB, dir string, workers int) *cpu.Backend {
	t.Helper()
	testenv.RequireCXX(t)
	b := cpu.New(cpu.Options{CacheDir: dir, Workers: workers, Translate: translateFunc, Prelude: prelude.FS, PreludeVersion: prelude.Version})
	if ok, why := b.Available(context.Background()); !ok {
		t.Fatalf("cpu backend unavailable although a compiler is present: %s", why)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

var (
	sharedOnce sync.Once
	shared     *cpu.Backend
	sharedErr  string
)

// newBackend returns the backend the tests share (one runner process).
func newBackend(t testing.TB) *cpu.Backend {
	t.Helper()
	testenv.RequireCXX(t)
	sharedOnce.Do(func() {
		shared = cpu.New(cpu.Options{CacheDir: cacheDir(), Translate: translateFunc, Prelude: prelude.FS, PreludeVersion: prelude.Version})
		if ok, why := shared.Available(context.Background()); !ok {
			sharedErr = why
		}
	})
	if sharedErr != "" {
		t.Fatalf("cpu backend unavailable although a compiler is present: %s", sharedErr)
	}
	return shared
}

// source reads a conformance kernel.
func source(t testing.TB, file, entry string) backend.Source {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("testdata")
	return backend.Source{Name: file, Text: text, Dir: dir, Entry: entry}
}

// compile compiles src and checks its static threadgroup memory against
// msl's source estimate.
func compile(t testing.TB, b backend.Backend, src backend.Source) backend.Program {
	t.Helper()
	p, err := b.Compile(context.Background(), src)
	if err != nil {
		var f *backend.Failure
		if errors.As(err, &f) {
			t.Fatalf("compile %s/%s: %v\n%s", src.Name, src.Entry, f, f.Log)
		}
		t.Fatalf("compile %s/%s: %v", src.Name, src.Entry, err)
	}
	t.Cleanup(func() { p.Close() })
	want, err := sourceEstimate(src)
	if err != nil {
		t.Errorf("%s/%s: msl threadgroup memory estimate: %v", src.Name, src.Entry, err)
	} else if got := p.ThreadgroupMemory(); got != want {
		t.Errorf("%s/%s: runner reports %d bytes of static threadgroup memory, msl estimates %d", src.Name, src.Entry, got, want)
	}
	return p
}

// run dispatches and returns the outputs, failing the test on any error.
func run(t testing.TB, p backend.Program, d backend.Dispatch) map[int][]byte {
	t.Helper()
	res, err := p.Run(context.Background(), d)
	if err != nil {
		var f *backend.Failure
		if errors.As(err, &f) {
			t.Fatalf("run: %v\n%s", f, f.Log)
		}
		t.Fatalf("run: %v", err)
	}
	return res.Outputs
}

// orders are the fiber orders every conformance case runs under.
var orders = []backend.Order{{Kind: "in-order"}, {Kind: "reversed"}, {Kind: "shuffle", Seed: 5}}

// rng is a small deterministic generator for inputs.
type rng uint64

func (r *rng) next() uint32 {
	*r = *r*6364136223846793005 + 1442695040888963407
	return uint32(*r >> 32)
}

// float in [-1, 1).
func (r *rng) float() float32 { return float32(int32(r.next())) / (1 << 31) }

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func u16bytes(v []uint16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], x)
	}
	return b
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// diff describes the first difference between got and want, as elements of
// elem bytes, or "" when they are equal.
func diff(got, want []byte, elem int) string {
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	for i := 0; i < len(got); i += elem {
		if string(got[i:i+elem]) != string(want[i:i+elem]) {
			return fmt.Sprintf("element %d: got %x, want %x (little-endian bytes)", i/elem, got[i:i+elem], want[i:i+elem])
		}
	}
	return ""
}

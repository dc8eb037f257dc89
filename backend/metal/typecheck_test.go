package metal

import (
	"context"
	"go/constant"
	"go/types"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"metalab/internal/darwincheck"
)

// No Mac builds this package here, so these tests check what a Mac build
// would: its darwin/arm64 cgo files type-check against darwinkit's source,
// and it calls no darwinkit method that panics.

const (
	pkgPath       = "metalab/backend/metal"
	typeErrorPath = "metalab/backend/metal/testdata/typeerror"  // fixture: a missing method
	wrapCallPath  = "metalab/backend/metal/testdata/wrapcall"   // fixture: a panicking darwinkit method
	narrowPath    = "metalab/backend/metal/testdata/narrowcall" // fixture: calls with a one-byte return slot
	metalPkg      = darwincheck.Darwinkit + "/macos/metal"
)

var (
	darwinOnce sync.Once
	darwinRes  *darwincheck.Result
	darwinErr  error
)

// darwin type-checks this package (its tests included) and the two
// fixtures for darwin/arm64 with cgo, once per test binary. darwinkit's
// source must be in the module cache; it is downloaded if it is not.
func darwin(t *testing.T) *darwincheck.Result {
	t.Helper()
	darwinOnce.Do(func() {
		out, err := exec.Command("go", "mod", "download", darwincheck.Darwinkit).CombinedOutput()
		if err != nil {
			darwinErr = err
			t.Errorf("cannot get darwinkit's source, which the darwin type check reads: go mod download %s: %v\n%s"+
				"Give the go command a module proxy (GOPROXY) or fill the module cache (go mod download) and run again.",
				darwincheck.Darwinkit, err, out)
			return
		}
		darwinRes, darwinErr = darwincheck.Check(context.Background(), darwincheck.Config{Tests: true}, pkgPath, typeErrorPath, wrapCallPath, narrowPath)
	})
	if darwinErr != nil {
		t.Fatalf("darwin type check: %v", darwinErr)
	}
	return darwinRes
}

// TestTypeCheckDarwin type-checks backend/metal as a Mac builds it: the
// darwin files (cgo and all), the Mac-only tests, and every dependency
// (darwinkit's objc, macos/metal, macos/foundation, ... with their bodies).
func TestTypeCheckDarwin(t *testing.T) {
	r := darwin(t)
	p := r.Package(pkgPath)
	if p == nil || !p.Target {
		t.Fatalf("%s was not checked", pkgPath)
	}
	if !slices.Contains(p.GoFiles, "metal_darwin.go") || slices.Contains(p.GoFiles, "metal_other.go") {
		t.Fatalf("%s checked %v, want the darwin files (metal_darwin.go) and not the stub", pkgPath, p.GoFiles)
	}
	if !slices.Contains(p.TestFiles, "metal_darwin_test.go") {
		t.Errorf("%s: test files checked %v, want metal_darwin_test.go", pkgPath, p.TestFiles)
	}
	var darwinkit []string
	files := 0
	for _, d := range r.Packages {
		files += len(d.GoFiles) + len(d.TestFiles)
		if strings.HasPrefix(d.ImportPath, darwincheck.Darwinkit+"/") {
			darwinkit = append(darwinkit, strings.TrimPrefix(d.ImportPath, darwincheck.Darwinkit+"/"))
			if d.Info == nil {
				t.Errorf("%s was checked without its function bodies", d.ImportPath)
			}
		}
	}
	for _, want := range []string{"objc", "macos/metal", "macos/foundation"} {
		if !slices.Contains(darwinkit, want) {
			t.Errorf("darwinkit packages checked: %v, want %s among them", darwinkit, want)
		}
	}
	if len(p.GoFiles) == 0 || files == 0 {
		t.Fatal("no files were checked")
	}
	failed := 0
	for _, d := range r.Packages {
		if d.ImportPath == typeErrorPath {
			continue // the fixture that must fail; see TestTypeCheckCatchesMisuse
		}
		for _, e := range d.Errors {
			t.Errorf("%v", e)
			failed++
		}
	}
	t.Logf("checked %d packages, %d files, for %s/%s with cgo: %s (%d files: %s; tests %s) and darwinkit %s; %d errors",
		len(r.Packages), files, r.GOOS, r.GOARCH, pkgPath, len(p.GoFiles), strings.Join(p.GoFiles, " "),
		strings.Join(p.TestFiles, " "), strings.Join(darwinkit, " "), failed)
}

// TestTypeCheckCatchesMisuse shows the darwin type check failing where a
// Mac build would: the fixture calls EndEncoding on the compute encoder,
// which darwinkit's type does not have.
func TestTypeCheckCatchesMisuse(t *testing.T) {
	p := darwin(t).Package(typeErrorPath)
	if p == nil {
		t.Fatalf("%s was not checked", typeErrorPath)
	}
	var got []string
	for _, e := range p.Errors {
		got = append(got, e.Error())
	}
	if len(got) != 1 || !strings.Contains(got[0], "typeerror.go:12:6: enc.EndEncoding undefined") {
		t.Errorf("errors in %s: %q, want exactly the missing EndEncoding", typeErrorPath, got)
	}
}

// TestNoProtocolWrapCalls fails if backend/metal refers to a darwinkit
// function or method whose body wraps an argument with
// objc.WrapAsProtocol: such a method panics ("generic type T should be
// interface type") before sending its message. Send the selector with
// objc.Call instead.
func TestNoProtocolWrapCalls(t *testing.T) {
	r := darwin(t)
	calls, err := darwincheck.DarwinkitCalls(r, pkgPath)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[*types.Func]bool{}
	wrapping := 0
	for _, c := range calls {
		distinct[c.Func] = true
		if c.Wraps {
			wrapping++
			t.Errorf("%s: %s wraps its argument with objc.WrapAsProtocol (%s) and panics; send its selector with objc.Call",
				c.Pos, c.Func.FullName(), c.Decl)
		}
	}
	// The check is only as good as what it sees: the flow calls dozens of
	// darwinkit methods.
	if len(distinct) < 20 {
		t.Errorf("found %d distinct darwinkit functions referred to, want at least 20: is the darwin file being read?", len(distinct))
	}
	t.Logf("%d references to %d darwinkit functions and methods; %d to one that wraps", len(calls), len(distinct), wrapping)
}

// TestProtocolWrapCheckCatchesMisuse shows the check failing on a call to
// SetComputePipelineState, the method the flow must avoid.
func TestProtocolWrapCheckCatchesMisuse(t *testing.T) {
	r := darwin(t)
	calls, err := darwincheck.DarwinkitCalls(r, wrapCallPath)
	if err != nil {
		t.Fatal(err)
	}
	var wraps []string
	for _, c := range calls {
		if c.Wraps {
			wraps = append(wraps, c.Func.Name())
		}
	}
	if len(calls) != 1 || strings.Join(wraps, ",") != "SetComputePipelineState" {
		t.Errorf("calls in %s: %v, want one call, to SetComputePipelineState, that wraps", wrapCallPath, calls)
	}
}

// TestDarwinkitConstants checks the raw Metal enum values this package
// uses on every platform against darwinkit's constants.
func TestDarwinkitConstants(t *testing.T) {
	p := darwin(t).Package(metalPkg)
	if p == nil || p.Types == nil {
		t.Fatalf("%s was not checked", metalPkg)
	}
	value := func(name string) (uint64, bool) {
		c, ok := p.Types.Scope().Lookup(name).(*types.Const)
		if !ok {
			return 0, false
		}
		v, exact := constant.Uint64Val(c.Val())
		return v, exact
	}
	checked := 0
	for name, st := range scalarTypes {
		if st.darwin == "" {
			continue
		}
		v, ok := value(st.darwin)
		if !ok || v != uint64(st.dataType) {
			t.Errorf("%s: MTLDataType %d, darwinkit's metal.%s = %d (found %v)", name, st.dataType, st.darwin, v, ok)
		}
		checked++
	}
	for name, want := range map[string]int{"CommandBufferErrorTimeout": cbErrorTimeout, "CommandBufferErrorPageFault": cbErrorPageFault} {
		if v, ok := value(name); !ok || v != uint64(want) {
			t.Errorf("metal.%s = %d (found %v), this package uses %d", name, v, ok, want)
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("checked %d constants, want at least 10", checked)
	}
}

// TestNoNarrowReturnCalls fails if backend/metal makes, or calls a
// darwinkit method that makes, an objc.Call whose return type is narrower
// than 8 bytes (bool, uint32, ...): darwinkit gives libffi a return slot
// the size of the type, and libffi writes a whole ffi_arg (ffi_call(3):
// "rvalue must point to storage that is sizeof(ffi_arg) or larger"), over
// whatever lies next to it. Read such values in the cgo preamble, or with
// objc.Call[uint64] and a mask.
func TestNoNarrowReturnCalls(t *testing.T) {
	r := darwin(t)
	calls, err := darwincheck.DarwinkitCalls(r, pkgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if c.Narrow != "" {
			t.Errorf("%s: %s returns %s through libffi with a slot of that size; libffi writes 8 bytes", c.Pos, c.Func.FullName(), c.Narrow)
		}
	}
}

// TestNarrowReturnCheckCatchesMisuse shows the check failing on
// HasUnifiedMemory and on objc.Call[bool], and passing a uint getter.
func TestNarrowReturnCheckCatchesMisuse(t *testing.T) {
	r := darwin(t)
	calls, err := darwincheck.DarwinkitCalls(r, narrowPath)
	if err != nil {
		t.Fatal(err)
	}
	var narrow []string
	for _, c := range calls {
		if c.Narrow != "" {
			narrow = append(narrow, c.Func.Name()+"="+c.Narrow)
		}
	}
	if got := strings.Join(narrow, ","); got != "HasUnifiedMemory=bool,Call=bool" {
		t.Errorf("narrow calls in %s: %s, want HasUnifiedMemory=bool,Call=bool", narrowPath, got)
	}
}

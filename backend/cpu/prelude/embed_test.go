package prelude

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// headerFiles lists the header files on disk.
func headerFiles(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob("metal_*")
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, "simd/simd.h")
	sort.Strings(names)
	return names
}

// TestFSHoldsEveryHeader checks that FS holds every header file in this
// directory and every header they include with quotes, except mtl_rt.h,
// which the runtime supplies.
func TestFSHoldsEveryHeader(t *testing.T) {
	names := headerFiles(t)
	if len(names) < 5 {
		t.Fatalf("found only %v", names)
	}
	include := regexp.MustCompile(`(?m)^#include "([^"]+)"`)
	for _, n := range names {
		disk, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		emb, err := FS.ReadFile(n)
		if err != nil {
			t.Errorf("%s is not embedded: %v", n, err)
			continue
		}
		if string(emb) != string(disk) {
			t.Errorf("%s: embedded copy differs from the file", n)
		}
		for _, m := range include.FindAllSubmatch(disk, -1) {
			inc := filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(n), string(m[1]))))
			if inc == "mtl_rt.h" || strings.HasSuffix(inc, "/mtl_rt.h") {
				continue
			}
			if _, err := fs.Stat(FS, inc); err != nil {
				t.Errorf("%s includes %q, which is not embedded", n, inc)
			}
		}
	}
	if _, err := fs.Stat(FS, "metal_stdlib"); err != nil {
		t.Errorf("metal_stdlib is not embedded: %v", err)
	}
}

// TestVersionCoversContents recomputes Version from the files on disk.
func TestVersionCoversContents(t *testing.T) {
	names := headerFiles(t)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	if want := hex.EncodeToString(h.Sum(nil)); Version != want {
		t.Errorf("Version = %s, want %s", Version, want)
	}
}

// TestWriteDir writes the headers out and compiles against the copy.
func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "inc")
	if err := WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range headerFiles(t) {
		want, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatalf("%s not written: %v", n, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs", n)
		}
	}
	// Writing again over an existing copy succeeds.
	if err := WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	gxx := needGXX(t)
	src := filepath.Join(t.TempDir(), "k.cpp")
	if err := os.WriteFile(src, []byte("#include <metal_stdlib>\n#include <simd/simd.h>\nmetal::float4 f(metal::half h) { return metal::float4(h); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, cxxFlags...), "-fsyntax-only", "-I", dir, "-I", runtimeDir(t), src)
	if out, err := exec.Command(gxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("compile against written headers: %v\n%s", err, out)
	}
}

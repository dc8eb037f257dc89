package prelude

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"metalab/internal/testenv"
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

// memFS returns a copy of the files of fsys in memory.
func memFS(t *testing.T, fsys fs.FS) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		out[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustVersionOf(t *testing.T, fsys fs.FS) string {
	t.Helper()
	v, err := versionOf(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVersionCoversContents checks that Version is computed from the
// embedded headers, which are the header files on disk, and that the
// computation changes its result for any change to any header: its bytes,
// its length, its name, its presence, and a file added.
func TestVersionCoversContents(t *testing.T) {
	emb := memFS(t, FS)
	if len(emb) < 5 {
		t.Fatalf("FS holds only %d files", len(emb))
	}
	if v := mustVersionOf(t, emb); v != Version {
		t.Fatalf("Version = %s, but the embedded headers give %s: Version is not derived from them", Version, v)
	}
	disk := fstest.MapFS{}
	for _, n := range headerFiles(t) {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		disk[filepath.ToSlash(n)] = &fstest.MapFile{Data: b}
	}
	if v := mustVersionOf(t, disk); v != Version {
		t.Errorf("the header files on disk give version %s, Version is %s", v, Version)
	}

	// Every change gives a version of its own.
	seen := map[string]string{Version: "the embedded headers"}
	differs := func(what string, fsys fstest.MapFS) {
		t.Helper()
		v := mustVersionOf(t, fsys)
		if prev, ok := seen[v]; ok {
			t.Errorf("%s: version %s, the same as for %s", what, v, prev)
			return
		}
		seen[v] = what
	}
	edited := func(name string, f func(*fstest.MapFile)) fstest.MapFS {
		out := fstest.MapFS{}
		for n, m := range emb {
			c := &fstest.MapFile{Data: append([]byte(nil), m.Data...)}
			if n == name {
				f(c)
			}
			out[n] = c
		}
		return out
	}
	names := make([]string, 0, len(emb))
	for n := range emb {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if len(emb[n].Data) == 0 {
			t.Errorf("%s is empty", n)
			continue
		}
		differs(n+" with one byte flipped", edited(n, func(m *fstest.MapFile) { m.Data[len(m.Data)/2] ^= 1 }))
		differs(n+" with a byte appended", edited(n, func(m *fstest.MapFile) { m.Data = append(m.Data, '\n') }))
		differs(n+" with its last byte removed", edited(n, func(m *fstest.MapFile) { m.Data = m.Data[:len(m.Data)-1] }))
		renamed := edited("", nil)
		renamed[n+"x"] = renamed[n]
		delete(renamed, n)
		differs(n+" renamed", renamed)
		removed := edited("", nil)
		delete(removed, n)
		differs(n+" removed", removed)
	}
	added := edited("", nil)
	added["metal_extra.h"] = &fstest.MapFile{Data: []byte("#pragma once\n")}
	differs("a header added", added)

	// A byte moved between a header's name and its contents is a change.
	a := mustVersionOf(t, fstest.MapFS{"metal_a": {Data: []byte("bc")}})
	b := mustVersionOf(t, fstest.MapFS{"metal_ab": {Data: []byte("c")}})
	if a == b {
		t.Error("a byte moved from a header's contents to its name keeps the version")
	}
	// The result does not depend on the order files are listed in.
	if v := mustVersionOf(t, edited("", nil)); v != Version {
		t.Errorf("a second copy of the headers gives version %s, want %s", v, Version)
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
	if out, err := testenv.Command(gxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("compile against written headers: %v\n%s", err, out)
	}
}

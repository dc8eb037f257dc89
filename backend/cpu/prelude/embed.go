// Package prelude holds the C++17 implementation of metal_stdlib that the
// cpu backend compiles translated kernels against.
//
// The headers include "mtl_rt.h" (backend/cpu/runtime), which the backend
// must put beside them or on the include path. They rely on the backend's
// flags for Metal semantics: -ffp-contract=off and -fno-fast-math (no fused
// or reassociated float arithmetic). Everything lives in namespace metal,
// with implementation details in metal::mtl_detail and macros prefixed MTL_.
package prelude

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
)

// FS holds the prelude headers: metal_stdlib, simd/simd.h, the
// extensionless metal_* aliases (metal_math, metal_atomic, ...) and the
// metal_*.h pieces.
//
//go:embed metal_* simd/simd.h
var FS embed.FS

// Version is versionOf(FS): a sha256 over the names and contents of the
// headers, so compiled kernels can be cached per prelude version.
var Version = mustVersion(FS)

// names returns the paths of the files in fsys, sorted.
func names(fsys fs.FS) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// versionOf returns the sha256, in hex, over the path and contents of
// every file in fsys, in path order, each field ended by a NUL byte: a
// header's name or bytes changing, a header added or removed, all change
// it.
func versionOf(fsys fs.FS) (string, error) {
	ns, err := names(fsys)
	if err != nil {
		return "", fmt.Errorf("prelude version: %w", err)
	}
	h := sha256.New()
	for _, n := range ns {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", fmt.Errorf("prelude version: %w", err)
		}
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func mustVersion(fsys fs.FS) string {
	v, err := versionOf(fsys)
	if err != nil {
		panic("prelude: embedded headers unreadable: " + err.Error())
	}
	return v
}

// WriteDir writes the headers under dir (creating it), so a compiler can
// use it as an include directory. Each file is written to a temporary name
// and renamed, so a concurrent compile never sees a partial header.
func WriteDir(dir string) error {
	ns, err := names(FS)
	if err != nil {
		return fmt.Errorf("write prelude: %w", err)
	}
	for _, n := range ns {
		b, err := FS.ReadFile(n)
		if err != nil {
			return fmt.Errorf("read embedded %s: %w", n, err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("write prelude: %w", err)
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), "."+path.Base(n)+".tmp*")
		if err != nil {
			return fmt.Errorf("write prelude: %w", err)
		}
		_, werr := tmp.Write(b)
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), dst)
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("write prelude %s: %w", dst, werr)
		}
	}
	return nil
}

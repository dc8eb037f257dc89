// Package prelude holds the C++ implementation of metal_stdlib that
// translated kernels are compiled against by the cpu backend.
package prelude

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sort"
)

// FS holds the prelude headers: metal_stdlib, the extensionless metal_*
// aliases and the metal_*.h pieces. The backend writes them to its cache
// directory and compiles with -I pointing there; the headers include
// "mtl_rt.h", which the backend must place beside them (or on the include
// path).
//
//go:embed metal_*
var FS embed.FS

// Version is a sha256 over the names and contents of the headers in FS, so
// compiled kernels can be cached per prelude version.
var Version = version()

func version() string {
	h := sha256.New()
	var names []string
	_ = fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, path)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, err := FS.ReadFile(n)
		if err != nil {
			panic("prelude: embedded header unreadable: " + err.Error())
		}
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

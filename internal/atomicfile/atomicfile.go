// Package atomicfile writes result files so that a reader, or a process
// killed mid-write, never leaves a partial file under the final name.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
)

// Write writes b to path, creating its directory: into a temporary file
// named prefix+base+"-"+random in the same directory (so the caller can
// find and remove leftovers by prefix), synced, then renamed over path.
// The file's mode is 0644; a failed write removes the temporary file and
// leaves an old file at path as it was.
func Write(path string, b []byte, prefix string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return err
	}
	tmp := filepath.Join(dir, prefix+filepath.Base(path)+"-"+hex.EncodeToString(r[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

package search

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"metalab/msl"
	"metalab/patches"
	"metalab/variants"
)

// A VariantFile is a hand-written variant of the kernel (sweep
// --variant): a file's path as given and its sha256, recorded in the plan
// so that a resumed sweep judges the same bytes. OutsideFn, when set,
// says where the file changes code outside the owned functions (the
// scope check's message): such a variant is swept like any other, but its
// patch is refused unless Settings.Scope is "file".
type VariantFile struct {
	Path      string `json:"path"`
	SHA256    string `json:"sha256"`
	OutsideFn string `json:"outside_fn,omitempty"`
}

// FileRefPrefix starts the ref the store records a hand-written variant
// by: "file:" and the file's path as the plan records it.
const FileRefPrefix = "file:"

// Ref is the ref the store records f's variant by.
func (f VariantFile) Ref() string { return FileRefPrefix + f.Path }

// Name is f's variant's name: "file.", the file's base name without its
// extension, "-" and the first 8 hex digits of its sha256, so two files of
// one name in two directories, or a file edited between two sweeps, are
// told apart.
func (f VariantFile) Name() string {
	base := strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path))
	return "file." + safeName(base) + "-" + f.SHA256[:8]
}

// Label describes f's variant in words: "hand-written PATH", and where
// it changes code outside the owned functions.
func (f VariantFile) Label() string {
	if f.OutsideFn != "" {
		return "hand-written " + f.Path + ", changing code outside --fn (" + f.OutsideFn + ")"
	}
	return "hand-written " + f.Path
}

// IsFileRef reports whether ref names a hand-written variant.
func IsFileRef(ref string) bool { return strings.HasPrefix(ref, FileRefPrefix) }

func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ExpandVariantPaths turns --variant arguments into files: a file as
// given, a directory as its *.metal files in name order (a directory
// without one is an error).
func ExpandVariantPaths(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("--variant %s: %w", a, errors.Unwrap(err))
		}
		if !info.IsDir() {
			out = append(out, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("--variant %s: %w", a, err)
		}
		n := 0
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".metal") {
				out = append(out, filepath.Join(a, e.Name()))
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("--variant %s: the directory has no .metal file", a)
		}
	}
	return out, nil
}

// LoadVariantFiles reads hand-written variants of the kernel base (the
// baseline's bytes, parsed as f) and records each with its sha256 and
// whether it changes code outside fns. A file with the baseline's bytes,
// or with the bytes of another file given, is refused: it would be judged
// twice, or against itself.
func LoadVariantFiles(paths []string, readFile func(string) ([]byte, error), base []byte, f *msl.File, fns []string) ([]VariantFile, error) {
	var out []VariantFile
	for _, p := range paths {
		text, err := readFile(p)
		if err != nil {
			return nil, fmt.Errorf("read variant: %w", err)
		}
		vf := VariantFile{Path: filepath.ToSlash(p), SHA256: sha(text)}
		if bytes.Equal(text, base) {
			return nil, fmt.Errorf("--variant %s has the baseline's bytes (sha256 %s): it is not a variant", p, vf.SHA256[:12])
		}
		if i := slices.IndexFunc(out, func(o VariantFile) bool { return o.SHA256 == vf.SHA256 }); i >= 0 {
			return nil, fmt.Errorf("--variant %s has the same bytes as %s (sha256 %s): give it once", p, out[i].Path, vf.SHA256[:12])
		}
		if f != nil && len(fns) > 0 {
			if err := patches.CheckFuncScope(base, text, f, fns); err != nil {
				vf.OutsideFn = strings.TrimPrefix(err.Error(), "scope: ")
			}
		}
		out = append(out, vf)
	}
	return out, nil
}

// fileVariant is vf's variant of the baseline with text.
func fileVariant(vf VariantFile, text []byte, base []byte, basePath string) *variants.Variant {
	return &variants.Variant{Name: vf.Name(), Source: text, Sha256: vf.SHA256, BasePath: basePath, BaseSha256: sha(base)}
}

// LoadFiles reads the plan's hand-written variants into s with read
// (their paths as the plan records them), each of which must still have
// the plan's sha256: a file changed since the sweep began is an error
// naming it, never a silent new variant. With optional, a file read
// cannot find is left out (a sweep's snapshot of a variant another shard
// evaluated).
func (s *Space) LoadFiles(p *Plan, optional bool, read func(VariantFile) ([]byte, error)) error {
	s.Files = nil
	for _, vf := range p.Search.Files {
		text, err := read(vf)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && optional {
				continue
			}
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("hand-written variant %s: %w (the plan records it with sha256 %s)", vf.Path, err, vf.SHA256[:12])
			}
			return fmt.Errorf("hand-written variant %s: %w", vf.Path, err)
		}
		if got := sha(text); got != vf.SHA256 {
			return &FileChangedError{Path: vf.Path, Want: vf.SHA256, Got: got}
		}
		s.Files = append(s.Files, HandWritten{File: vf, Variant: fileVariant(vf, text, s.File.Src, s.File.Name)})
	}
	return nil
}

// A FileChangedError says a hand-written variant's file is not the one
// the plan recorded.
type FileChangedError struct{ Path, Want, Got string }

func (e *FileChangedError) Error() string {
	return fmt.Sprintf("hand-written variant %s changed since the sweep began (sha256 %s, now %s): its results cannot be resumed against it; start a new sweep (another --out) to judge the new file",
		e.Path, e.Want[:12], e.Got[:12])
}

// A HandWritten is a hand-written variant of a sweep's space: its file as
// the plan records it and the variant it is.
type HandWritten struct {
	File    VariantFile
	Variant *variants.Variant
}

// fileOf returns the plan's hand-written variant recorded by ref, or nil.
func (s *Space) fileOf(ref string) *HandWritten {
	for i := range s.Files {
		if s.Files[i].File.Ref() == ref {
			return &s.Files[i]
		}
	}
	return nil
}

// fileBySHA returns the hand-written variant of sha256, or nil.
func (s *Space) fileBySHA(sum string) *HandWritten {
	for i := range s.Files {
		if s.Files[i].File.SHA256 == sum {
			return &s.Files[i]
		}
	}
	return nil
}

// A RepoError says the repository patches are to be verified against
// (Options.Repo) cannot take them: the plan's path is not inside it, is
// not there, or no longer holds the baseline. Run returns it before any
// work, so a sweep never runs for hours to find its patches refused.
type RepoError struct{ Repo, Path, Msg string }

func (e *RepoError) Error() string {
	return fmt.Sprintf("--repo %s, --path %s: %s", e.Repo, e.Path, e.Msg)
}

// CheckRepo returns a *RepoError unless repo holds the plan's baseline
// at the plan's path ("" repo: nothing to check).
func CheckRepo(p *Plan, repo string) error {
	if repo == "" {
		return nil
	}
	if info, err := os.Stat(repo); err != nil || !info.IsDir() {
		return &RepoError{Repo: repo, Path: p.Path, Msg: "the repository is not a directory"}
	}
	if !filepath.IsLocal(filepath.FromSlash(p.Path)) {
		return &RepoError{Repo: repo, Path: p.Path, Msg: "the path is not a relative path inside the repository: give --path, the kernel's path in it"}
	}
	cur, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(p.Path)))
	if err != nil {
		return &RepoError{Repo: repo, Path: p.Path, Msg: "the repository has no such file (" + errText(err) + "): give --path, the kernel's path in it"}
	}
	if got := sha(cur); got != p.Baseline {
		return &RepoError{Repo: repo, Path: p.Path, Msg: fmt.Sprintf("the file there has sha256 %s, not the baseline's %s: no patch could apply to it", got[:12], p.Baseline[:12])}
	}
	return nil
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

package translate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"metalab/backend"
)

// Predefined are the macros the Metal compiler defines that kernels test,
// as the preprocessor sees them here: the language version (MSL 3.1, the
// version whose bfloat the prelude implements), the macOS target and
// bfloat support. The C++ compiler's own predefined macros are not
// defined (-undef): a kernel sees no __GNUC__, __x86_64__ or __linux__,
// so the preprocessed text is the same on every host. __cplusplus is
// 201703L.
var Predefined = map[string]string{
	"__METAL_VERSION__": "310",
	"__METAL_MACOS__":   "1",
	"__HAVE_BFLOAT__":   "1",
}

// metalHeaders are the headers of Metal's standard library that the
// preprocessor finds as empty files: the target's prelude is included
// once at the top of the translation instead, and never expanded into
// it. A header not in the list is not found, a compile error.
var metalHeaders = []string{
	"metal_stdlib", "metal_array", "metal_atomic", "metal_common", "metal_compute", "metal_config",
	"metal_geometric", "metal_graphics", "metal_imageblocks", "metal_integer",
	"metal_interpolate", "metal_limits", "metal_logging", "metal_math", "metal_matrix", "metal_mesh",
	"metal_numeric", "metal_pack", "metal_quadgroup", "metal_raytracing", "metal_relational",
	"metal_simdgroup", "metal_simdgroup_matrix", "metal_tensor", "metal_texture",
	"metal_type_traits", "metal_types", "metal_uniform", "metal_visible", "simd/simd.h", "simd/base.h",
	"simd/vector_types.h", "simd/vector.h", "simd/matrix.h", "simd/matrix_types.h",
	"simd/math.h", "simd/common.h", "simd/geometry.h",
}

// A Preprocessed is a source after the C preprocessor, as the Metal
// compiler would see it: includes read, macros expanded, #if decided. Its
// line markers are blanked, and Origin says where each line came from.
type Preprocessed struct {
	Text  []byte
	files []string // display names of the files lines come from
	lines []origin // by 0-based line of Text
	// Includes are the files the source includes, as the vetting pass
	// read them (nil when it was not vetted).
	Includes []IncludedFile
}

// An origin is the file and 1-based line a preprocessed line came from;
// file is an index in Preprocessed.files, -1 for none.
type origin struct {
	file int32
	line int32
}

// A Position is a line of a source file, as #line directives and compiler
// errors name it.
type Position struct {
	File string
	Line int
}

func (p Position) String() string { return p.File + ":" + strconv.Itoa(p.Line) }

// Origin returns the file and line that line (0-based) of p.Text came
// from; File is "" for a line of no file (the preprocessor's own).
func (p *Preprocessed) Origin(line int) Position {
	if line < 0 || line >= len(p.lines) || p.lines[line].file < 0 {
		return Position{}
	}
	o := p.lines[line]
	return Position{File: p.files[o.file], Line: int(o.line)}
}

// A Preprocessor runs the C++ compiler's preprocessor over Metal sources.
// Results are kept, keyed by everything that decides them (the compiler,
// the text, the included files' contents, directories and defines), so a
// source compiled twice (plain and checking mode) is preprocessed once.
// A Preprocessor is safe for concurrent use.
type Preprocessor struct {
	CXX []string // the compiler command, e.g. ["g++"]

	mu    sync.Mutex
	memo  map[string]*Preprocessed
	order []string // memo keys, oldest first
}

// memoSize bounds the results a Preprocessor keeps.
const memoSize = 32

// stubOnce installs the directory of empty Metal headers once per process.
var (
	stubOnce sync.Once
	stubDir  string
	stubErr  error
)

// metalStubs returns a directory holding an empty file for each of
// metalHeaders, made once (content-addressed under the temporary
// directory, so concurrent processes share it).
func metalStubs() (string, error) {
	stubOnce.Do(func() {
		h := sha256.New()
		for _, n := range metalHeaders {
			fmt.Fprintf(h, "%s\x00", n)
		}
		dir := filepath.Join(os.TempDir(), "metalab-metal-headers-"+hex.EncodeToString(h.Sum(nil))[:16])
		if _, err := os.Stat(filepath.Join(dir, "metal_stdlib")); err == nil {
			stubDir = dir
			return
		}
		tmp, err := os.MkdirTemp(os.TempDir(), ".metalab-metal-headers-")
		if err != nil {
			stubErr = err
			return
		}
		for _, n := range metalHeaders {
			p := filepath.Join(tmp, filepath.FromSlash(n))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				stubErr = err
				return
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				stubErr = err
				return
			}
		}
		if err := os.Rename(tmp, dir); err != nil {
			os.RemoveAll(tmp)
			if _, serr := os.Stat(filepath.Join(dir, "metal_stdlib")); serr != nil {
				stubErr = err
				return
			}
		}
		stubDir = dir
	})
	return stubDir, stubErr
}

// Preprocess runs the preprocessor over src: the kernel's directory
// (src.Dir) and src.IncludeDirs are searched for quoted includes, after
// the including file's own directory, as the vetting pass resolves them;
// <...> includes find only Metal's own headers, as empty files; src.Defines
// and Predefined are defined. Markers become the origin of each line, the
// main file named src.Name and headers by their path under the directory
// they were found through, as that directory was given. includes are the
// files the vetting pass read (its include closure), for the key of the
// kept results; pass nil to always run the preprocessor.
//
// A source the preprocessor rejects (#error, an include not found) yields
// an error with the compiler's messages, naming the .metal file; a
// compiler that cannot be run yields a *backend.EnvError.
func (pp *Preprocessor) Preprocess(ctx context.Context, src backend.Source, includes []IncludedFile) (*Preprocessed, error) {
	if len(pp.CXX) == 0 {
		return nil, &backend.EnvError{Op: "preprocess " + sourceName(src), Err: errors.New("no C++ compiler given")}
	}
	stubs, err := metalStubs()
	if err != nil {
		return nil, &backend.EnvError{Op: "preprocess " + sourceName(src), Err: fmt.Errorf("install Metal header stubs: %w", err)}
	}
	roots, err := includeRoots(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sourceName(src), err)
	}
	args := append([]string{}, pp.CXX[1:]...)
	args = append(args, "-E", "-x", "c++", "-std=c++17", "-undef", "-nostdinc")
	for _, r := range roots {
		args = append(args, "-iquote", r.abs)
	}
	args = append(args, "-I", stubs)
	for _, k := range sortedKeys(Predefined) {
		args = append(args, "-D"+k+"="+Predefined[k])
	}
	for _, k := range sortedKeys(src.Defines) {
		if v := src.Defines[k]; v != "" {
			args = append(args, "-D"+k+"="+v)
		} else {
			args = append(args, "-D"+k)
		}
	}
	args = append(args, "-")

	var key string
	if includes != nil {
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00", strings.Join(pp.CXX, "\x01"), strings.Join(args, "\x01"), sourceName(src), len(src.Text))
		h.Write(src.Text)
		for _, f := range includes {
			fmt.Fprintf(h, "%s\x00%d\x00", f.Path, len(f.Content))
			h.Write(f.Content)
		}
		key = hex.EncodeToString(h.Sum(nil))
		pp.mu.Lock()
		p := pp.memo[key]
		pp.mu.Unlock()
		if p != nil {
			return p, nil
		}
	}

	cmd := exec.CommandContext(ctx, pp.CXX[0], args...)
	cmd.Dir = stubs
	cmd.Stdin = bytes.NewReader(src.Text)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("preprocess %s: %w", sourceName(src), ctx.Err())
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, &backend.EnvError{Op: "preprocess " + sourceName(src), Err: err}
		}
		return nil, &PreprocessError{Log: renameStdin(withholdOutside(errb.String(), roots, stubs), sourceName(src), roots)}
	}
	p, err := parseMarkers(out.Bytes(), sourceName(src), roots)
	if err != nil {
		return nil, fmt.Errorf("preprocess %s: %w", sourceName(src), err)
	}
	p.Includes = includes
	if key != "" {
		pp.mu.Lock()
		if pp.memo == nil {
			pp.memo = map[string]*Preprocessed{}
		}
		if _, ok := pp.memo[key]; !ok {
			pp.memo[key] = p
			pp.order = append(pp.order, key)
			if len(pp.order) > memoSize {
				delete(pp.memo, pp.order[0])
				pp.order = pp.order[1:]
			}
		}
		pp.mu.Unlock()
	}
	return p, nil
}

// A PreprocessError is a source the preprocessor rejected; Log holds its
// messages, file:line:col: error: ..., naming the .metal files.
type PreprocessError struct {
	Log string
}

func (e *PreprocessError) Error() string {
	for _, line := range strings.Split(e.Log, "\n") {
		if strings.Contains(line, "error") {
			return strings.TrimSpace(line)
		}
	}
	return strings.TrimSpace(e.Log)
}

// An includeRoot is a directory the preprocessor searches: its absolute
// path, and the path as given, for display.
type includeRoot struct{ abs, given string }

// includeRoots lists src.Dir and src.IncludeDirs, absolute and as given,
// without repeats.
func includeRoots(src backend.Source) ([]includeRoot, error) {
	var out []includeRoot
	seen := map[string]bool{}
	for _, d := range append([]string{src.Dir}, src.IncludeDirs...) {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("include directory %s: %w", d, err)
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		out = append(out, includeRoot{abs: abs, given: d})
	}
	return out, nil
}

// displayName names a file the preprocessor read: the main file (<stdin>)
// by main, a file under a root by its path under that root as the root
// was given (the deepest root wins), anything else as printed.
func displayName(printed, main string, roots []includeRoot) string {
	if printed == "<stdin>" {
		return main
	}
	p := filepath.Clean(printed)
	best, bestLen := "", -1
	for _, r := range roots {
		rel, err := filepath.Rel(r.abs, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if len(r.abs) > bestLen {
			best, bestLen = filepath.Join(r.given, rel), len(r.abs)
		}
	}
	if bestLen >= 0 {
		return best
	}
	return p
}

// renameStdin rewrites the compiler's messages to name the main file and
// headers as #line directives do.
func renameStdin(log, main string, roots []includeRoot) string {
	log = strings.ReplaceAll(log, "<stdin>", main)
	for _, r := range roots {
		log = strings.ReplaceAll(log, r.abs+string(filepath.Separator), strings.TrimSuffix(r.given, string(filepath.Separator))+string(filepath.Separator))
	}
	return log
}

// withholdOutside removes from the compiler's messages every word of a
// file that does not lie, once symlinks are resolved, inside an include
// root or the Metal header stubs: such a message keeps its file name and
// position, its text and the source excerpt under it are dropped. Vetting
// approves no such file, so none should be read; this keeps a host file's
// contents out of a report even if one is.
func withholdOutside(log string, roots []includeRoot, stubs string) string {
	var dirs []string
	for _, d := range append([]string{stubs}, rootDirs(roots)...) {
		if d == "" {
			continue
		}
		dirs = append(dirs, d)
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			dirs = append(dirs, real)
		}
	}
	lines := strings.SplitAfter(log, "\n")
	var b strings.Builder
	dropping := false
	for _, line := range lines {
		if dropping && excerptLine(line) {
			continue
		}
		dropping = false
		file, pos, ok := diagnosticFile(line)
		if !ok || file == "<stdin>" || strings.HasPrefix(file, "<") || insideReal(file, dirs) {
			b.WriteString(line)
			continue
		}
		prefix := strings.TrimSuffix(line[:strings.Index(line, file)], " ")
		if prefix != "" {
			prefix += " "
		}
		b.WriteString(prefix + file + pos + ": message withheld: the file lies outside the kernel's directory and the include directories\n")
		dropping = true
	}
	return b.String()
}

func rootDirs(roots []includeRoot) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.abs
	}
	return out
}

// diagnosticFile returns the file a message line names ("FILE:12:3: error:
// ...", "In file included from FILE:4:", "                 from FILE:4,")
// and the position after it (":12:3").
func diagnosticFile(line string) (file, pos string, ok bool) {
	rest := strings.TrimLeft(line, " ")
	rest = strings.TrimPrefix(rest, "In file included ")
	rest = strings.TrimPrefix(rest, "from ")
	for i := 0; i < len(rest); i++ {
		if rest[i] != ':' || i == 0 || i+1 >= len(rest) || !isDigit(rest[i+1]) {
			continue
		}
		j := i + 1
		for j < len(rest) && (isDigit(rest[j]) || rest[j] == ':' && j+1 < len(rest) && isDigit(rest[j+1])) {
			j++
		}
		return rest[:i], rest[i:j], true
	}
	return "", "", false
}

// excerptLine reports whether line is part of the source excerpt the
// compiler prints under a message ("    2 | text", "      |  ^~~").
func excerptLine(line string) bool {
	t := strings.TrimLeft(line, " ")
	for len(t) > 0 && isDigit(t[0]) {
		t = t[1:]
	}
	return strings.HasPrefix(strings.TrimLeft(t, " "), "|") && len(t) < len(line)
}

// insideReal reports whether the file p, symlinks resolved, lies in one of
// dirs; a file that cannot be resolved does not.
func insideReal(p string, dirs []string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	if real, err = filepath.Abs(real); err != nil {
		return false
	}
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// parseMarkers blanks the line markers of the preprocessor's output
// (# LINE "FILE" FLAGS) and records the origin of every other line.
func parseMarkers(out []byte, main string, roots []includeRoot) (*Preprocessed, error) {
	p := &Preprocessed{Text: out}
	fileIdx := map[string]int32{}
	cur, line := int32(-1), int32(0)
	for start := 0; start < len(out); {
		end := bytes.IndexByte(out[start:], '\n')
		if end < 0 {
			end = len(out)
		} else {
			end += start
		}
		text := out[start:end]
		if n, name, ok := lineMarker(text); ok {
			idx, seen := fileIdx[name]
			if !seen {
				idx = int32(len(p.files))
				fileIdx[name] = idx
				p.files = append(p.files, displayName(name, main, roots))
			}
			if strings.HasPrefix(name, "<") && name != "<stdin>" {
				idx = -1 // <built-in>, <command-line>
			}
			cur, line = idx, int32(n)
			for i := start; i < end; i++ {
				out[i] = ' '
			}
			p.lines = append(p.lines, origin{-1, 0})
		} else {
			p.lines = append(p.lines, origin{cur, line})
			line++
		}
		start = end + 1
	}
	return p, nil
}

// lineMarker parses `# 12 "file" 1 3`.
func lineMarker(l []byte) (int, string, bool) {
	if len(l) < 4 || l[0] != '#' || l[1] != ' ' || l[2] < '0' || l[2] > '9' {
		return 0, "", false
	}
	i := 2
	for i < len(l) && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(string(l[2:i]))
	if err != nil || i+1 >= len(l) || l[i] != ' ' || l[i+1] != '"' {
		return 0, "", false
	}
	name, ok := unquoteMarker(l[i+1:])
	return n, name, ok
}

// unquoteMarker reads the quoted file name at the start of s, with the
// preprocessor's escapes (\\, \" and octal).
func unquoteMarker(s []byte) (string, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), true
		case '\\':
			i++
			if i >= len(s) {
				return "", false
			}
			if s[i] >= '0' && s[i] <= '7' {
				v, n := 0, 0
				for n < 3 && i < len(s) && s[i] >= '0' && s[i] <= '7' {
					v = v*8 + int(s[i]-'0')
					i++
					n++
				}
				i--
				b.WriteByte(byte(v))
				continue
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

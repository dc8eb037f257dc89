package metal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"metalab/backend"
	"metalab/msl"
)

// maxIncludeDepth bounds nested #include "..." (a file that includes itself
// without a guard).
const maxIncludeDepth = 32

// metalSourceName is the file name Metal gives a library compiled from a
// string in its diagnostics.
const metalSourceName = "program_source"

// librarySource returns the text to hand to newLibraryWithSource: src.Text
// with every #include "x" that resolves inlined between #line directives,
// so the Metal compiler, which has no include path, reports positions in
// the files the user wrote. A header is looked for as the cpu backend's
// preprocessor looks: beside the including file, then in src.Dir, then in
// each of src.IncludeDirs (a spec's includes:). A header with #pragma once
// is wrapped in an include guard instead, which keeps the pragma's meaning
// inside #if branches. An include that does not resolve is left in place
// for the Metal compiler to report (if its branch is active at all).
//
// Headers are read only from src.Dir and src.IncludeDirs, as on the cpu
// backend: an absolute include, or one whose file lies outside those
// directories (a ../ escape, a symbolic link out), is a *backend.Failure
// of kind Refused naming the directive. Without src.Dir and
// src.IncludeDirs, src.Text is returned unchanged.
func librarySource(src backend.Source) (string, error) {
	text := src.Text
	if x := newIncluder(src); x != nil {
		var out bytes.Buffer
		if err := x.expand(&out, sourceName(src.Name), src.Dir, text, 0, false); err != nil {
			return "", err
		}
		text = out.Bytes()
	}
	// Foundation turns the string into an NSString through a C string and
	// stringWithUTF8String:, which stops at a NUL and gives nil for
	// invalid UTF-8.
	if i := bytes.IndexByte(text, 0); i >= 0 {
		return "", fmt.Errorf("%s: the source contains a NUL byte (offset %d); Metal compiles text", src.Name, i)
	}
	if !utf8.Valid(text) {
		return "", fmt.Errorf("%s: the source is not valid UTF-8; Metal compiles UTF-8 text", src.Name)
	}
	return string(text), nil
}

// sourceName is the name diagnostics give the main file: Source.Name, or
// Metal's own name when there is none.
func sourceName(name string) string {
	if name == "" {
		return metalSourceName
	}
	return name
}

// An includeRoot is a directory headers may be read from: as given (for
// diagnostics), absolute, and with symbolic links resolved.
type includeRoot struct{ given, abs, real string }

// An includer inlines #include "..." directives.
type includer struct {
	dir   string        // Source.Dir, searched after the including file's directory
	dirs  []string      // Source.IncludeDirs, searched after dir
	roots []includeRoot // dir and dirs: the only places headers are read from
}

// newIncluder returns the includer for src, or nil when src names no
// directory to read headers from.
func newIncluder(src backend.Source) *includer {
	x := &includer{dir: src.Dir}
	seen := map[string]bool{}
	for _, d := range append([]string{src.Dir}, src.IncludeDirs...) {
		if d == "" {
			continue
		}
		if d != src.Dir {
			x.dirs = append(x.dirs, d)
		}
		abs, err := filepath.Abs(d)
		if err != nil || seen[abs] {
			continue
		}
		seen[abs] = true
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		x.roots = append(x.roots, includeRoot{given: d, abs: abs, real: real})
	}
	if len(x.roots) == 0 {
		return nil
	}
	return x
}

// expand writes text (the file called name, in directory dir) to out with
// its resolvable includes inlined. dropOnce drops the file's #pragma once
// lines (the caller guards it instead).
func (x *includer) expand(out *bytes.Buffer, name, dir string, text []byte, depth int, dropOnce bool) error {
	toks, _ := msl.Lex(name, text) // malformed input still lexes; Metal reports the errors
	prev := 0
	for _, tk := range toks {
		if tk.Kind != msl.Directive {
			continue
		}
		words := directiveWords(tk.Text)
		if dropOnce && len(words) >= 2 && words[0] == "pragma" && words[1] == "once" {
			out.Write(text[prev:tk.Pos])
			prev = tk.End
			continue
		}
		inc, ok := quotedInclude(tk.Text)
		if !ok {
			continue
		}
		line := 1 + bytes.Count(text[:tk.End], []byte{'\n'})
		path, incName, err := x.resolve(name, dir, inc)
		if err != nil {
			return &backend.Failure{Kind: backend.Refused, Msg: fmt.Sprintf("%s:%d: #include %q: %v", name, line, inc, err),
				Log: fmt.Sprintf("%s:%d: #include %q: %v\n", name, line, inc, err)}
		}
		if path == "" {
			continue
		}
		if depth >= maxIncludeDepth {
			return fmt.Errorf("%s:%d: #include %q: includes nested more than %d deep", name, line, inc, maxIncludeDepth)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%s:%d: #include %q: %w", name, line, inc, err)
		}
		once := hasPragmaOnce(body)
		out.Write(text[prev:tk.Pos])
		guard := ""
		if once {
			guard = onceGuard(path)
			fmt.Fprintf(out, "#ifndef %s\n#define %s\n", guard, guard)
		}
		fmt.Fprintf(out, "#line 1 %s\n", cString(incName))
		if err := x.expand(out, incName, filepath.Dir(path), body, depth+1, once); err != nil {
			return err
		}
		if len(body) > 0 && body[len(body)-1] != '\n' {
			out.WriteByte('\n')
		}
		if once {
			fmt.Fprintf(out, "#endif // %s\n", guard)
		}
		// The directive's own newline follows: the next line is line+1.
		fmt.Fprintf(out, "#line %d %s", line+1, cString(name))
		prev = tk.End
	}
	out.Write(text[prev:])
	return nil
}

// quotedInclude returns x from a directive `#include "x"`.
func quotedInclude(d string) (string, bool) {
	d = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(d), "#"))
	rest, ok := strings.CutPrefix(d, "include")
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, `"`) {
		return "", false
	}
	end := strings.IndexByte(rest[1:], '"')
	if end <= 0 {
		return "", false
	}
	return rest[1 : 1+end], true
}

// resolve finds the header inc, included by the file called name in
// directory dir: beside it, then in Source.Dir, then in each of
// Source.IncludeDirs. It returns the path to read and the name diagnostics
// give the header (the including file's name's directory, or the include
// directory as given, joined with inc), or "" when no directory has it. An
// absolute inc, or a file found outside every root, is an error: headers
// are read from the kernel's directory and the include directories only.
func (x *includer) resolve(name, dir, inc string) (path, display string, err error) {
	if inc == "" || strings.ContainsRune(inc, 0) {
		return "", "", errors.New("not a file name")
	}
	if filepath.IsAbs(inc) || strings.HasPrefix(inc, "/") || strings.HasPrefix(inc, `\`) || filepath.VolumeName(inc) != "" {
		return "", "", errors.New("absolute include paths are not allowed; name the directory in the spec's includes: and include the file relative to it")
	}
	type cand struct{ path, display string }
	var cands []cand
	if dir != "" {
		cands = append(cands, cand{filepath.Join(dir, inc), filepath.ToSlash(filepath.Join(filepath.Dir(name), inc))})
	}
	for _, d := range append([]string{x.dir}, x.dirs...) {
		if d != "" && d != dir {
			cands = append(cands, cand{filepath.Join(d, inc), filepath.ToSlash(filepath.Join(d, inc))})
		}
	}
	for _, c := range cands {
		st, err := os.Stat(c.path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if !x.inside(c.path, true) {
			return "", "", errors.New("the file lies outside the kernel's directory and the include directories")
		}
		return c.path, c.display, nil
	}
	if len(cands) > 0 && !x.inside(cands[0].path, false) {
		return "", "", errors.New("the path leaves the kernel's directory and the include directories")
	}
	return "", "", nil
}

// inside reports whether p lies under one of the roots: lexically, and,
// when real is set, after resolving symbolic links.
func (x *includer) inside(p string, real bool) bool {
	abs, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	if real {
		if abs, err = filepath.EvalSymlinks(abs); err != nil {
			return false
		}
	}
	for _, r := range x.roots {
		root := r.abs
		if real {
			root = r.real
		}
		rel, err := filepath.Rel(root, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// onceGuard names the include guard standing in for path's #pragma once.
func onceGuard(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	h := sha256.Sum256([]byte(path))
	return "METALAB_PRAGMA_ONCE_" + hex.EncodeToString(h[:8])
}

func hasPragmaOnce(text []byte) bool {
	toks, _ := msl.Lex("", text)
	for _, tk := range toks {
		if tk.Kind == msl.Directive {
			if w := directiveWords(tk.Text); len(w) >= 2 && w[0] == "pragma" && w[1] == "once" {
				return true
			}
		}
	}
	return false
}

// directiveWords splits a directive into its name and the following words.
func directiveWords(d string) []string {
	d = strings.TrimPrefix(strings.TrimSpace(d), "#")
	d = strings.ReplaceAll(d, "\\\n", " ")
	return strings.Fields(d)
}

// cString quotes s as a C string literal for a #line directive.
func cString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// compileFailure turns the Metal compiler's log for the library compiled
// from src into a CompileError: "program_source:12:5: error: ..." becomes
// "kernels/k.metal:12:5: error: ...", and Msg is the first error.
func compileFailure(name, log string) *backend.Failure {
	name = sourceName(name)
	log = strings.ReplaceAll(log, metalSourceName+":", name+":")
	msg := ""
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, ": error:") || strings.Contains(l, ": fatal error:") {
			msg = strings.TrimSpace(l)
			break
		}
	}
	if msg == "" {
		msg = firstLine(log)
	}
	if msg == "" {
		msg = name + ": the Metal compiler failed without a message"
	}
	return &backend.Failure{Kind: backend.CompileError, Msg: msg, Log: log}
}

// A scalarType is a function-constant type: its MTLDataType and size.
type scalarType struct {
	name     string // canonical Metal name
	dataType uint   // MTLDataType
	size     int    // bytes
	darwin   string // the darwinkit constant in macos/metal, "" where v0.5.0 lacks it
}

// scalarTypes maps the scalar type names backend.Value uses to Metal's
// data types. The codes are MTLDataType's (Metal/MTLArgument.h); a test
// checks them against darwinkit's constants.
var scalarTypes = func() map[string]scalarType {
	m := map[string]scalarType{}
	for _, t := range []struct {
		scalarType
		aliases []string
	}{
		{scalarType{"bool", 53, 1, "DataTypeBool"}, nil},
		{scalarType{"char", 45, 1, "DataTypeChar"}, []string{"int8_t"}},
		{scalarType{"uchar", 49, 1, "DataTypeUChar"}, []string{"uint8_t"}},
		{scalarType{"short", 37, 2, "DataTypeShort"}, []string{"int16_t"}},
		{scalarType{"ushort", 41, 2, "DataTypeUShort"}, []string{"uint16_t"}},
		{scalarType{"int", 29, 4, "DataTypeInt"}, []string{"int32_t"}},
		{scalarType{"uint", 33, 4, "DataTypeUInt"}, []string{"uint32_t"}},
		{scalarType{"long", 81, 8, "DataTypeLong"}, []string{"int64_t"}},
		{scalarType{"ulong", 85, 8, "DataTypeULong"}, []string{"uint64_t"}},
		{scalarType{"half", 16, 2, "DataTypeHalf"}, nil},
		{scalarType{"float", 3, 4, "DataTypeFloat"}, nil},
		{scalarType{"bfloat", 121, 2, ""}, nil}, // MTLDataTypeBFloat, macOS 14
	} {
		m[t.name] = t.scalarType
		for _, a := range t.aliases {
			m[a] = t.scalarType
		}
	}
	return m
}()

// dataTypeName names an MTLDataType for messages.
func dataTypeName(code uint) string {
	for _, t := range scalarTypes {
		if t.dataType == code {
			return t.name
		}
	}
	return fmt.Sprintf("MTLDataType %d", code)
}

// constantBytes returns v's MTLDataType and its value as the bytes
// setConstantValue:type:withName: reads: the low bytes of v.Bits, little
// endian, and a bool as 0 or 1.
func constantBytes(v backend.Value) (uint, []byte, error) {
	t, ok := scalarTypes[v.Type]
	if !ok {
		return 0, nil, fmt.Errorf("unsupported function-constant type %q", v.Type)
	}
	b := make([]byte, t.size)
	bits := v.Bits
	if t.name == "bool" && bits&0xff != 0 {
		bits = 1
	}
	for i := range b {
		b[i] = byte(bits >> (8 * i))
	}
	return t.dataType, b, nil
}

// macroValue is the preprocessor macro value for a define: an empty value
// means 1, as -DNAME does for the cpu backend's compiler.
func macroValue(v string) string {
	if v == "" {
		return "1"
	}
	return v
}

package mutate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"metalab/msl"
)

// Flags are the preprocessor flags (-D NAME=VALUE, -U NAME) a source was
// parsed under. They decide #if branches and constants, hence which sites
// exist and what an ordinal counts, so a site id records them and a ref is
// refused under other flags. Flags are comparable with ==; the zero value
// is no flags.
type Flags struct {
	tag string // the canonical Tag form
}

// NewFlags returns the flags of -D defines (NAME=VALUE; an empty VALUE is
// 1) and -U undefines.
func NewFlags(defines map[string]string, undefs []string) Flags {
	var names []string
	for k := range defines {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		v := defines[k]
		if v == "" {
			v = "1"
		}
		parts = append(parts, k+":"+escapeValue(v))
	}
	us := slices.Clone(undefs)
	sort.Strings(us)
	for _, u := range slices.Compact(us) {
		parts = append(parts, "-"+u)
	}
	return Flags{tag: strings.Join(parts, ",")}
}

// FlagsOf returns the flags f was parsed under.
func FlagsOf(f *msl.File) Flags { return NewFlags(f.CmdDefines, f.CmdUndefs) }

// Defines returns the -D defines.
func (fl Flags) Defines() map[string]string {
	d, _ := fl.split()
	return d
}

// Undefs returns the -U names, sorted.
func (fl Flags) Undefs() []string {
	_, u := fl.split()
	return u
}

func (fl Flags) split() (map[string]string, []string) {
	defs := map[string]string{}
	var undefs []string
	if fl.tag == "" {
		return defs, nil
	}
	for _, item := range strings.Split(fl.tag, ",") {
		if name, ok := strings.CutPrefix(item, "-"); ok {
			undefs = append(undefs, name)
			continue
		}
		name, val, _ := strings.Cut(item, ":")
		v, _ := unescapeValue(val)
		defs[name] = v
	}
	return defs, undefs
}

// IsZero reports whether there are no flags.
func (fl Flags) IsZero() bool { return fl.tag == "" }

// Equal reports whether fl and o are the same flags.
func (fl Flags) Equal(o Flags) bool { return fl.tag == o.tag }

func sortedNames(m map[string]string) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Args returns the flags as command-line arguments, defines first, each
// sorted: ["-D", "A=1", "-U", "B"].
func (fl Flags) Args() []string {
	defs, undefs := fl.split()
	var out []string
	for _, k := range sortedNames(defs) {
		out = append(out, "-D", k+"="+defs[k])
	}
	for _, u := range undefs {
		out = append(out, "-U", u)
	}
	return out
}

// String formats the flags as on a command line, "-D A=1 -U B", or "no
// macro flags".
func (fl Flags) String() string {
	if fl.IsZero() {
		return "no macro flags"
	}
	var parts []string
	args := fl.Args()
	for i := 0; i+1 < len(args); i += 2 {
		parts = append(parts, args[i]+" "+args[i+1])
	}
	return strings.Join(parts, " ")
}

// Tag returns the flags in the form a site id carries after '@':
// NAME:VALUE for each define and -NAME for each undefine, comma-separated,
// sorted, with every byte of a value outside [A-Za-z0-9_.+-] written %XX.
// It is "" for no flags.
func (fl Flags) Tag() string { return fl.tag }

func escapeValue(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '+' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func unescapeValue(v string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(v) {
			return "", fmt.Errorf("bad escape in %q", v)
		}
		var x byte
		if _, err := fmt.Sscanf(v[i+1:i+3], "%02X", &x); err != nil {
			return "", fmt.Errorf("bad escape in %q", v)
		}
		b.WriteByte(x)
		i += 2
	}
	return b.String(), nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ParseFlagsTag parses the form Tag writes.
func ParseFlagsTag(s string) (Flags, error) {
	if s == "" {
		return Flags{}, nil
	}
	defs := map[string]string{}
	var undefs []string
	for _, item := range strings.Split(s, ",") {
		if name, ok := strings.CutPrefix(item, "-"); ok {
			if !isIdent(name) {
				return Flags{}, fmt.Errorf("bad -U %q in macro flags", name)
			}
			undefs = append(undefs, name)
			continue
		}
		name, val, ok := strings.Cut(item, ":")
		if !ok || !isIdent(name) {
			return Flags{}, fmt.Errorf("bad macro flag %q (want NAME:VALUE or -NAME)", item)
		}
		v, err := unescapeValue(val)
		if err != nil {
			return Flags{}, err
		}
		defs[name] = v
	}
	return NewFlags(defs, undefs), nil
}

// Diff describes how flags now differ from fl, one phrase per flag:
// "-D BLOCK=8 is now -D BLOCK=16", "-U X was dropped", "-D Y=1 was added".
func (fl Flags) Diff(now Flags) []string {
	ld, lu := fl.split()
	nd, nu := now.split()
	var out []string
	for _, k := range sortedNames(ld) {
		v := ld[k]
		switch nv, ok := nd[k]; {
		case !ok:
			out = append(out, fmt.Sprintf("-D %s=%s was dropped", k, v))
		case nv != v:
			out = append(out, fmt.Sprintf("-D %s=%s is now -D %s=%s", k, v, k, nv))
		}
	}
	for _, k := range sortedNames(nd) {
		if _, ok := ld[k]; !ok {
			out = append(out, fmt.Sprintf("-D %s=%s was added", k, nd[k]))
		}
	}
	for _, u := range lu {
		if !slices.Contains(nu, u) {
			out = append(out, fmt.Sprintf("-U %s was dropped", u))
		}
	}
	for _, u := range nu {
		if !slices.Contains(lu, u) {
			out = append(out, fmt.Sprintf("-U %s was added", u))
		}
	}
	return out
}

package msl

import (
	"strings"
)

// This file infers the types of expressions, as far as integer arithmetic
// and memory accesses need them: which integer type an index is computed
// in, what element type a pointer designates.

// canonicalInts maps integer type spellings to the names TypeOf returns.
var canonicalInts = map[string]string{
	"int": "int", "signed": "int", "signed int": "int", "int32_t": "int",
	"uint": "uint", "unsigned": "uint", "unsigned int": "uint", "uint32_t": "uint",
	"long": "long", "long long": "long", "int64_t": "long", "ptrdiff_t": "long", "intptr_t": "long",
	"ulong": "ulong", "unsigned long": "ulong", "unsigned long long": "ulong", "uint64_t": "ulong", "size_t": "ulong", "uintptr_t": "ulong",
	"short": "short", "int16_t": "short", "ushort": "ushort", "unsigned short": "ushort", "uint16_t": "ushort",
	"char": "char", "signed char": "char", "int8_t": "char", "uchar": "uchar", "unsigned char": "uchar", "uint8_t": "uchar",
	"bool": "bool",
}

// CanonicalType returns the canonical name of a scalar or vector type
// spelling ("unsigned int" and "uint32_t" are "uint", "size_t" is
// "ulong"), after resolving the file's typedefs; other types are returned
// with blanks normalised.
func (f *File) CanonicalType(typ string) string {
	t := strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(typ), "metal::")), " ")
	for i := 0; i < 8; i++ {
		alias, ok := f.Types[t]
		if !ok {
			break
		}
		t = strings.Join(strings.Fields(alias), " ")
	}
	if c, ok := canonicalInts[t]; ok {
		return c
	}
	return t
}

// IsIntegerType reports whether a canonical type is a scalar integer type.
func IsIntegerType(t string) bool {
	switch t {
	case "int", "uint", "long", "ulong", "short", "ushort", "char", "uchar", "bool":
		return true
	}
	return false
}

// IntWidth returns the width in bits of a canonical integer type and
// whether it is signed.
func IntWidth(t string) (bits int, signed bool) {
	switch t {
	case "int":
		return 32, true
	case "uint":
		return 32, false
	case "long":
		return 64, true
	case "ulong":
		return 64, false
	case "short":
		return 16, true
	case "ushort":
		return 16, false
	case "char":
		return 8, true
	case "uchar", "bool":
		return 8, false
	}
	return 0, false
}

// Promote returns the type an integer operand is promoted to: types
// narrower than int become int.
func Promote(t string) string {
	switch t {
	case "short", "ushort", "char", "uchar", "bool":
		return "int"
	}
	return t
}

// ArithType returns the type the usual arithmetic conversions give two
// integer operands, or "" when either is not an integer type.
func ArithType(a, b string) string {
	a, b = Promote(a), Promote(b)
	if !IsIntegerType(a) || !IsIntegerType(b) {
		return ""
	}
	switch {
	case a == "ulong" || b == "ulong":
		return "ulong"
	case a == "long" || b == "long":
		return "long" // long holds every uint
	case a == "uint" || b == "uint":
		return "uint"
	}
	return "int"
}

// FieldType returns the declared type of field name of the file's struct
// named structName.
func (f *File) FieldType(structName, name string) (string, bool) {
	st := f.structNamed(structName)
	if st == nil {
		return "", false
	}
	for _, d := range st.Fields {
		for _, n := range d.Names {
			if n.Name == name && len(n.Dims) == 0 {
				return d.Type, true
			}
		}
	}
	return "", false
}

// vectorScalar splits a vector type name ("uint3") into its scalar type
// and width; ok is false for other types.
func vectorScalar(t string) (scalar string, n int, ok bool) {
	i := len(t)
	for i > 0 && isDigit(t[i-1]) {
		i--
	}
	if i == len(t) || i == 0 || len(t)-i != 1 {
		return "", 0, false
	}
	n = int(t[i] - '0')
	if n < 2 || n > 4 {
		return "", 0, false
	}
	base := strings.TrimPrefix(t[:i], "packed_")
	if _, known := scalarSizes[base]; !known {
		return "", 0, false
	}
	return base, n, true
}

// TypeOf returns the canonical type of expression x (see CanonicalType):
// an integer, floating or vector type name, or "" when it cannot be told.
// Pointers and arrays have no type here; ElemType gives what they
// designate.
func (sc *Scope) TypeOf(x Expr) string {
	f := sc.File
	switch x := x.(type) {
	case *LitExpr:
		switch x.Kind {
		case Int:
			low := strings.ToLower(x.Text)
			n, ok := parseIntLit(x.Text)
			switch {
			case strings.HasSuffix(low, "ul") || strings.HasSuffix(low, "lu") || strings.HasSuffix(low, "ull") || strings.HasSuffix(low, "llu"):
				return "ulong"
			case strings.HasSuffix(low, "u"):
				if ok && n > 0xffffffff {
					return "ulong"
				}
				return "uint"
			case strings.HasSuffix(low, "l"):
				return "long"
			case ok && n > 0x7fffffff:
				return "long"
			}
			return "int"
		case Float:
			low := strings.ToLower(x.Text)
			if strings.HasSuffix(low, "h") {
				return "half"
			}
			return "float"
		}
	case *NameExpr:
		if x.Name == "true" || x.Name == "false" {
			return "bool"
		}
		v := sc.Lookup(x.Name, x.Pos)
		if v == nil || v.Ptr > 0 || v.IsArray() {
			return ""
		}
		return f.CanonicalType(v.Elem)
	case *ParenExpr:
		return sc.TypeOf(x.X)
	case *CastExpr:
		return f.CanonicalType(x.Type)
	case *CallExpr:
		n, ok := x.Fun.(*NameExpr)
		if !ok {
			return ""
		}
		name := lastPart(n.Name)
		if name == "static_cast" && x.TArgs != "" {
			return f.CanonicalType(x.TArgs)
		}
		if f.IsTypeName(name) {
			return f.CanonicalType(name)
		}
		switch name {
		case "max", "min", "clamp", "abs", "absdiff", "mulhi", "addsat", "subsat", "popcount", "clz", "ctz", "select":
			t := ""
			for i, a := range x.Args {
				at := sc.TypeOf(a)
				if name == "select" && i == 2 {
					break
				}
				if i == 0 {
					t = Promote(at)
					continue
				}
				t = ArithType(t, at)
			}
			if IsIntegerType(t) {
				return t
			}
		}
		return ""
	case *UnaryExpr:
		switch x.Op {
		case "!":
			return "bool"
		case "-", "+", "~":
			t := sc.TypeOf(x.X)
			if IsIntegerType(t) {
				return Promote(t)
			}
			return t
		case "++", "--":
			return sc.TypeOf(x.X)
		case "*":
			return sc.ElemType(x.X)
		}
	case *BinaryExpr:
		switch x.Op {
		case "==", "!=", "<", "<=", ">", ">=", "&&", "||":
			return "bool"
		case ",":
			return sc.TypeOf(x.Y)
		case "<<", ">>":
			t := sc.TypeOf(x.X)
			if IsIntegerType(t) {
				return Promote(t)
			}
			return ""
		}
		if assignOps[x.Op] {
			return sc.TypeOf(x.X)
		}
		a, b := sc.TypeOf(x.X), sc.TypeOf(x.Y)
		if t := ArithType(a, b); t != "" {
			return t
		}
		if a == b {
			return a
		}
		return ""
	case *CondExpr:
		a, b := sc.TypeOf(x.X), sc.TypeOf(x.Y)
		if t := ArithType(a, b); t != "" {
			return t
		}
		if a == b {
			return a
		}
	case *IndexExpr:
		return sc.accessType(x)
	case *MemberExpr:
		return sc.accessType(x)
	}
	return ""
}

// accessType returns the type of an index or member chain.
func (sc *Scope) accessType(x Expr) string {
	f := sc.File
	root, subs, members := chain(x)
	n, ok := root.(*NameExpr)
	if !ok {
		return ""
	}
	v := sc.Lookup(n.Name, n.Pos)
	if v == nil {
		return ""
	}
	t := f.CanonicalType(v.Elem)
	levels := len(v.Dims) + v.Ptr
	switch {
	case len(subs) == levels:
	case len(subs) == levels+1:
		s, _, ok := vectorScalar(t)
		if !ok {
			return ""
		}
		t = s
	default:
		return ""
	}
	// Members apply after the subscripts only in a[i].f; a.f[i] is rare.
	if len(members) > 0 {
		if _, isMember := x.(*MemberExpr); !isMember {
			return ""
		}
		for _, m := range members {
			if s, n, ok := vectorScalar(t); ok {
				if !isSwizzle(m.Name, n) {
					return ""
				}
				if len(m.Name) == 1 {
					t = s
				} else {
					t = s + string(rune('0'+len(m.Name)))
				}
				continue
			}
			ft, ok := f.FieldType(t, m.Name)
			if !ok {
				return ""
			}
			t = f.CanonicalType(ft)
		}
	}
	return t
}

// isSwizzle reports whether name is a swizzle of an n-vector.
func isSwizzle(name string, n int) bool {
	if name == "" || len(name) > 4 {
		return false
	}
	sets := []string{"xyzw", "rgba"}
	for _, set := range sets {
		ok := true
		for _, c := range name {
			i := strings.IndexRune(set, c)
			if i < 0 || i >= n {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// ElemType returns the canonical type of the elements a pointer or array
// expression designates (a pointer variable, an array, a row of a
// multi-dimensional array, p + i), or "".
func (sc *Scope) ElemType(x Expr) string {
	switch y := Unparen(x).(type) {
	case *NameExpr:
		v := sc.Lookup(y.Name, y.Pos)
		if v == nil || v.Ptr+len(v.Dims) == 0 {
			return ""
		}
		if v.Ptr+len(v.Dims) > 1 {
			return ""
		}
		return sc.File.CanonicalType(v.Elem)
	case *IndexExpr:
		root, subs, members := chain(y)
		n, ok := root.(*NameExpr)
		if !ok || len(members) > 0 {
			return ""
		}
		v := sc.Lookup(n.Name, n.Pos)
		if v == nil || len(subs) != len(v.Dims)+v.Ptr-1 {
			return ""
		}
		return sc.File.CanonicalType(v.Elem)
	case *BinaryExpr:
		if y.Op == "+" || y.Op == "-" {
			return sc.ElemType(y.X)
		}
	case *CastExpr:
		t := strings.TrimSpace(y.Type)
		if strings.HasSuffix(t, "*") {
			words := strings.Fields(strings.TrimSuffix(t, "*"))
			var keep []string
			for _, w := range words {
				if w != "const" && w != "volatile" && addrSpaces[w] == NoSpace {
					keep = append(keep, w)
				}
			}
			return sc.File.CanonicalType(strings.Join(keep, " "))
		}
	}
	return ""
}

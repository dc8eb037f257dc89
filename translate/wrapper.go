package translate

import (
	"fmt"
	"strconv"
	"strings"
)

// fields maps a thread-position attribute to its mtl_rt::ThreadCtx field
// and whether the field is a 3-vector.
var fields = map[string]struct {
	field  string
	vector bool
}{
	"thread_position_in_grid":        {"thread_position_in_grid", true},
	"thread_position_in_threadgroup": {"thread_position_in_threadgroup", true},
	"threadgroup_position_in_grid":   {"threadgroup_position_in_grid", true},
	"threads_per_threadgroup":        {"threads_per_threadgroup", true},
	"threadgroups_per_grid":          {"threadgroups_per_grid", true},
	"threads_per_grid":               {"threads_per_grid", true},
	"thread_index_in_threadgroup":    {"thread_index_in_threadgroup", false},
	"thread_index_in_simdgroup":      {"thread_index_in_simdgroup", false},
	"simdgroup_index_in_threadgroup": {"simdgroup_index_in_threadgroup", false},
	"simdgroups_per_threadgroup":     {"simdgroups_per_threadgroup", false},
	"threads_per_simdgroup":          {"threads_per_simdgroup", false},
	"thread_execution_width":         {"threads_per_simdgroup", false},
	"thread_index_in_quadgroup":      {"thread_index_in_quadgroup", false},
	"quadgroup_index_in_threadgroup": {"quadgroup_index_in_threadgroup", false},
	"quadgroups_per_threadgroup":     {"quadgroups_per_threadgroup", false},
}

// WrapperArg is the entry wrapper's argument for parameter p, in the
// wrapper both targets write: buffers and threadgroup memory come from the
// void* arrays mtl_b and mtl_tg, thread-position attributes from the
// mtl_rt::ThreadCtx mtl_c. target names the backend in errors.
func WrapperArg(p *Param, target string) (string, error) {
	switch p.Bind {
	case BindBuffer, BindThreadgroup:
		arr := "mtl_b"
		if p.Bind == BindThreadgroup {
			arr = "mtl_tg"
		}
		idx := p.IndexExpr
		if p.Index >= 0 {
			idx = strconv.Itoa(p.Index)
		} else {
			idx = "(" + idx + ")" // a constant expression the compiler evaluates
		}
		return castArg(p.Type, arr+"["+idx+"]"), nil
	}
	f, ok := fields[p.Attr]
	if !ok {
		return "", fmt.Errorf("attribute [[%s]] is not supported by the %s backend", p.Attr, target)
	}
	return threadArg(p.Type, f.field, f.vector)
}

// castArg converts a void* slot to a parameter of type typ.
func castArg(typ, slot string) string {
	typ = strings.TrimSpace(typ)
	switch {
	case strings.HasSuffix(typ, "*"):
		return fmt.Sprintf("static_cast<%s>(%s)", typ, slot)
	case strings.HasSuffix(typ, "&"):
		base := strings.TrimSpace(strings.TrimSuffix(typ, "&"))
		return fmt.Sprintf("*static_cast<%s*>(%s)", base, slot)
	}
	return fmt.Sprintf("*static_cast<%s*>(%s)", typ, slot)
}

// threadArg reads a thread attribute of the declared type from mtl_c.
func threadArg(typ, field string, vector bool) (string, error) {
	base := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(typ), "const "))
	base = strings.TrimPrefix(base, "metal::")
	n := 1
	elem := base
	if l := len(base); l > 1 && base[l-1] >= '2' && base[l-1] <= '4' {
		n = int(base[l-1] - '0')
		elem = base[:l-1]
	}
	switch elem {
	case "uint", "ushort", "int", "short", "uchar", "char", "long", "ulong", "uint32_t", "uint16_t", "int32_t", "size_t", "unsigned", "unsigned int":
	default:
		return "", fmt.Errorf("thread attribute type %q is not supported", typ)
	}
	if !vector {
		if n != 1 {
			return "", fmt.Errorf("thread attribute of type %q must be a scalar", typ)
		}
		return fmt.Sprintf("static_cast<%s>(mtl_c.%s)", base, field), nil
	}
	if n == 1 {
		return fmt.Sprintf("static_cast<%s>(mtl_c.%s[0])", base, field), nil
	}
	if n > 3 {
		return "", fmt.Errorf("thread attribute type %q has more than 3 components", typ)
	}
	comps := make([]string, n)
	for i := range comps {
		comps[i] = fmt.Sprintf("static_cast<%s>(mtl_c.%s[%d])", elem, field, i)
	}
	return fmt.Sprintf("%s(%s)", base, strings.Join(comps, ", ")), nil
}

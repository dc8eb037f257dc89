package check

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"metalab/internal/f16"
	"metalab/spec"
)

func TestParseParity(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Parity
		str  string
	}{
		{"", Parity{}, "bitwise"},
		{"bitwise", Parity{}, "bitwise"},
		{"ulp=0", Parity{Mode: ParityULP}, "ulp=0"},
		{"ulp=4", Parity{Mode: ParityULP, ULP: 4}, "ulp=4"},
		{"ulp=4294967296", Parity{Mode: ParityULP, ULP: 1 << 32}, "ulp=4294967296"},
		{"rel=1e-6", Parity{Mode: ParityRel, Rel: 1e-6}, "rel=1e-06"},
		{"rel=0.5", Parity{Mode: ParityRel, Rel: 0.5}, "rel=0.5"},
		{"rel=0", Parity{Mode: ParityRel}, "rel=0"},
	} {
		got, err := ParseParity(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseParity(%q) = %+v %q, %v; want %+v %q", tc.in, got, got.String(), err, tc.want, tc.str)
		}
		if got.Bitwise() != (tc.want.Mode == ParityBitwise) {
			t.Errorf("ParseParity(%q).Bitwise() = %v", tc.in, got.Bitwise())
		}
		back, err := ParseParity(got.String())
		if err != nil || back != got {
			t.Errorf("%q does not read back: %+v, %v", got.String(), back, err)
		}
	}
	for _, tc := range []struct {
		in, msg string
		col     int
	}{
		{"ulp", "ulp needs a count: ulp=N", 4},
		{"ulp=", "ulp= needs a count", 5},
		{"ulp=1.5", `"1.5": ulp counts whole units`, 5},
		{"ulp=-1", `"-1" is not a count`, 5},
		{"ulp=x", `"x" is not a count`, 5},
		{"ulp=4294967297", "more than any two floats are apart", 5},
		{"rel", "rel needs a bound", 4},
		{"rel=", "rel= needs a bound", 5},
		{"rel=abc", `"abc" is not a number`, 5},
		{"rel=-1e-6", "want a relative error from 0 to 1", 5},
		{"rel=NaN", "want a relative error from 0 to 1", 5},
		{"rel=2", "want a relative error from 0 to 1", 5},
		{"ulps=4", "did you mean ulp=4?", 1},
		{"rtol=1e-3", "did you mean rel=1e-3?", 1},
		{"ulp:4", "joined by '='", 4},
		{"abs=1", `unknown rule "abs"`, 1},
		{"loose", `unknown rule "loose"`, 1},
		{"exact", "want bitwise (the default), ulp=N", 1},
	} {
		_, err := ParseParity(tc.in)
		var pe *ParityError
		if !errors.As(err, &pe) || pe.Col != tc.col || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseParity(%q) = %v; want column %d and %q", tc.in, err, tc.col, tc.msg)
		}
	}
	var p Parity
	if err := json.Unmarshal([]byte(`"ulp=3"`), &p); err != nil || p != (Parity{Mode: ParityULP, ULP: 3}) {
		t.Errorf("unmarshal: %+v %v", p, err)
	}
	if b, _ := json.Marshal(Parity{Mode: ParityRel, Rel: 0.25}); string(b) != `"rel=0.25"` {
		t.Errorf("marshal: %s", b)
	}
}

func f32(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func bits32(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func u16(v ...uint16) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint16(b, x)
	}
	return b
}

func typ(t *testing.T, name string) *spec.Type {
	t.Helper()
	x, ok := spec.LookupType(name)
	if !ok {
		t.Fatalf("no type %s", name)
	}
	return x
}

// instanceOf is a one-buffer instance: an output of n elements of type t.
func instanceOf(t *spec.Type, n int, role spec.Role) *spec.Instance {
	return &spec.Instance{Case: spec.Case{Set: "s", Name: "c"}, Buffers: []*spec.Buffer{{Name: "out", Type: t, Count: n, Role: role, Size: n * t.Size}}}
}

func TestCompareParity(t *testing.T) {
	ulp2, rel := Parity{Mode: ParityULP, ULP: 2}, Parity{Mode: ParityRel, Rel: 1e-6}
	one := math.Float32bits(1)
	half := typ(t, "half")
	hone := f16.FromFloat64(1)
	bf := typ(t, "bfloat")
	bone := f16.BFloatFromFloat64(1)
	// MD<half>-like: a half, 2 bytes of padding, a float.
	md := &spec.Type{Name: "MD", Kind: spec.Struct, Size: 8, Align: 4, Fields: []spec.Field{{Name: "m", Type: half, Offset: 0}, {Name: "d", Type: typ(t, "float"), Offset: 4}}}
	for _, tc := range []struct {
		name      string
		t         *spec.Type
		p         Parity
		role      spec.Role
		want, got []byte
		ok        bool // no mismatch
		ulp       uint64
		differing int // within the rule, not bitwise
		msg       string
	}{
		{"equal", typ(t, "float"), ulp2, spec.Output, f32(1, 2), f32(1, 2), true, 0, 0, ""},
		{"1 ulp", typ(t, "float"), ulp2, spec.Output, bits32(one, one), bits32(one, one+1), true, 1, 1, ""},
		{"2 ulp below", typ(t, "float"), ulp2, spec.Output, bits32(one), bits32(one - 2), true, 2, 1, ""},
		{"3 ulp", typ(t, "float"), ulp2, spec.Output, bits32(one), bits32(one + 3), false, 0, 0, "outside ulp=2: the first is 3 ulp apart"},
		{"across zero", typ(t, "float"), ulp2, spec.Output, bits32(1), bits32(0x80000001), true, 2, 1, ""},
		{"signed zeros", typ(t, "float"), Parity{Mode: ParityULP}, spec.Output, f32(0), bits32(0x80000000), true, 0, 1, ""},
		{"signed zeros rel=0", typ(t, "float"), Parity{Mode: ParityRel}, spec.Output, f32(0), bits32(0x80000000), true, 0, 1, ""},
		{"NaN payloads", typ(t, "float"), ulp2, spec.Output, bits32(0x7fc00000), bits32(0x7fc00001), true, 0, 1, ""},
		{"NaN against 1", typ(t, "float"), ulp2, spec.Output, bits32(0x7fc00000), f32(1), false, 0, 0, "is a NaN against a number"},
		{"inf against max", typ(t, "float"), ulp2, spec.Output, f32(float32(math.Inf(1))), f32(math.MaxFloat32), false, 0, 0, "is an infinity"},
		{"rel within", typ(t, "float"), rel, spec.Output, f32(1000), f32(1000.0005), true, 8, 1, ""},
		{"rel outside", typ(t, "float"), rel, spec.Output, f32(1000), f32(1000.01), false, 0, 0, "outside rel=1e-06: the first is 164 ulp apart, relative error 1e-05"},
		{"rel zero", typ(t, "float"), Parity{Mode: ParityRel, Rel: 0.5}, spec.Output, f32(0), bits32(1), false, 0, 0, "relative error 1"},
		{"half 2 ulp", half, ulp2, spec.Output, u16(hone), u16(hone + 2), true, 2, 1, ""},
		{"half 3 ulp", half, ulp2, spec.Output, u16(hone), u16(hone + 3), false, 0, 0, "3 ulp apart"},
		{"bfloat 1 ulp", bf, ulp2, spec.Output, u16(bone), u16(bone - 1), true, 1, 1, ""},
		{"float4 lanes", typ(t, "float4"), ulp2, spec.Output, f32(1, 2, 3, 4), append(f32(1, 2, 3), bits32(math.Float32bits(4)+2)...), true, 2, 1, ""},
		{"float3 padding", typ(t, "float3"), ulp2, spec.Output, append(f32(1, 2, 3), 0, 0, 0, 0), append(f32(1, 2, 3), 1, 0, 0, 0), true, 0, 0, ""},
		{"float3 padding and a lane", typ(t, "float3"), ulp2, spec.Output, append(f32(1, 2, 3), 0, 0, 0, 0), append(f32(1, 2), append(bits32(math.Float32bits(3)+1), 1, 0, 0, 0)...), true, 1, 1, ""},
		{"int", typ(t, "int"), ulp2, spec.Output, bits32(1), bits32(2), false, 0, 0, "integer component"},
		{"input buffer", typ(t, "float"), ulp2, spec.Input, bits32(one), bits32(one + 1), false, 0, 0, "an input buffer is compared bitwise"},
		{"struct member", md, ulp2, spec.Output, append(u16(hone, 0), f32(1)...), append(u16(hone+1, 0), bits32(one+2)...), true, 2, 1, ""},
		{"struct padding", md, ulp2, spec.Output, append(u16(hone, 0), f32(1)...), append(u16(hone, 7), f32(1)...), true, 0, 0, ""},
		{"struct int member", &spec.Type{Name: "S", Kind: spec.Struct, Size: 8, Align: 4, Fields: []spec.Field{{Name: "m", Type: half, Offset: 0}, {Name: "i", Type: typ(t, "int"), Offset: 4}}},
			ulp2, spec.Output, append(u16(hone, 0), bits32(1)...), append(u16(hone, 0), bits32(2)...), false, 0, 0, "integer component"},
	} {
		n := len(tc.want) / tc.t.Size
		in := instanceOf(tc.t, n, tc.role)
		m, tol := CompareParity(in, map[string][]byte{"out": tc.want}, map[string][]byte{"out": tc.got}, tc.p)
		if (m == nil) != tc.ok {
			t.Errorf("%s: mismatch %+v, want ok %v", tc.name, m, tc.ok)
			continue
		}
		if m != nil && !strings.Contains(m.Msg, tc.msg) {
			t.Errorf("%s: message %q, want %q", tc.name, m.Msg, tc.msg)
		}
		if tol == nil || tol.Rule != tc.p.String() {
			t.Fatalf("%s: tolerance %+v", tc.name, tol)
		}
		if tc.ok && (tol.MaxULP != tc.ulp || tol.Differing != tc.differing || tol.Bitwise != (tc.differing == 0)) {
			t.Errorf("%s: tolerance %+v, want max %d ulp, %d differing", tc.name, tol, tc.ulp, tc.differing)
		}
		if bm := Compare(in, map[string][]byte{"out": tc.want}, map[string][]byte{"out": tc.got}); (bm == nil) != (tc.differing == 0 && tc.ok) {
			t.Errorf("%s: the bitwise rule gives %+v", tc.name, bm)
		}
		if m, tol := CompareParity(in, map[string][]byte{"out": tc.want}, map[string][]byte{"out": tc.got}, Parity{}); tol != nil || (m == nil) != (tc.differing == 0 && tc.ok) {
			t.Errorf("%s: CompareParity bitwise gives %+v, %+v", tc.name, m, tol)
		}
	}
}

// TestCompareParitySlack: slack bytes and lengths are bitwise under any
// rule, and the largest deviation is located by the rule's measure.
func TestCompareParitySlack(t *testing.T) {
	ft := typ(t, "float")
	in := instanceOf(ft, 2, spec.Output)
	in.Buffers[0].Slack, in.Buffers[0].Size = 4, 12
	one := math.Float32bits(1)
	p := Parity{Mode: ParityULP, ULP: 8}
	m, _ := CompareParity(in, map[string][]byte{"out": bits32(one, one, 0)}, map[string][]byte{"out": bits32(one, one, 1)}, p)
	if m == nil || !strings.Contains(m.Msg, "slack bytes are compared bitwise") {
		t.Errorf("slack: %+v", m)
	}
	m, _ = CompareParity(in, map[string][]byte{"out": bits32(one, one, 0)}, map[string][]byte{"out": bits32(one, one)}, p)
	if m == nil || !strings.Contains(m.Msg, "length 8 bytes, want 12") {
		t.Errorf("length: %+v", m)
	}
	m, tol := CompareParity(in, map[string][]byte{"out": bits32(one, one, 0)}, map[string][]byte{"out": bits32(one+1, one+5, 0)}, p)
	if m != nil || tol.MaxULP != 5 || tol.Element != 1 || tol.Differing != 2 || tol.Cases != 1 || tol.Case != "s/c" || tol.Buffer != "out" {
		t.Errorf("largest: %+v %+v", m, tol)
	}
	if txt := tol.Text(); txt != "not bitwise (ulp=8): max 5 ulp, rel 6e-07 at s/c out[1]" {
		t.Errorf("text %q", txt)
	}
	all := newTolerance(p)
	all.add(p, tol)
	all.add(p, &Tolerance{Rule: "ulp=8", MaxULP: 3, MaxRel: 1e-3, Differing: 1, Cases: 1, Case: "s/d", Element: 0})
	if all.Bitwise || all.MaxULP != 5 || all.MaxRel != 1e-3 || all.Case != "s/c" || all.Differing != 3 || all.Cases != 2 {
		t.Errorf("merged %+v", all)
	}
}

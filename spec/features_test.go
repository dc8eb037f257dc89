package spec

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestIndexSpacesAndMultipleBindings(t *testing.T) {
	src := strings.Replace(base, "stages:", "  - {name: tg, index: 0, type: float, count: 8, role: threadgroup}\nstages:", 1)
	src = strings.Replace(src, "threads: [N]}", "threads: [N], bind: {a: [0, 3]}}", 1)
	s, err := Parse("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	in := mustInstances(t, s)[0]
	var got []string
	for _, b := range in.Stages[0].Bindings {
		got = append(got, fmt.Sprintf("%s@%d/%v", b.Buffer, b.Index, b.Threadgroup))
	}
	if want := "a@0/false o@1/false a@3/false tg@0/true"; strings.Join(got, " ") != want {
		t.Errorf("bindings %v, want %s", got, want)
	}
	if p := in.Stages[0].Bindings[2].Pos; p.Line != 7 || p.Column != 63 {
		t.Errorf("bind position %v, want k.yaml:7:63", p)
	}
}

func TestStructElementValues(t *testing.T) {
	src := `source: k.metal
structs:
  P:
    - {name: n, type: uint, value: N}
    - {name: w, type: float, len: 3, value: [1, "N / 2", 0.25]}
    - {name: r, type: int, len: 4, value: "i * 10 + j"}
    - {name: v, type: float2, value: [-1, 1]}
    - {name: m, type: short2, len: 2, value: [[1, 2], 3]}
buffers:
  - {name: p, index: 0, type: P, count: 2, role: input, values: {w: [7, 8, 9]}}
  - {name: o, index: 1, type: float, count: 1, role: output}
stages:
  - {entry: k, threadgroups: [1], threads: [1]}
sets:
  s:
    cases: [{N: 6}]
`
	s, err := Parse("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	in := mustInstances(t, s)[0]
	got := Decode(s.Structs["P"], in.Buffer("p").Data)
	want := []float64{
		6, 7, 8, 9, 0, 1, 2, 3, -1, 1, 1, 2, 3, 3,
		6, 7, 8, 9, 10, 11, 12, 13, -1, 1, 1, 2, 3, 3,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decoded %v\nwant    %v", got, want)
	}
	// The struct's own list applies where the buffer overrides nothing.
	s2, err := Parse("k.yaml", []byte(strings.Replace(src, ", values: {w: [7, 8, 9]}", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := Decode(s2.Structs["P"], mustInstances(t, s2)[0].Buffer("p").Data); fmt.Sprint(got[1:4]) != "[1 3 0.25]" {
		t.Errorf("struct default w = %v, want [1 3 0.25]", got[1:4])
	}
}

func TestSlack(t *testing.T) {
	src := `source: k.metal
structs:
  P:
    - {name: n, type: uint, value: i + 1}
buffers:
  - {name: a, index: 0, type: half, count: 5, role: input, gen: {kind: uniform, min: -1, max: 1}, slack: SL}
  - {name: c, index: 1, type: float, count: 4, role: inout, gen: {kind: iota, start: 1}, slack: SL}
  - {name: ids, index: 2, type: int, count: 64, role: input, gen: {kind: selected-ids, rows: 1, pos0: 3, count: 2}, slack: SL}
  - {name: p, index: 3, type: P, count: 1, role: input, slack: SL}
  - {name: o, index: 4, type: float, count: 3, role: output, sentinel: "0102", slack: SL}
  - {name: tg, index: 0, type: float, count: 4, role: threadgroup, slack: SL}
stages:
  - {entry: k, threadgroups: [1], threads: [1]}
sets:
  s:
    cases: [{name: c, SL: 0}, {name: c2, SL: 6}]
`
	s, err := Parse("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := s.Cases()
	plain, err := s.Instantiate(cs[0])
	if err != nil {
		t.Fatal(err)
	}
	c := cs[1]
	c.Name = "c" // the same case name, so the same random streams
	slack, err := s.Instantiate(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range slack.Buffers {
		p := plain.Buffer(b.Name)
		if b.Slack != 6 || b.Size != p.Size+6 {
			t.Errorf("%s: slack %d size %d, want 6 and %d", b.Name, b.Slack, b.Size, p.Size+6)
		}
		if b.Role == Threadgroup {
			continue
		}
		if len(b.Data) != b.Size {
			t.Errorf("%s: %d bytes of data, want %d", b.Name, len(b.Data), b.Size)
		}
		if !bytes.Equal(b.Elems(b.Data), p.Data) {
			t.Errorf("%s: slack changed the data's bytes", b.Name)
		}
	}
	// Slack continues the data: the generator's stream, iota, -1 padding,
	// struct elements and the sentinel pattern.
	if got := slack.Buffer("c").SlackBytes(slack.Buffer("c").Data); !bytes.Equal(got, []byte{0, 0, 0xa0, 0x40, 0, 0}) {
		t.Errorf("iota slack % x, want 5.0f then the first half of 6.0f", got)
	}
	if got := slack.Buffer("ids").SlackBytes(slack.Buffer("ids").Data); !bytes.Equal(got, bytes.Repeat([]byte{0xff}, 6)) {
		t.Errorf("selected-ids slack % x, want -1 padding", got)
	}
	if got := slack.Buffer("p").SlackBytes(slack.Buffer("p").Data); !bytes.Equal(got, []byte{2, 0, 0, 0, 3, 0}) {
		t.Errorf("struct slack % x, want elements i = 1, 2", got)
	}
	if got := slack.Buffer("o").SlackBytes(slack.Buffer("o").Data); !bytes.Equal(got, []byte{1, 2, 1, 2, 1, 2}) {
		t.Errorf("output slack % x, want the sentinel", got)
	}
	a := slack.Buffer("a").SlackBytes(slack.Buffer("a").Data)
	if vals := Decode(slack.Buffer("a").Type, a); len(vals) != 3 || vals[0] < -1 || vals[0] > 1 || bytes.Equal(a, make([]byte, 6)) {
		t.Errorf("uniform slack %v (% x), want generated halves in [-1, 1]", vals, a)
	}
}

package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/color"
	"io"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

func goldenInput(t *testing.T, name string) *Input {
	t.Helper()
	ar, err := txtar.ParseFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return decodeInput(t, section(t, ar, "input.json"))
}

// svgMarks parses b as XML and counts its path elements by the colour
// they are filled or stroked with.
func svgMarks(t *testing.T, b []byte) (fills, strokes map[string]int) {
	t.Helper()
	fills, strokes = map[string]int{}, map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		if se.Name.Local != "path" {
			continue
		}
		for _, a := range se.Attr {
			if a.Name.Local != "style" {
				continue
			}
			for _, decl := range strings.Split(a.Value, ";") {
				k, v, _ := strings.Cut(decl, ":")
				switch k {
				case "fill":
					fills[v]++
				case "stroke":
					strokes[v]++
				}
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return fills, strokes
}

func hexColor(c color.RGBA) string { return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B) }

func TestPlots(t *testing.T) {
	in := goldenInput(t, "metal_confirm.txtar")
	plots, files, err := Plots(in)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		kind, variant, c string
		points, bars     int
		panels           int
	}
	v1, v2 := in.Variants[0].Name, in.Variants[1].Name
	wants := []want{
		{kind: "pairs", variant: v1, points: 56, panels: 4}, // 4 cases × 7 pairs × A and B
		{kind: "pairs", variant: v2, points: 56, panels: 4},
		{kind: "ratio", c: "pos0=0", points: 3, bars: 3},    // 3 timed variants
		{kind: "ratio", c: "pos0=2048", points: 3, bars: 3}, //
		{kind: "ratio", c: "pos0=8192", points: 4, bars: 4}, // and a control
		{kind: "ratio", c: "pos0=30000", points: 4, bars: 4},
	}
	if len(plots) != len(wants) {
		t.Fatalf("%d plots, want %d: %+v", len(plots), len(wants), plots)
	}
	for i, w := range wants {
		p := plots[i]
		if p.Kind != w.kind || p.Variant != w.variant || p.Case != w.c || p.Points != w.points || p.Bars != w.bars {
			t.Errorf("plot %d = %+v, want %+v", i, p, w)
		}
		b, ok := files[p.File]
		if !ok {
			t.Fatalf("no file for %s", p.File)
		}
		fills, strokes := svgMarks(t, b)
		switch p.Kind {
		case "pairs":
			// The legend above the panels shows one mark of each side.
			if a, bb := fills[hexColor(colorA)], fills[hexColor(colorB)]; a != w.points/2+1 || bb != w.points/2+1 {
				t.Errorf("%s: %d A and %d B marks, want %d each (samples and one legend mark)", p.File, a, bb, w.points/2+1)
			}
		case "ratio":
			if n := fills[hexColor(colorRatio)]; n != w.points {
				t.Errorf("%s: %d ratio marks, want %d", p.File, n, w.points)
			}
			if n := strokes[hexColor(colorBar)]; n != w.bars {
				t.Errorf("%s: %d interval bars, want %d", p.File, n, w.bars)
			}
			if n := strokes[hexColor(colorRef)]; n != 1 {
				t.Errorf("%s: %d reference lines, want 1", p.File, n)
			}
		}
	}

	// Deterministic: the same input draws the same bytes.
	_, again, err := Plots(in)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if !bytes.Equal(again[name], b) {
			t.Errorf("%s differs between two renderings of one input", name)
		}
	}
}

func TestPlotsSkipWithoutSamples(t *testing.T) {
	in := goldenInput(t, "nothing_timed.txtar")
	plots, files, err := Plots(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(plots) != 0 || len(files) != 0 {
		t.Errorf("a sweep with no timings has plots %+v", plots)
	}
}

func TestPlotFileNames(t *testing.T) {
	n := newNamer()
	for _, tt := range []struct{ kind, what, want string }{
		{"pairs", "unroll.f.0=full-1a2b", "plots/pairs-unroll.f.0-full-1a2b.svg"},
		{"ratio", "pos0=30000", "plots/ratio-pos0-30000.svg"},
		{"ratio", "pos0 30000", "plots/ratio-pos0_30000.svg"},
		{"ratio", "pos0/30000", "plots/ratio-pos0_30000-2.svg"}, // the same slug as the one before
		{"ratio", "../../etc", "plots/ratio-_.._etc.svg"},
	} {
		if got := n.file(tt.kind, tt.what); got != tt.want {
			t.Errorf("file(%q, %q) = %q, want %q", tt.kind, tt.what, got, tt.want)
		}
	}
}

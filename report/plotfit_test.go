package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// viewerSlack is how much wider than the plots' font, Liberation Serif,
// a viewer's fallback may draw text: DejaVu Serif, measured at 1.24 to
// 1.30 times as wide on a plot's labels. It is the test's own, not the
// layout's fontSlack, so that a layout with too little slack fails.
const viewerSlack = 1.3

// An svgText is a text element of a plot, in the plot's coordinates (y
// up from the bottom), with its baseline at y.
type svgText struct {
	x, y, size float64
	text       string
	up         bool // rotated a quarter turn: it runs up from x, y
}

// A svgDoc is what the fit tests read from a plot: its size, its texts
// and the centres of its marks (the glyphs of samples and ratios).
type svgDoc struct {
	w, h  float64
	texts []svgText
	marks [][2]float64
}

var (
	fontSizeRE = regexp.MustCompile(`font-size:([0-9.]+)px`)
	pathCmdRE  = regexp.MustCompile(`[MLAZ][^MLAZ]*`)
	pairRE     = regexp.MustCompile(`(-?[0-9.]+),(-?[0-9.]+)`)
)

func parseSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	var d svgDoc
	markColors := map[string]bool{hexColor(colorA): true, hexColor(colorB): true, hexColor(colorRatio): true}
	dec := xml.NewDecoder(bytes.NewReader(b))
	var cur *svgText
	var groups []bool // per open g: whether it rotates a quarter turn
	rotated := func() bool {
		n := 0
		for _, r := range groups {
			if r {
				n++
			}
		}
		if n > 1 {
			t.Fatalf("nested rotations: not the form this test reads")
		}
		return n == 1
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch e.Name.Local {
			case "g":
				tr := attr["transform"]
				switch {
				case tr == "rotate(90)":
					groups = append(groups, true)
				case tr == "" || strings.HasPrefix(tr, "scale(1, -1) translate(0, "):
					groups = append(groups, false)
				default:
					t.Fatalf("group transform %q: not the form this test reads", tr)
				}
			case "svg":
				vb := strings.Fields(attr["viewBox"])
				if len(vb) != 4 {
					t.Fatalf("svg viewBox %q", attr["viewBox"])
				}
				d.w, _ = strconv.ParseFloat(vb[2], 64)
				d.h, _ = strconv.ParseFloat(vb[3], 64)
			case "text":
				x, _ := strconv.ParseFloat(attr["x"], 64)
				y, _ := strconv.ParseFloat(attr["y"], 64)
				m := fontSizeRE.FindStringSubmatch(attr["style"])
				if m == nil || attr["transform"] != "scale(1, -1)" {
					t.Fatalf("text %v: not the form this test reads", attr)
				}
				size, _ := strconv.ParseFloat(m[1], 64)
				cur = &svgText{x: x, y: -y, size: size}
				if rotated() {
					// rotate(90) of scale(1, -1): the baseline starts at
					// (y, x) and runs up, the glyphs' tops towards -x.
					cur = &svgText{x: y, y: x, size: size, up: true}
				}
			case "path":
				fill := ""
				for _, decl := range strings.Split(attr["style"], ";") {
					if k, v, _ := strings.Cut(decl, ":"); k == "fill" {
						fill = v
					}
				}
				if !markColors[fill] {
					continue
				}
				var xs, ys []float64
				for _, cmd := range pathCmdRE.FindAllString(attr["d"], -1) {
					ps := pairRE.FindAllStringSubmatch(cmd, -1)
					if len(ps) == 0 {
						continue
					}
					p := ps[len(ps)-1] // an arc's end point, after its radii
					x, _ := strconv.ParseFloat(p[1], 64)
					y, _ := strconv.ParseFloat(p[2], 64)
					xs, ys = append(xs, x), append(ys, y)
				}
				if len(xs) == 0 {
					t.Fatalf("mark path %q has no points", attr["d"])
				}
				var cx, cy float64
				for i := range xs {
					cx, cy = cx+xs[i], cy+ys[i]
				}
				d.marks = append(d.marks, [2]float64{cx / float64(len(xs)), cy / float64(len(xs))})
			}
		case xml.CharData:
			if cur != nil {
				cur.text += string(e)
			}
		case xml.EndElement:
			if e.Name.Local == "g" && len(groups) > 0 {
				groups = groups[:len(groups)-1]
			}
			if e.Name.Local == "text" && cur != nil {
				d.texts = append(d.texts, *cur)
				cur = nil
			}
		}
	}
	return d
}

// box is a text's extent: its width in the plots' font times slack, its
// height from a descender's bottom (0.22 em below the baseline) to a
// capital's top (0.72 em above it).
func (s svgText) box(slack float64) (x0, y0, x1, y1 float64) {
	sty := textStyle(vg.Length(s.size))
	w := float64(sty.Width(s.text)) * slack
	down, up := 0.22*s.size, 0.72*s.size
	if s.up {
		return s.x - up, s.y, s.x + down, s.y + w
	}
	return s.x, s.y - down, s.x + w, s.y + up
}

// checkFit fails when a text of the plot would be clipped by the canvas
// drawn in a font viewerSlack times as wide as the plots', when two texts
// overlap, when a text covers a mark, or when a text is cut short.
func checkFit(t *testing.T, name string, b []byte) svgDoc {
	t.Helper()
	d := parseSVG(t, b)
	if d.w <= 0 || d.h <= 0 || len(d.texts) == 0 {
		t.Fatalf("%s: canvas %gx%g with %d texts", name, d.w, d.h, len(d.texts))
	}
	const eps = 0.01
	for _, s := range d.texts {
		x0, y0, x1, y1 := s.box(viewerSlack)
		if x0 < -eps || y0 < -eps || x1 > d.w+eps || y1 > d.h+eps {
			t.Errorf("%s: %q (%gpx at %.1f,%.1f) reaches [%.1f, %.1f]x[%.1f, %.1f], outside the %gx%g canvas in a font %.1f times as wide",
				name, s.text, s.size, s.x, s.y, x0, x1, y0, y1, d.w, d.h, viewerSlack)
		}
		if strings.Contains(s.text, "…") {
			t.Errorf("%s: %q is cut short", name, s.text)
		}
	}
	for i, a := range d.texts {
		ax0, ay0, ax1, ay1 := a.box(1)
		for _, b := range d.texts[i+1:] {
			bx0, by0, bx1, by1 := b.box(1)
			if ax0 < bx1-eps && bx0 < ax1-eps && ay0 < by1-eps && by0 < ay1-eps {
				t.Errorf("%s: %q and %q overlap", name, a.text, b.text)
			}
		}
		for _, m := range d.marks {
			if ax0 < m[0] && m[0] < ax1 && ay0 < m[1] && m[1] < ay1 {
				t.Errorf("%s: %q covers a mark at %.1f,%.1f", name, a.text, m[0], m[1])
			}
		}
	}
	return d
}

// allText is every text of a plot run together, so that a name wrapped
// over lines at its separators reads whole.
func allText(d svgDoc) string {
	var b strings.Builder
	for _, s := range d.texts {
		b.WriteString(strings.TrimSpace(s.text))
	}
	return b.String()
}

// longInput is a sweep whose names, labels, cases and file names are
// longer than any plot's minimum width.
func longInput(t *testing.T) *Input {
	in := goldenInput(t, "hand_tune_tolerance.txtar")
	long := "drop-barrier.qsa_flash_prompt_kernel.1=drop+unroll-pragma.qsa_flash_prompt_kernel.3=full+hoist.qsa_flash_prompt_kernel.7=hoist-5e0d7c21"
	in.Variants[0].Name = long
	in.Variants[0].Label = "+ drop the second chunk barrier after pre-adding the k offsets of every simd group in the tile loop"
	in.Variants[1].File = "variants/some/deep/directory/of/hand-written/variants/my_single_barrier_norm_rope_with_one_barrier.metal"
	in.Variants[2].Label = "hand-written " + in.Variants[2].File + ", two 32x64 gemms into one buffer" // the label names the file
	for i := range in.Variants {
		for j := range in.Variants[i].Cases {
			in.Variants[i].Cases[j].Case = "quick/full-size-prompt-with-a-case-name-that-goes-on-and-on=30000"
		}
	}
	for i := range in.Controls {
		in.Controls[i].Case = "quick/full-size-prompt-with-a-case-name-that-goes-on-and-on=30000"
	}
	in.Plan.Cases = []string{"quick/full-size-prompt-with-a-case-name-that-goes-on-and-on=30000"}
	in.Contamination = nil
	return in
}

// TestPlotsFit: no text of any plot is clipped, cut short or laid over
// another text or a mark, and every timed variant is named by its id in
// full in its pairs plot and in the ratio plot of each case it was timed
// at.
func TestPlotsFit(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]*Input{"long names": longInput(t)}
	for _, f := range files {
		inputs[filepath.Base(f)] = goldenInput(t, filepath.Base(f))
	}
	drawn := 0
	for what, in := range inputs {
		plots, svgs, err := Plots(in)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, p := range plots {
			d := checkFit(t, what+": "+p.File, svgs[p.File])
			drawn++
			text := allText(d)
			for _, v := range in.Variants {
				timedHere := false
				for _, c := range v.Cases {
					if c.Timing != nil && (p.Kind == "pairs" || c.Case == p.Case) {
						timedHere = true
					}
				}
				if !timedHere || (p.Kind == "pairs" && p.Variant != v.Name) {
					continue
				}
				if !strings.Contains(text, v.Name) {
					t.Errorf("%s: %s: the variant %s is not named in full", what, p.File, v.Name)
				}
				if v.File != "" && strings.Count(text, v.File) != 1 {
					t.Errorf("%s: %s: the file %s of %s is named %d times, want once", what, p.File, v.File, v.Name, strings.Count(text, v.File))
				}
				if v.Point != "" && !strings.Contains(strings.ReplaceAll(text, " ", ""), strings.ReplaceAll(v.Point, " ", "")) {
					t.Errorf("%s: %s: the point %s of %s is not shown", what, p.File, v.Point, v.Name)
				}
			}
		}
	}
	if drawn < 10 {
		t.Errorf("only %d plots checked", drawn)
	}
}

// TestWrap: wrapped lines fit their width, and they break only at spaces
// or after a name's separators, never inside a word.
func TestWrap(t *testing.T) {
	for _, tt := range []struct {
		s     string
		width vg.Length
	}{
		{"paired samples of drop-barrier.qsa_flash.1=drop+unroll-pragma.qsa_flash.3=full-5e0d7c21", 200},
		{"drop-barrier.qsa_flash.1=drop+unroll-pragma.qsa_flash.3=full-5e0d7c21 · gain +2.10% faster", 100},
		{"drop-barrier.qsa_flash.1=drop+unroll-pragma.qsa_flash.3=full-5e0d7c21 · gain +2.10% faster", 150},
		{"drop-barrier.qsa_flash.1=drop+unroll-pragma.qsa_flash.3=full-5e0d7c21 · gain +2.10% faster", 250},
		{"at NSG=4 TILE=32 · hand-written variants/my_single_barrier.metal · not bitwise", 150},
		{"short", 400},
		{"", 100},
		{"supercalifragilisticexpialidocious", 40}, // no separator: cut where it must be
	} {
		lines := wrap(tt.s, textSize, tt.width)
		pos := 0
		for i, l := range lines {
			if !strings.HasPrefix(tt.s[pos:], l) {
				t.Fatalf("wrap(%q) = %q: line %d is not the text at %d", tt.s, lines, i, pos)
			}
			pos += len(l)
			if textWidth(l, textSize) > tt.width && len([]rune(l)) > 1 {
				t.Errorf("wrap(%q, %v): line %q is %v wide", tt.s, tt.width, l, textWidth(l, textSize))
			}
			if i == len(lines)-1 {
				continue
			}
			// A break is at a space of the text, or after a separator,
			// or in a run without either (cut where it must be).
			switch {
			case strings.HasPrefix(tt.s[pos:], " "):
				pos++
			case strings.ContainsAny(l[len(l)-1:], ".+=/-_,"):
			case !strings.ContainsAny(tt.s, " .+=/-_,"):
			default:
				t.Errorf("wrap(%q) = %q: breaks inside a word after line %q", tt.s, lines, l)
			}
		}
		if pos != len(tt.s) {
			t.Errorf("wrap(%q) = %q: the text goes on after the lines", tt.s, lines)
		}
	}
	if got := fmt.Sprint(wrap("a b", textSize, 400)); got != "[a b]" {
		t.Errorf("wrap(a b) = %s", got)
	}
}

package report

import (
	"bytes"
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgsvg" // the svg format of draw.NewFormattedCanvas
)

// A Plot is one SVG file of a report.
type Plot struct {
	File    string `json:"file"`              // relative to the report directory
	Kind    string `json:"kind"`              // "pairs" or "ratio"
	Title   string `json:"title"`             // what it shows, in words
	Variant string `json:"variant,omitempty"` // pairs: the variant
	Case    string `json:"case,omitempty"`    // ratio: the case
	Points  int    `json:"points"`            // pairs: samples drawn (A and B); ratio: ratios drawn
	Bars    int    `json:"bars"`              // ratio: intervals drawn
}

// Colours of the plots' marks. Each kind of mark has its own colour, so
// a test can count the marks in the SVG.
var (
	colorA     = color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF} // side A, the baseline
	colorB     = color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF} // side B, the variant
	colorRatio = color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF} // a median pair ratio
	colorBar   = color.RGBA{R: 0x33, G: 0x33, B: 0x33, A: 0xFF} // its interval
	colorRef   = color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xFF} // ratio 1: no change
)

// Plots returns the report's plots and their SVG bytes by file name: for
// each variant with raw pairs, its samples per pair index (A and B), a
// panel per case; for each case with a timed variant or control, every
// median pair ratio there with its interval. The SVG holds no time stamp:
// the same input gives the same bytes.
func Plots(in *Input) ([]Plot, map[string][]byte, error) {
	if err := in.Validate(); err != nil {
		return nil, nil, err
	}
	files := map[string][]byte{}
	var plots []Plot
	names := newNamer()
	for _, v := range in.Variants {
		var cases []Case
		for _, c := range v.Cases {
			if c.Timing != nil && len(c.Timing.Samples) > 0 {
				cases = append(cases, c)
			}
		}
		if len(cases) == 0 {
			continue
		}
		b, n, err := pairsSVG(v, cases)
		if err != nil {
			return nil, nil, fmt.Errorf("plot pairs of %s: %w", v.Name, err)
		}
		p := Plot{File: names.file("pairs", v.Name), Kind: "pairs", Title: "paired samples of " + v.Name, Variant: v.Name, Points: n}
		plots = append(plots, p)
		files[p.File] = b
	}
	for _, c := range caseOrder(in) {
		rows := ratioRows(in, c)
		if len(rows) == 0 {
			continue
		}
		b, bars, err := ratioSVG(c, rows, in.Plan.CILevel)
		if err != nil {
			return nil, nil, fmt.Errorf("plot ratios at %s: %w", c, err)
		}
		p := Plot{File: names.file("ratio", c), Kind: "ratio", Title: "median pair ratios at " + c, Case: c, Points: len(rows), Bars: bars}
		plots = append(plots, p)
		files[p.File] = b
	}
	return plots, files, nil
}

// namer gives each plot a file name safe on every file system, unique in
// the report.
type namer map[string]bool

func newNamer() namer { return namer{} }

func (n namer) file(kind, what string) string {
	var b strings.Builder
	for _, r := range what {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '-', r == '.', r == '_':
			b.WriteRune(r)
		case r == '=':
			b.WriteString("-")
		default:
			b.WriteString("_")
		}
	}
	slug := strings.Trim(b.String(), ".")
	if len(slug) > 120 {
		slug = slug[:120]
	}
	base := "plots/" + kind + "-" + slug
	name := base + ".svg"
	for i := 2; n[strings.ToLower(name)]; i++ {
		name = fmt.Sprintf("%s-%d.svg", base, i)
	}
	n[strings.ToLower(name)] = true
	return name
}

// caseOrder lists the cases timed, the plan's first, then in order of
// appearance.
func caseOrder(in *Input) []string {
	seen := map[string]bool{}
	var out []string
	add := func(c string) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, c := range in.Plan.Cases {
		add(c)
	}
	for _, v := range in.Variants {
		for _, c := range v.Cases {
			if c.Timing != nil {
				add(c.Case)
			}
		}
	}
	for _, c := range in.Controls {
		add(c.Case)
	}
	return out
}

type ratioRow struct {
	label string
	ratio float64
	ci    *Interval
}

// ratioRows lists the ratios at case c: controls first, then variants.
func ratioRows(in *Input, c string) []ratioRow {
	var rows []ratioRow
	for _, ctl := range in.Controls {
		if ctl.Case == c {
			label := "control"
			if ctl.Phase != "" {
				label += " (" + ctl.Phase + ")"
			}
			rows = append(rows, ratioRow{label: label, ratio: ctl.Ratio, ci: &Interval{Low: ctl.RatioMin, High: ctl.RatioMax}})
		}
	}
	for _, v := range in.Variants {
		for _, vc := range v.Cases {
			if vc.Case == c && vc.Timing != nil {
				label := v.Name
				if v.Label != "" {
					label = v.Label
				}
				rows = append(rows, ratioRow{label: shorten(label, 48), ratio: vc.Timing.Ratio, ci: vc.Timing.CI})
			}
		}
	}
	return rows
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// canvasFormat is the format plots are drawn in.
const canvasFormat = "svg"

const (
	plotWidth  = 6 * vg.Inch
	panelH     = 2.5 * vg.Inch
	ratioRowH  = 0.35 * vg.Inch
	ratioExtra = 1.2 * vg.Inch
)

// pairsSVG draws a variant's samples, one panel per case, and returns the
// SVG and the number of samples drawn.
func pairsSVG(v Variant, cases []Case) ([]byte, int, error) {
	var panels [][]*plot.Plot
	n := 0
	for _, c := range cases {
		var ns []float64
		for _, s := range c.Timing.Samples {
			ns = append(ns, s.A, s.B)
		}
		u := pickUnit(ns)
		a := make(plotter.XYs, len(c.Timing.Samples))
		b := make(plotter.XYs, len(c.Timing.Samples))
		for i, s := range c.Timing.Samples {
			a[i] = plotter.XY{X: float64(s.Index), Y: s.A / u.ns}
			b[i] = plotter.XY{X: float64(s.Index), Y: s.B / u.ns}
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s at %s", shorten(v.Name, 60), c.Case)
		p.X.Label.Text = "pair"
		p.Y.Label.Text = "duration, " + u.name
		sa, err := plotter.NewScatter(a)
		if err != nil {
			return nil, 0, err
		}
		sa.GlyphStyle = draw.GlyphStyle{Color: colorA, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		sb, err := plotter.NewScatter(b)
		if err != nil {
			return nil, 0, err
		}
		sb.GlyphStyle = draw.GlyphStyle{Color: colorB, Radius: vg.Points(2.5), Shape: draw.PyramidGlyph{}}
		p.Add(plotter.NewGrid(), sa, sb)
		p.Legend.Add("A: baseline", sa)
		p.Legend.Add("B: variant", sb)
		p.Legend.Top = true
		// Room above the samples for the legend, and half a pair on each
		// side so no sample sits on an axis.
		lo, hi := p.Y.Min, p.Y.Max
		if hi == lo {
			hi = lo + 1
		}
		p.Y.Max = hi + (hi-lo)*0.35
		p.X.Min, p.X.Max = p.X.Min-0.5, p.X.Max+0.5
		panels = append(panels, []*plot.Plot{p})
		n += len(a) + len(b)
	}
	c, err := draw.NewFormattedCanvas(plotWidth, panelH*vg.Length(len(panels)), canvasFormat)
	if err != nil {
		return nil, 0, err
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(12)}
	canvases := plot.Align(panels, tiles, dc)
	for i := range panels {
		panels[i][0].Draw(canvases[i][0])
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), n, nil
}

// ratioSVG draws each row's ratio with its interval and a line at 1, and
// returns the SVG and the number of intervals drawn.
func ratioSVG(c string, rows []ratioRow, level float64) ([]byte, int, error) {
	p := plot.New()
	p.Title.Text = "median pair ratio after/before at " + c
	p.X.Label.Text = "ratio (1 = no change, below 1 = faster)"
	if level > 0 {
		p.X.Label.Text += "; bars: " + pct(level) + " interval, controls: spread"
	}
	labels := make([]string, len(rows))
	for i, r := range rows {
		labels[len(rows)-1-i] = r.label // first row on top
	}
	iv := &intervals{rows: rows}
	p.Add(plotter.NewGrid(), iv)
	p.NominalY(labels...)
	var buf bytes.Buffer
	wt, err := p.WriterTo(plotWidth, ratioRowH*vg.Length(len(rows))+ratioExtra, canvasFormat)
	if err != nil {
		return nil, 0, err
	}
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), iv.bars, nil
}

// intervals is a plotter of ratios with their intervals, row i at y =
// len-1-i, each interval one stroked path with its caps, each ratio one
// glyph.
type intervals struct {
	rows []ratioRow
	bars int
}

func (iv *intervals) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = 1, 1
	for _, r := range iv.rows {
		lo, hi := r.ratio, r.ratio
		if r.ci != nil {
			lo, hi = min(lo, r.ci.Low), max(hi, r.ci.High)
		}
		xmin, xmax = min(xmin, lo), max(xmax, hi)
	}
	pad := (xmax - xmin) * 0.05
	if pad == 0 {
		pad = 0.01
	}
	return xmin - pad, xmax + pad, -0.5, float64(len(iv.rows)) - 0.5
}

func (iv *intervals) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ref := vg.Path{}
	ref.Move(vg.Point{X: trX(1), Y: c.Min.Y})
	ref.Line(vg.Point{X: trX(1), Y: c.Max.Y})
	c.SetLineStyle(draw.LineStyle{Color: colorRef, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	c.Stroke(ref)
	iv.bars = 0
	capH := vg.Points(4)
	for i, r := range iv.rows {
		y := trY(float64(len(iv.rows) - 1 - i))
		if r.ci != nil {
			lo, hi := trX(r.ci.Low), trX(r.ci.High)
			bar := vg.Path{}
			bar.Move(vg.Point{X: lo, Y: y - capH})
			bar.Line(vg.Point{X: lo, Y: y + capH})
			bar.Move(vg.Point{X: lo, Y: y})
			bar.Line(vg.Point{X: hi, Y: y})
			bar.Move(vg.Point{X: hi, Y: y - capH})
			bar.Line(vg.Point{X: hi, Y: y + capH})
			c.SetLineStyle(draw.LineStyle{Color: colorBar, Width: vg.Points(1.2)})
			c.Stroke(bar)
			iv.bars++
		}
		c.DrawGlyph(draw.GlyphStyle{Color: colorRatio, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}, vg.Point{X: trX(r.ratio), Y: y})
	}
}

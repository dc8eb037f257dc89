package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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
		b, n, err := pairsSVG(v, cases, in.Plan.CILevel)
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

// ratioRow is one row of a ratio plot: the lines that name it, its
// ratio and its interval.
type ratioRow struct {
	lines []string
	ratio float64
	ci    *Interval
}

// ratioRows lists the ratios at case c: controls first, then variants.
// A variant's row names it by its words (label, point, origin) and by
// its id, with its gain as the report's tables state it.
func ratioRows(in *Input, c string) []ratioRow {
	var rows []ratioRow
	for _, ctl := range in.Controls {
		if ctl.Case == c {
			label := "control: the baseline against itself"
			if ctl.Phase != "" {
				label = "control (" + ctl.Phase + "): the baseline against itself"
			}
			spread := fmt.Sprintf("ratio %.4f, spread %.4f–%.4f", ctl.Ratio, ctl.RatioMin, ctl.RatioMax)
			if ctl.Contaminated {
				spread += ", contaminated"
			}
			rows = append(rows, ratioRow{lines: []string{label, spread}, ratio: ctl.Ratio, ci: &Interval{Low: ctl.RatioMin, High: ctl.RatioMax}})
		}
	}
	for _, v := range in.Variants {
		for _, vc := range v.Cases {
			if vc.Case == c && vc.Timing != nil {
				var lines []string
				if about := variantWords(&v); about != "" {
					lines = append(lines, about)
				}
				lines = append(lines, v.Name+" · gain "+gain(vc.Timing))
				rows = append(rows, ratioRow{lines: lines, ratio: vc.Timing.Ratio, ci: vc.Timing.CI})
			}
		}
	}
	return rows
}

// variantWords describes v in words for a plot: its label, its point,
// where it came from; "" when it has none of them.
func variantWords(v *Variant) string {
	var parts []string
	if v.Label != "" {
		parts = append(parts, oneLine(v.Label))
	}
	if v.Point != "" {
		parts = append(parts, "at "+oneLine(v.Point))
	}
	if v.HandWritten() && (v.File == "" || !strings.Contains(v.Label, v.File)) {
		o := "hand-written"
		if v.File != "" {
			o += " " + oneLine(v.File)
		}
		parts = append(parts, o)
	}
	if v.Parity != "" {
		parts = append(parts, "not bitwise")
	}
	return strings.Join(parts, " · ")
}

// canvasFormat is the format plots are drawn in.
const canvasFormat = "svg"

// Layout. Text is measured in the plots' font, Liberation Serif, and
// laid out as if it were fontSlack times as wide: a viewer without that
// font draws another (DejaVu Serif, the common fallback, is up to 1.3
// times as wide), and text must still fit the canvas. A plot is as wide
// as its longest line needs, from minWidth up to maxWidth; longer text
// wraps at spaces, and a name wider than a line at its separators (".",
// "+", "=", "/", "-", "_", ","), never inside a word.
const (
	fontSlack  = 1.3
	minWidth   = 6 * vg.Inch
	maxWidth   = 10 * vg.Inch
	margin     = vg.Length(8)  // left and right of every line
	titleSize  = vg.Length(12) // the plot's first line
	textSize   = vg.Length(10) // every other line
	lineGap    = vg.Length(3)  // between lines
	panelH     = 2.5 * vg.Inch
	panelTitle = vg.Length(20) // above each panel of a pairs plot
	capH       = vg.Length(4)  // half the height of an interval's caps
	barRoom    = vg.Length(14) // the height a row's interval takes
	axisRoom   = vg.Length(64) // at least the height of the ratio plot's x axis
)

// fontFamily is the font-family the SVG states: the plots' font, then
// the fonts with its metrics, then any serif.
const fontFamily = `font-family:'Liberation Serif','Times New Roman',Times,serif`

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
}

// textWidth is the width s is laid out at: its width in the plots' font
// times fontSlack.
func textWidth(s string, size vg.Length) vg.Length {
	return vg.Length(float64(textStyle(size).Width(s)) * fontSlack)
}

func lineHeight(size vg.Length) vg.Length { return textStyle(size).Height("Xg") + lineGap }

// A textLine is one line of text at a size.
type textLine struct {
	text string
	size vg.Length
}

// canvasWidth is the width that fits the widest of texts on one line
// each, within minWidth and maxWidth.
func canvasWidth(extra vg.Length, texts ...textLine) vg.Length {
	w := minWidth
	for _, t := range texts {
		w = max(w, textWidth(t.text, t.size)+2*margin+extra)
	}
	return min(w, maxWidth)
}

// wrap breaks s into lines no wider than width at its size: at spaces,
// and a word wider than a line after its separators. Only a run of
// letters wider than a line by itself is cut, where it must be.
func wrap(s string, size, width vg.Length) []string {
	s = oneLine(s)
	if s == "" {
		return nil
	}
	type piece struct {
		text  string
		space bool // a space goes before it on a line
	}
	var pieces []piece
	for _, word := range strings.Fields(s) {
		if textWidth(word, size) <= width {
			pieces = append(pieces, piece{word, true})
			continue
		}
		first := true
		for _, part := range splitName(word) {
			for _, cut := range cutToWidth(part, size, width) {
				pieces = append(pieces, piece{cut, first})
				first = false
			}
		}
	}
	var lines []string
	cur := ""
	for _, p := range pieces {
		next := p.text
		if cur != "" {
			if p.space {
				next = cur + " " + p.text
			} else {
				next = cur + p.text
			}
		}
		if cur != "" && textWidth(next, size) > width {
			lines = append(lines, cur)
			cur = p.text
			continue
		}
		cur = next
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// splitName splits a name after each separator, keeping it: "a.b+c" is
// "a.", "b+", "c".
func splitName(word string) []string {
	var out []string
	start := 0
	for i, r := range word {
		if strings.ContainsRune(".+=/-_,", r) {
			out = append(out, word[start:i+1])
			start = i + 1
		}
	}
	if start < len(word) {
		out = append(out, word[start:])
	}
	return out
}

// cutToWidth cuts a part with no separator that is wider than a line by
// itself into pieces that fit.
func cutToWidth(part string, size, width vg.Length) []string {
	if textWidth(part, size) <= width {
		return []string{part}
	}
	var out []string
	r := []rune(part)
	for len(r) > 0 {
		n := len(r)
		for n > 1 && textWidth(string(r[:n]), size) > width {
			n--
		}
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// wrapAll wraps each text at its size to width.
func wrapAll(texts []textLine, width vg.Length) []textLine {
	var out []textLine
	for _, t := range texts {
		for _, l := range wrap(t.text, t.size, width) {
			out = append(out, textLine{l, t.size})
		}
	}
	return out
}

func linesHeight(lines []textLine) vg.Length {
	var h vg.Length
	for _, l := range lines {
		h += lineHeight(l.size)
	}
	return h
}

// drawLines draws lines left-aligned at x from top down and returns the
// y below the last. With opaque, each line is drawn on white, over the
// grid it crosses.
func drawLines(c *draw.Canvas, x, top vg.Length, lines []textLine, opaque bool) vg.Length {
	y := top
	for _, l := range lines {
		sty := textStyle(l.size)
		h := lineHeight(l.size)
		y -= h
		if opaque {
			var box vg.Path
			w := min(textWidth(l.text, l.size), c.Max.X-margin-x)
			box.Move(vg.Point{X: x - 1, Y: y + lineGap/2})
			box.Line(vg.Point{X: x + w, Y: y + lineGap/2})
			box.Line(vg.Point{X: x + w, Y: y + h - lineGap/2})
			box.Line(vg.Point{X: x - 1, Y: y + h - lineGap/2})
			box.Close()
			c.SetColor(color.White)
			c.Fill(box)
		}
		c.FillText(sty, vg.Point{X: x, Y: y + sty.FontExtents().Descent + lineGap/2}, l.text)
	}
	return y
}

func fixFonts(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("font-family:Liberation Serif"), []byte(fontFamily))
}

// pairsSVG draws a variant's samples, one panel per case, under a
// header that names the variant and a legend of the two sides, and
// returns the SVG and the number of samples drawn.
func pairsSVG(v Variant, cases []Case, level float64) ([]byte, int, error) {
	title := []textLine{{"paired samples of " + v.Name, titleSize}}
	if w := variantWords(&v); w != "" {
		title = append(title, textLine{w, textSize})
	}
	legendText := []string{"A: baseline", "B: variant", "(each pair alternates which side runs first)"}
	legend := textLine{strings.Join(legendText, "      "), textSize}
	var panelTitles []textLine
	for _, c := range cases {
		panelTitles = append(panelTitles, textLine{panelText(c), textSize})
	}
	width := canvasWidth(0, append(append(title, legend), panelTitles...)...)
	inner := width - 2*margin
	header := wrapAll(title, inner)
	headerH := linesHeight(header) + lineHeight(textSize) + 4*lineGap

	var panels [][]*plot.Plot
	var wrapped [][]textLine
	n := 0
	for i, c := range cases {
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
		p.X.Label.Text = "pair"
		p.X.Tick.Marker = pairTicks{}
		p.Y.Label.Text = "duration, " + u.name
		p.Y.Tick.Marker = paddedTicks{plot.DefaultTicks{}}
		sa, err := plotter.NewScatter(a)
		if err != nil {
			return nil, 0, err
		}
		sa.GlyphStyle = glyphA
		sb, err := plotter.NewScatter(b)
		if err != nil {
			return nil, 0, err
		}
		sb.GlyphStyle = glyphB
		p.Add(plotter.NewGrid(), sa, sb)
		// Half a pair on each side, so no sample sits on an axis.
		p.X.Min, p.X.Max = p.X.Min-0.5, p.X.Max+0.5
		lo, hi := p.Y.Min, p.Y.Max
		if hi == lo {
			hi = lo + 1
		}
		pad := (hi - lo) * 0.08
		p.Y.Min, p.Y.Max = lo-pad, hi+pad
		panels = append(panels, []*plot.Plot{p})
		pt := wrapAll(panelTitles[i:i+1], inner)
		wrapped = append(wrapped, pt)
		n += len(a) + len(b)
	}
	var titlesH vg.Length
	for _, pt := range wrapped {
		titlesH = max(titlesH, linesHeight(pt))
	}
	height := headerH + (panelH+titlesH)*vg.Length(len(panels))
	c, err := draw.NewFormattedCanvas(width, height, canvasFormat)
	if err != nil {
		return nil, 0, err
	}
	dc := draw.New(c)
	y := drawLines(&dc, margin, dc.Max.Y-lineGap, header, false)
	drawLegend(&dc, margin, y-lineGap, legendText)
	body := draw.Crop(dc, 0, 0, 0, -headerH)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: titlesH, PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: margin + vg.Points(8), PadY: titlesH + vg.Points(12)}
	canvases := plot.Align(panels, tiles, body)
	for i := range panels {
		tc := canvases[i][0]
		panels[i][0].Draw(tc)
		drawLines(&dc, margin, tc.Max.Y+titlesH, wrapped[i], false)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, 0, err
	}
	return fixFonts(buf.Bytes()), n, nil
}

// panelText is a pairs panel's title: the case, the gain and its
// interval as the report states them.
func panelText(c Case) string {
	t := *c.Timing
	t.Contaminated = false
	s := "at " + oneLine(c.Case) + ": gain " + gain(&t)
	if t.CI != nil {
		s += " " + ci(t.CI)
	}
	s += fmt.Sprintf(", %d pairs", t.Pairs)
	if c.Timing.Contaminated {
		s += ", contaminated"
	}
	return s
}

var (
	glyphA = draw.GlyphStyle{Color: colorA, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	glyphB = draw.GlyphStyle{Color: colorB, Radius: vg.Points(2.5), Shape: draw.PyramidGlyph{}}
)

// drawLegend draws the pairs plot's legend on one line below top: a
// mark of each side and its name, then the note.
func drawLegend(c *draw.Canvas, x, top vg.Length, texts []string) {
	sty := textStyle(textSize)
	h := lineHeight(textSize)
	base := top - h + sty.FontExtents().Descent + lineGap/2
	mid := base + sty.FontExtents().Ascent/2 - sty.FontExtents().Descent/2
	for i, t := range texts {
		if i < 2 {
			g := []draw.GlyphStyle{glyphA, glyphB}[i]
			c.DrawGlyph(g, vg.Point{X: x + g.Radius, Y: mid})
			x += 2*g.Radius + vg.Points(4)
		}
		c.FillText(sty, vg.Point{X: x, Y: base}, t)
		x += textWidth(t, textSize) + vg.Points(14)
	}
}

// pairTicks marks whole pair indices only, at most about eight of them.
type pairTicks struct{}

func (pairTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := int(math.Ceil(lo)), int(math.Floor(hi))
	step := max(1, (last-first+8)/8)
	var ts []plot.Tick
	for i := first; i <= last; i++ {
		if i%step == 0 {
			ts = append(ts, plot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
		}
	}
	return ts
}

// paddedTicks pads each label on the right with spaces, so a label
// right-aligned against the y axis in a font up to fontSlack times as
// wide still ends before the tick marks.
type paddedTicks struct{ plot.Ticker }

func (t paddedTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := t.Ticker.Ticks(lo, hi)
	space := textStyle(textSize).Width(" ")
	for i := range ts {
		if ts[i].Label == "" {
			continue
		}
		over := vg.Length(float64(textStyle(textSize).Width(ts[i].Label)) * (fontSlack - 1))
		ts[i].Label += strings.Repeat(" ", int(math.Ceil(float64(over/space))))
	}
	return ts
}

// ratioTicks are the default ticks with one labelled at 1, no change;
// a label too near it goes.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	near := (hi - lo) * 0.08
	for i := range ts {
		if ts[i].Label != "" && math.Abs(ts[i].Value-1) < near {
			ts[i].Label = ""
		}
	}
	if lo <= 1 && 1 <= hi {
		ts = append(ts, plot.Tick{Value: 1, Label: "1"})
	}
	return ts
}

// ratioSVG draws each row's ratio with its interval and a line at 1,
// each row named above its interval, under a header that says what the
// marks are, and returns the SVG and the number of intervals drawn.
func ratioSVG(cs string, rows []ratioRow, level float64) ([]byte, int, error) {
	title := []textLine{
		{"median pair ratio after/before at " + cs, titleSize},
	}
	what := "dot: the median of the per-pair ratios after/before"
	if level > 0 {
		what += "; bar: its " + pct(level) + " interval (a control's: the spread of its pair ratios)"
	}
	what += "; dashed line: 1, no change. Left of it is faster (a positive gain), right of it slower."
	title = append(title, textLine{what, textSize})
	var all []textLine
	for _, r := range rows {
		for _, l := range r.lines {
			all = append(all, textLine{l, textSize})
		}
	}
	width := canvasWidth(0, append(append([]textLine{}, title[0]), all...)...)
	inner := width - 2*margin
	header := wrapAll(title, inner)
	headerH := linesHeight(header) + 2*lineGap

	iv := &intervals{}
	slot := vg.Length(0)
	for _, r := range rows {
		var ls []textLine
		for _, l := range r.lines {
			ls = append(ls, textLine{l, textSize})
		}
		w := wrapAll(ls, inner)
		iv.rows = append(iv.rows, ratioRow{ratio: r.ratio, ci: r.ci})
		iv.labels = append(iv.labels, w)
		slot = max(slot, linesHeight(w)+barRoom+2*lineGap)
	}
	iv.slot = slot

	p := plot.New()
	p.X.Label.Text = "median pair ratio after/before (below 1 is faster)"
	p.HideY()
	p.X.Tick.Marker = ratioTicks{}
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	p.Add(grid, iv)
	height := headerH + slot*vg.Length(len(rows)) + axisRoom
	c, err := draw.NewFormattedCanvas(width, height, canvasFormat)
	if err != nil {
		return nil, 0, err
	}
	dc := draw.New(c)
	drawLines(&dc, margin, dc.Max.Y-lineGap, header, false)
	body := draw.Crop(dc, margin, -margin-vg.Points(8), 0, -headerH)
	p.Draw(body)
	// The rows' names, above their intervals, from the canvas's margin.
	for i, ls := range iv.labels {
		drawLines(&dc, margin, iv.tops[i], ls, true)
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, 0, err
	}
	return fixFonts(buf.Bytes()), iv.bars, nil
}

// intervals is a plotter of ratios with their intervals, each row in a
// slot of its own from the top, each interval one stroked path with its
// caps, each ratio one glyph. Plot records the top of each row, where
// its name goes.
type intervals struct {
	rows   []ratioRow
	labels [][]textLine
	slot   vg.Length
	tops   []vg.Length
	bars   int
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
	return xmin - pad, xmax + pad, 0, 1
}

func (iv *intervals) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	ref := vg.Path{}
	ref.Move(vg.Point{X: trX(1), Y: c.Min.Y})
	ref.Line(vg.Point{X: trX(1), Y: c.Max.Y})
	c.SetLineStyle(draw.LineStyle{Color: colorRef, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}})
	c.Stroke(ref)
	iv.bars = 0
	iv.tops = iv.tops[:0]
	slot := (c.Max.Y - c.Min.Y) / vg.Length(len(iv.rows))
	for i, r := range iv.rows {
		top := c.Max.Y - slot*vg.Length(i)
		iv.tops = append(iv.tops, top)
		y := top - lineGap - linesHeight(iv.labels[i]) - barRoom/2
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

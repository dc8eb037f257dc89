package sweep

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"metalab/search"
)

// A progress shows a sweep's events: bars on a terminal (stage, steps
// done of total, ETA, the last thing that happened), plain lines otherwise
// (a log, a CI job).
type progress struct {
	mu    sync.Mutex // guards everything but text
	w     io.Writer
	start time.Time
	bars  *mpb.Progress // nil: plain lines
	bar   map[string]*mpb.Bar
	first map[string]time.Time // per stage: its first event
	moved map[string]time.Time // per stage: when its count last moved
	done  map[string]int
	last  string // the last plain line without its time, not printed twice
	// pool is the sweep's pool as its last event saw it (nil: none).
	pool *search.Pipeline

	text sync.Map // stage → the bar's message; read by the renderer
}

// newProgress writes to w: bars when terminal says so (nil: when w is a
// terminal).
func newProgress(w io.Writer, terminal *bool) *progress {
	p := &progress{w: w, start: time.Now(), bar: map[string]*mpb.Bar{}, first: map[string]time.Time{}, moved: map[string]time.Time{}, done: map[string]int{}}
	tty := false
	if terminal != nil {
		tty = *terminal
	} else if f, ok := w.(*os.File); ok {
		tty = isatty.IsTerminal(f.Fd())
	}
	if tty {
		p.bars = mpb.New(mpb.WithOutput(w), mpb.WithAutoRefresh(), mpb.WithWidth(30), mpb.WithRefreshRate(200*time.Millisecond))
	}
	return p
}

// event shows e.
func (p *progress) event(e search.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if e.Pipeline != nil {
		p.pool = e.Pipeline
	}
	if e.Stage == "pipeline" {
		// The pool moved: the explore bar's text shows it; a plain line
		// waits for the next event of a stage.
		if p.bars != nil {
			p.text.Store("pool", poolText(p.pool))
		}
		return
	}
	if _, ok := p.first[e.Stage]; !ok {
		p.first[e.Stage], p.moved[e.Stage] = now, now
	}
	moved := e.Done > p.done[e.Stage]
	if moved {
		p.done[e.Stage] = e.Done
	}
	if p.bars == nil {
		p.line(e)
		return
	}
	msg := e.Msg
	if e.Variant != "" {
		msg = e.Variant + ": " + msg
	}
	if len(msg) > 90 {
		msg = msg[:87] + "..."
	}
	switch e.Stage {
	case "explore", "confirm":
	case "decide":
		// A verdict is the confirm bar's news.
		p.text.Store("confirm", msg)
		return
	case "report":
		return // the summary follows
	default:
		// The control, before any bar: a line above the bars.
		p.line(e)
		return
	}
	p.text.Store(e.Stage, msg)
	b := p.bar[e.Stage]
	if b == nil {
		stage := e.Stage
		b = p.bars.AddBar(int64(max(e.Total, 0)),
			mpb.PrependDecorators(
				decor.Name(fmt.Sprintf("%-8s", stage)),
				decor.CountersNoUnit("%d/%d", decor.WCSyncSpace),
			),
			mpb.AppendDecorators(
				decor.OnComplete(decor.AverageETA(decor.ET_STYLE_GO, decor.WCSyncSpace), "done"),
				decor.Any(func(decor.Statistics) string {
					m, _ := p.text.Load(stage)
					s, _ := m.(string)
					if stage == "explore" {
						if q, _ := p.text.Load("pool"); q != nil && q.(string) != "" {
							s = "[" + q.(string) + "] " + s
						}
					}
					return s
				}, decor.WCSyncSpace),
			),
		)
		p.bar[e.Stage] = b
	}
	if e.Total > 0 {
		b.SetTotal(int64(e.Total), false)
	}
	if moved {
		b.EwmaSetCurrent(int64(e.Done), now.Sub(p.moved[e.Stage]))
		p.moved[e.Stage] = now
	}
}

// line prints e as a plain line: elapsed time, stage, done/total, an
// estimate of the time left, and what happened.
func (p *progress) line(e search.Event) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", e.Stage)
	if e.Total > 0 {
		fmt.Fprintf(&b, " %d/%d", e.Done, e.Total)
		if eta, ok := p.eta(e); ok {
			fmt.Fprintf(&b, " (ETA %s)", eta.Round(time.Second))
		}
	} else if e.Done > 0 {
		fmt.Fprintf(&b, " %d", e.Done)
	}
	if e.Stage == "explore" && p.pool != nil {
		fmt.Fprintf(&b, " [%s]", poolText(p.pool))
	}
	if e.Variant != "" {
		fmt.Fprintf(&b, " %s", e.Variant)
	}
	if e.Msg != "" {
		fmt.Fprintf(&b, ": %s", e.Msg)
	}
	if b.String() == p.last {
		return
	}
	p.last = b.String()
	w := p.w
	if p.bars != nil {
		w = p.bars
	}
	fmt.Fprintf(w, "[%5.0fs] %s\n", time.Since(p.start).Seconds(), b.String())
}

// eta estimates the time left of e's stage from its rate so far; for
// exploration with a pool, from the pool's rate too (checks per second):
// the slower of the two bounds the sweep.
func (p *progress) eta(e search.Event) (time.Duration, bool) {
	d := p.done[e.Stage]
	left := e.Total - d
	if left <= 0 {
		return 0, false
	}
	var eta time.Duration
	ok := false
	if d > 0 {
		eta, ok = time.Since(p.first[e.Stage])/time.Duration(d)*time.Duration(left), true
	}
	if e.Stage == "explore" && p.pool != nil && p.pool.Rate > 0 {
		// The variants still to check: those left but the ones the pool
		// has checked already and not yet handed over.
		if pool := time.Duration(float64(left) / p.pool.Rate * float64(time.Second)); !ok || pool > eta {
			eta, ok = pool, true
		}
	}
	return eta, ok
}

// poolText says what the pool is doing, in a few words.
func poolText(s *search.Pipeline) string {
	if s == nil {
		return ""
	}
	t := fmt.Sprintf("pool %d: %d queued, %d compiling, %d verifying, %d confirming, %d timing", s.Jobs, s.Queued, s.Compiling, s.Verifying, s.Confirming, s.Timing)
	if s.Rate > 0 {
		t += fmt.Sprintf(", %.2f checks/s", s.Rate)
	}
	return t
}

// stop ends the bars: a complete stage shows "done", one cut short stays
// where it stopped.
func (p *progress) stop() {
	if p.bars == nil {
		return
	}
	p.mu.Lock()
	for _, b := range p.bar {
		if !b.Completed() {
			b.Abort(false)
		}
	}
	p.mu.Unlock()
	p.bars.Wait()
}

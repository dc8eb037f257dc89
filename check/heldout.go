package check

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"metalab/spec"
)

// Held-out cases. A variant is judged on the spec's listed cases, which
// whoever wrote it could read; with Options.HeldOut it is also judged on
// cases drawn from the spec's domains (spec.Spec.Draw) with a seed made
// from the baseline's sources, the variant's text, the spec and a per-run
// nonce (Options.Seed when set), so that no file the variant can read says
// which sizes it will meet. Each drawn case runs the baseline (plainly and
// in the checking mode, for references and baseline findings) and the
// variant, in the verification (or, with no verification, the
// confirmation). A drawn case the baseline cannot run (a size past the
// device's limits) is skipped and counted. A failing drawn case is shrunk
// (spec.Spec.Shrink, greedily, at most ShrinkAttempts runs) and the
// smallest failing case is reported with its replay token.

// DefaultShrinkAttempts bounds the runs a shrink makes when
// Options.ShrinkAttempts is 0.
const DefaultShrinkAttempts = 12

// A DrawnCase is a case check made rather than the spec listed: a
// held-out case, a shrunk one, or a listed case with a fresh seed.
type DrawnCase struct {
	Case   string `json:"case"`  // set/name
	Token  string `json:"token"` // for metalab check --replay
	Status Status `json:"status,omitempty"`
	// Skipped says why the case did not judge the variant (the baseline
	// cannot run it: a size past the device's limits).
	Skipped string `json:"skipped,omitempty"`
}

// A HeldOut is what held-out cases a result rests on.
type HeldOut struct {
	Cases   []DrawnCase `json:"cases,omitempty"`
	Judged  int         `json:"judged"`  // cases that judged the variant
	Skipped int         `json:"skipped"` // drawn cases the baseline could not run
	// Shrunk is the smallest failing case found from the first failing
	// held-out case, and ShrinkRuns the runs it took.
	Shrunk     *DrawnCase `json:"shrunk,omitempty"`
	ShrinkRuns int        `json:"shrink_runs,omitempty"`
}

// runSeed returns the run's seed: Options.Seed, or a nonce nobody can
// read beforehand.
func runSeed(opts Options) uint64 {
	if opts.SeedSet {
		return opts.Seed
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return uint64(time.Now().UnixNano())
	}
	return binary.LittleEndian.Uint64(b[:])
}

// baseSeed is the seed of the baseline and the spec for this run: fresh
// input seeds of listed cases come from it, held-out cases from it and
// the variant.
func (c *checker) baseSeed() uint64 {
	parts := [][]byte{c.opts.Spec.Digest[:], binary.LittleEndian.AppendUint64(nil, c.seed)}
	paths := make([]string, 0, len(c.sources))
	for p := range c.sources {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		parts = append(parts, []byte(p), c.sources[p])
	}
	return spec.DeriveSeed(parts...)
}

// drawn returns the held-out cases of variant v.
func (c *checker) drawn(v Variant) []spec.Case {
	if c.opts.HeldOut <= 0 || c.opts.Replay != nil {
		return nil
	}
	var listed []spec.Case
	for _, in := range c.union() {
		listed = append(listed, in.Case)
	}
	seed := spec.DeriveSeed(binary.LittleEndian.AppendUint64(nil, c.baseSeed()), []byte(v.Base), v.Text)
	return c.opts.Spec.Draw(seed, c.opts.HeldOut, listed)
}

// judgeDrawn judges the variant's sources src on drawn case cs. skip is
// set when the case cannot judge it: it does not instantiate, does not
// fit the kernels, or the baseline fails on it.
func (c *checker) judgeDrawn(ctx context.Context, name string, src *sourceSet, m *siteMapper, cs spec.Case) (cr CaseResult, skip string, err error) {
	in, err := c.opts.Spec.Instantiate(cs)
	if err != nil {
		return cr, firstLine(err.Error()), nil
	}
	if c.metal() {
		if err := in.CheckKernels(c.baseline); err != nil {
			return cr, firstLine(err.Error()), nil
		}
	}
	be := c.ver
	if be == nil {
		be = c.run
	}
	limit := c.controlTimeout()
	t0 := time.Now()
	ref, err := c.plainRun(ctx, be, c.base, in, limit)
	if err != nil {
		if ctx.Err() != nil {
			return cr, "", ctx.Err()
		}
		return cr, "the baseline fails on it: " + firstLine(err.Error()), nil
	}
	vlimit := c.timeout([]time.Duration{time.Since(t0)}, 0)
	vin, err := c.instance(src, in)
	if err != nil {
		return cr, firstLine(err.Error()), nil
	}
	if c.ver == nil {
		cr = CaseResult{Case: caseName(in), Status: Pass}
		got, err := c.plainRun(ctx, c.run, src, vin, vlimit)
		if err != nil {
			st, msg, _, err := c.caseFailure(ctx, name, Crash, err)
			if err != nil {
				return cr, "", err
			}
			cr.Status, cr.Msg = st, msg
			return cr, "", nil
		}
		d, tol := CompareParity(vin, ref, got, c.opts.Parity)
		cr.Tolerance = tol
		if d != nil {
			cr.Status, cr.Mismatch = FailParity, d
		}
		return cr, "", nil
	}
	// The variant first: the baseline's own check at this case (its
	// checking build: whether the case can judge anything, and which
	// findings are the baseline's) is a checking-mode run as costly as
	// the variant's, and a variant that passes here passes whatever it
	// says (its findings only ever excuse a variant's). So it runs only
	// when the variant does not pass, and the variant is judged again
	// with what it found.
	if first, _, _, err := c.verifyCase(ctx, src, vin, ref, m, vlimit); err == nil && first.Status == Pass {
		return first, "", nil
	} else if ctx.Err() != nil {
		return cr, "", ctx.Err()
	}
	ctl, err := c.controlCase(ctx, in, ref, limit)
	if err != nil {
		if ctx.Err() != nil {
			return cr, "", ctx.Err()
		}
		return cr, "the baseline fails on it in the checking mode: " + firstLine(err.Error()), nil
	}
	if ctl.Status != Pass {
		return cr, "the baseline fails on it: " + string(ctl.Status) + " " + firstLine(ctl.Msg), nil
	}
	c.mu.Lock()
	for _, f := range ctl.Findings {
		if f.Baseline {
			c.baseSites[f.Site] = true
		}
	}
	c.mu.Unlock()
	cr, _, _, err = c.verifyCase(ctx, src, vin, ref, m, vlimit)
	if err != nil {
		st, msg, _, err := c.caseFailure(ctx, name, Crash, err)
		if err != nil {
			return cr, "", err
		}
		cr.Status, cr.Msg = st, msg
		if f, ok := c.failing(cr.Findings); ok {
			cr.Msg = f.Msg
		}
	}
	return cr, "", nil
}

// heldOut judges the variant on its held-out cases, adding each judged
// case to part p, and shrinks the first that fails.
func (c *checker) heldOut(ctx context.Context, r *Result, v Variant, src *sourceSet, m *siteMapper, p *Part) error {
	cases := c.drawn(v)
	if len(cases) == 0 {
		return nil
	}
	h := &HeldOut{}
	r.HeldOut = h
	for i, cs := range cases {
		c.progress("%s: held-out case %d/%d %s/%s", r.Name, i+1, len(cases), cs.Set, cs.Name)
		cr, skip, err := c.judgeDrawn(ctx, r.Name, src, m, cs)
		if err != nil {
			return err
		}
		d := DrawnCase{Case: cs.Set + "/" + cs.Name, Token: cs.Token()}
		if skip != "" {
			d.Skipped = skip
			h.Skipped++
			h.Cases = append(h.Cases, d)
			continue
		}
		h.Judged++
		d.Status = cr.Status
		h.Cases = append(h.Cases, d)
		if cr.Status == Pass {
			addPart(p, cr)
			continue
		}
		// Shrink before the case joins the part, so the part reports
		// the smallest failing case.
		small, scr, runs, err := c.shrink(ctx, r.Name, src, m, cs, cr)
		if err != nil {
			return err
		}
		h.ShrinkRuns = runs
		h.Shrunk = &DrawnCase{Case: small.Set + "/" + small.Name, Token: small.Token(), Status: scr.Status}
		if scr.Msg != "" {
			scr.Msg = "held-out case: " + scr.Msg
		} else if scr.Mismatch != nil {
			scr.Msg = "held-out case: " + scr.Mismatch.String()
		}
		addPart(p, cr)
		if small.Name != cs.Name {
			addPart(p, scr)
		}
		// The part's verdict names the smallest failing case.
		p.Status, p.Mismatch, p.Msg = scr.Status, scr.Mismatch, scr.Msg
		r.Replay = replayText(c.opts.Spec.Path, v.Path, small.Token())
		break // a failing variant is not run further
	}
	return nil
}

// shrink tries smaller cases than cs within the domains, greedily, for at
// most ShrinkAttempts runs, and returns the smallest that still fails,
// its result and the runs made.
func (c *checker) shrink(ctx context.Context, name string, src *sourceSet, m *siteMapper, cs spec.Case, cr CaseResult) (spec.Case, CaseResult, int, error) {
	budget := c.opts.ShrinkAttempts
	if budget == 0 {
		budget = DefaultShrinkAttempts
	}
	runs := 0
	cur, curCR := cs, cr
outer:
	for runs < budget {
		for _, cand := range c.opts.Spec.Shrink(cur) {
			if runs >= budget {
				break outer
			}
			runs++
			c.progress("%s: shrink %d/%d %s/%s", name, runs, budget, cand.Set, cand.Name)
			got, skip, err := c.judgeDrawn(ctx, name, src, m, cand)
			if err != nil {
				return cur, curCR, runs, err
			}
			if skip == "" && got.Status != Pass {
				cur, curCR = cand, got
				continue outer
			}
		}
		break
	}
	return cur, curCR, runs, nil
}

// replayText is the command that replays a failing drawn case.
func replayText(spec, variant, token string) string {
	return fmt.Sprintf("metalab check %s --variant %s --replay '%s'", spec, variant, token)
}

// replayListed gives a result that failed on a listed case with a fresh
// seed the command that replays that case: its bytes came from a seed no
// file holds.
func (c *checker) replayListed(r *Result) {
	if r.Replay != "" || r.Status == Pass || r.Status == NotJudged || !c.opts.FreshSeeds {
		return
	}
	for _, cr := range r.Cases {
		if cr.Status == Pass {
			continue
		}
		for _, in := range c.union() {
			if caseName(in) == cr.Case && in.Case.Seed != 0 {
				r.Replay = replayText(c.opts.Spec.Path, r.Path, in.Case.Token())
				return
			}
		}
	}
}

package check

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"metalab/backend"
	"metalab/spec"
)

func caseName(in *spec.Instance) string { return in.Case.Set + "/" + in.Case.Name }

// checkingRun runs case in with the checking programs of src on the
// verification backend. It returns the outputs and the findings, also
// those of a run the checking mode stopped (a bounds violation), whose
// error is a kernel failure.
func (c *checker) checkingRun(ctx context.Context, src *sourceSet, in *spec.Instance, limit time.Duration) (map[string][]byte, []Finding, error) {
	name := caseName(in)
	progs, err := c.programs(ctx, c.ver, src, in.Stages, true)
	if err != nil {
		return nil, nil, err
	}
	ex, windowed, err := c.checkingWindow(ctx, in, progs, limit)
	if !windowed && err == nil {
		ex, err = ExecuteCase(ctx, progs, in, ExecOptions{Order: backend.Order{Kind: "in-order"}, Timeout: limit})
	}
	if err != nil {
		var f *backend.Failure
		var fs []Finding
		if errors.As(err, &f) && len(f.Findings) > 0 {
			var se *StageError
			stage := 0
			if errors.As(err, &se) {
				stage = se.Stage
			}
			var sfs []StageFinding
			for _, x := range f.Findings {
				sfs = append(sfs, StageFinding{Stage: stage, Entry: in.Stages[stage].Entry, Finding: x})
			}
			fs = describeFindings(in, name, sfs, c.opts.Strict)
		}
		return nil, fs, err
	}
	return ex.Outputs, describeFindings(in, name, ex.Findings(), c.opts.Strict), nil
}

// plainRun runs case in with the plain programs of src on be.
func (c *checker) plainRun(ctx context.Context, be backend.Backend, src *sourceSet, in *spec.Instance, limit time.Duration) (map[string][]byte, error) {
	progs, err := c.programs(ctx, be, src, in.Stages, false)
	if err != nil {
		return nil, err
	}
	return Execute(ctx, progs, in, backend.Order{Kind: "in-order"}, limit)
}

// hasKind reports whether fs holds a finding of kind k.
func hasKind(fs []Finding, k backend.FindingKind) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Kind == k })
}

// unwrittenUnused renames the uninitialised reads of fs unwritten-unused:
// the caller saw the same bytes with threadgroup memory poisoned two ways.
func unwrittenUnused(in *spec.Instance, fs []Finding) {
	for i := range fs {
		if fs[i].Kind != backend.FindUninit {
			continue
		}
		fs[i].Kind = backend.FindUnwrittenUnused
		fs[i].Detail.Kind = backend.FindUnwrittenUnused
		fs[i].Msg = describe(in, stageOf(in, fs[i].Entry), fs[i].Detail)
	}
}

func stageOf(in *spec.Instance, entry string) *spec.Stage {
	for _, st := range in.Stages {
		if st.Entry == entry {
			return st
		}
	}
	return in.Stages[0]
}

// reachesOutput notes on the uninitialised reads of fs that the bytes they
// read reach an output: m is where the plain build's bytes differ from the
// checking build's.
func reachesOutput(fs []Finding, m *Mismatch) {
	for i := range fs {
		if fs[i].Kind == backend.FindUninit {
			fs[i].Msg += "; the bytes it reads reach the output (with threadgroup memory poisoned 0x5a, the checking build, and 0xff, " +
				"the plain build, the outputs differ: " + m.String() + ")"
		}
	}
}

// failing returns the first finding of fs that fails the case: one the
// check fails for that the baseline does not have.
func (c *checker) failing(fs []Finding) (Finding, bool) {
	for _, f := range fs {
		if findingStatus(f.Kind, c.opts.Strict) != "" && !f.Baseline {
			return f, true
		}
	}
	return Finding{}, false
}

// sortFindings puts new failures first, then the baseline's, then
// warnings.
func sortFindings(fs []Finding) {
	rank := func(f Finding) int {
		switch {
		case f.Warning:
			return 2
		case f.Baseline:
			return 1
		}
		return 0
	}
	sort.SliceStable(fs, func(i, j int) bool { return rank(fs[i]) < rank(fs[j]) })
}

// timeout is the limit for one run of case i of a variant, times being
// the baseline's slowest runs of the part's cases.
func (c *checker) timeout(times []time.Duration, i int) time.Duration {
	if c.opts.Timeout != 0 {
		return c.opts.Timeout
	}
	if i >= len(times) {
		return ControlTimeout
	}
	return max(MinVariantTimeout, VariantTimeoutFactor*times[i])
}

func (c *checker) controlTimeout() time.Duration {
	if c.opts.Timeout != 0 {
		return c.opts.Timeout
	}
	return ControlTimeout
}

// caseFailure turns the error of a case's run into the case's status,
// message and log (a kernel failure, or kind for any other error a
// variant can cause); only a cancelled context and environment faults are
// returned.
func (c *checker) caseFailure(ctx context.Context, name string, kind Status, err error) (Status, string, string, error) {
	tmp := &Result{Name: name, Status: Pass}
	if err := c.record(ctx, tmp, kind, err); err != nil {
		return "", "", "", err
	}
	return tmp.Status, tmp.Msg, tmp.Log, nil
}

// addPart appends cr to part p, taking its status, message and mismatch
// if p still passes.
func addPart(p *Part, cr CaseResult) {
	p.Cases = append(p.Cases, cr)
	if cr.Status != Pass && p.Status == Pass {
		p.Status, p.Mismatch, p.Msg = cr.Status, cr.Mismatch, cr.Msg
		if p.Msg == "" && cr.Mismatch != nil {
			p.Msg = cr.Mismatch.String()
		}
	}
}

// control runs the baseline: on the verification backend, every
// verification case plainly (the references) and in the checking mode,
// whose bytes must be the same (its findings are the baseline's own); on
// the run's backend every confirmation case plainly twice (once where the
// verification's plain run is the same). It sets the references.
func (c *checker) control(ctx context.Context) (*Result, error) {
	start := time.Now()
	r := &Result{Name: "control", Path: c.opts.Spec.Source, SHA256: sha(c.sources[c.opts.Spec.Source]), Status: Pass}
	r.Verification = Part{Backend: backendName(c.ver), Build: BuildChecking, Status: NotVerified, Sets: c.setsOf(c.vinsts)}
	r.Confirmation = Part{Backend: c.run.Name(), Build: BuildPlain, Status: NotRun, Sets: c.setsOf(c.insts)}
	defer func() { r.Seconds = time.Since(start).Seconds() }()
	fail := func(err error) (*Result, error) {
		if err := failure(r, err); err != nil {
			return nil, err
		}
		r.Msg = "the baseline fails its own check (" + string(r.Status) + "): variants are not judged; " + r.Msg
		return r, nil
	}
	for _, in := range c.union() {
		progs, err := c.programs(ctx, c.run, c.base, in.Stages, false)
		if err != nil {
			return fail(err)
		}
		for j, st := range in.Stages {
			n := progs[j].ThreadgroupMemory()
			src := c.sourceTGMem(c.sources[st.Source], st)
			d := dynamicTG(in, st)
			tg := TGMem{Entry: st.Entry, Before: n, After: n, SourceBefore: src, SourceAfter: src, DynamicBefore: d, DynamicAfter: d}
			if !hasTG(r.TGMem, tg) {
				r.TGMem = append(r.TGMem, tg)
			}
		}
	}
	limit := c.controlTimeout()
	if c.ver != nil {
		vstart := time.Now()
		p := &r.Verification
		p.Status, p.Device = Pass, c.opts.Backend.Info(ctx).Device
		if !c.same {
			p.Device = c.ver.Info(ctx).Device
		}
		seen := map[string]bool{}
		for i, in := range c.vinsts {
			c.progress("control: case %d/%d %s", i+1, len(c.vinsts), caseName(in))
			t0 := time.Now()
			first, err := c.plainRun(ctx, c.ver, c.base, in, limit)
			if err != nil {
				return c.controlFailure(ctx, r, p, PartVerification, in, err, limit)
			}
			c.vtime = append(c.vtime, time.Since(t0))
			c.vrefs = append(c.vrefs, first)
			cr, err := c.controlCase(ctx, in, first, limit)
			if err != nil {
				if ferr := failure(r, err); ferr != nil {
					return nil, ferr
				}
				cr.Status, cr.Msg = r.Status, r.Msg
				if f, ok := c.failing(cr.Findings); ok {
					cr.Msg = f.Msg
				}
				r.Status, r.Msg = Pass, ""
			}
			for k := range cr.Findings {
				f := &cr.Findings[k]
				if !f.Baseline || seen[f.Site] {
					continue
				}
				seen[f.Site] = true
				c.baseSites[f.Site] = true
				r.BaselineFindings = append(r.BaselineFindings, *f)
			}
			addPart(p, cr)
			collectWarnings(r, cr)
		}
		p.Seconds = time.Since(vstart).Seconds()
		if p.Status != Pass {
			r.Status, r.Msg, r.Mismatch, r.Stopped = p.Status, p.Msg, p.Mismatch, PartVerification
			r.Msg = "the baseline fails its own check (" + string(r.Status) + "): variants are not judged; " + r.Msg
			r.Cases = c.merge(r)
			return r, nil
		}
	}
	cstart := time.Now()
	p := &r.Confirmation
	p.Status, p.Device = Pass, c.opts.Backend.Info(ctx).Device
	for i, in := range c.insts {
		if j := slices.Index(c.vinsts, in); c.same && j >= 0 {
			// The verification's plain run is this case's on this backend.
			c.crefs = append(c.crefs, c.vrefs[j])
			c.ctime = append(c.ctime, c.vtime[j])
			addPart(p, CaseResult{Case: caseName(in), Status: Pass})
			continue
		}
		c.progress("control: confirm case %d/%d %s on %s", i+1, len(c.insts), caseName(in), c.run.Name())
		t0 := time.Now()
		first, err := c.plainRun(ctx, c.run, c.base, in, limit)
		if err != nil {
			return c.controlFailure(ctx, r, p, PartConfirmation, in, err, limit)
		}
		c.ctime = append(c.ctime, time.Since(t0))
		c.crefs = append(c.crefs, first)
		cr := CaseResult{Case: caseName(in), Status: Pass}
		again, err := c.plainRun(ctx, c.run, c.base, in, limit)
		if err != nil {
			return c.controlFailure(ctx, r, p, PartConfirmation, in, err, limit)
		}
		if m := Compare(in, first, again); m != nil {
			// The same kernel gave other bytes: the harness or the kernel
			// is not deterministic.
			cr.Status, cr.Mismatch = FailNondet, m
		}
		if cr.Status == Pass && c.opts.Race && c.ver == nil {
			if err := c.probe(ctx, c.run, c.base, in, first, limit, &cr); err != nil {
				return c.controlFailure(ctx, r, p, PartConfirmation, in, err, limit)
			}
		}
		addPart(p, cr)
	}
	p.Seconds = time.Since(cstart).Seconds()
	if p.Status != Pass {
		r.Status, r.Msg, r.Mismatch, r.Stopped = p.Status, p.Msg, p.Mismatch, PartConfirmation
		r.Msg = "the baseline fails its own check (" + string(r.Status) + "): variants are not judged; " + r.Msg
	}
	r.Cases = c.merge(r)
	return r, nil
}

// controlFailure makes err, the failure of a plain run of the baseline on
// case in in part p, the control's result: the case is named, and where
// the verification backend has a checking mode the case runs again in its
// checking build, so that a bad access (which the plain build reports by
// buffer and offset only) is described by its findings: buffer, element,
// thread and source line (a timeout or deadlock is not run again). Only a
// cancelled context and environment faults are errors.
func (c *checker) controlFailure(ctx context.Context, r *Result, p *Part, part string, in *spec.Instance, err error, limit time.Duration) (*Result, error) {
	if ferr := failure(r, err); ferr != nil {
		return nil, ferr
	}
	cr := CaseResult{Case: caseName(in), Status: r.Status, Msg: r.Msg}
	// Only an access fault is described again: a run that timed out would
	// take as long again, and longer, in the checking build.
	if c.ver != nil && (r.Status == BadAccess || r.Status == Crash) {
		_, fs, cerr := c.checkingRun(ctx, c.base, in, limit)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var env *backend.EnvError
		if errors.As(cerr, &env) {
			return nil, cerr
		}
		ident := &siteMapper{}
		for i := range fs {
			fs[i].Site, _ = ident.site(fs[i])
		}
		cr.Findings = fs
		for _, f := range fs {
			if st := findingStatus(f.Kind, c.opts.Strict); st != "" {
				// The checking mode names what the plain run only saw fail.
				cr.Msg = f.Msg
				if cr.Status != st && (cr.Status == BadAccess || cr.Status == Crash) {
					cr.Status = st
				}
				break
			}
		}
	}
	addPart(p, cr)
	p.Msg = cr.Msg
	r.Status, r.Stopped = p.Status, part
	r.Msg = fmt.Sprintf("the baseline fails its own check (%s) on case %s: variants are not judged; %s", r.Status, cr.Case, cr.Msg)
	r.Cases = c.merge(r)
	return r, nil
}

// controlCase runs the baseline's verification case in the checking mode
// and judges it against first, its plain run: the same bytes, or an
// uninitialised read that reaches them; findings that are the baseline's
// own (all of them, unless Options.StrictBaseline).
func (c *checker) controlCase(ctx context.Context, in *spec.Instance, first map[string][]byte, limit time.Duration) (CaseResult, error) {
	cr := CaseResult{Case: caseName(in), Status: Pass}
	got, fs, err := c.checkingRun(ctx, c.base, in, limit)
	cr.Findings = fs
	if err != nil {
		return cr, err
	}
	m := Compare(in, first, got)
	switch {
	case m != nil && hasKind(fs, backend.FindUninit):
		reachesOutput(fs, m)
		cr.Status, cr.Mismatch = FailUninit, m
		for _, f := range fs {
			if f.Kind == backend.FindUninit {
				cr.Msg = "the baseline's bytes depend on threadgroup memory no thread wrote: " + f.Msg
				break
			}
		}
	case m != nil:
		// The same kernel gave other bytes: the harness, the kernel or
		// the checking build is not deterministic.
		cr.Status, cr.Mismatch = FailNondet, m
	default:
		unwrittenUnused(in, fs)
	}
	ident := &siteMapper{}
	for i := range fs {
		f := &fs[i]
		f.Site, _ = ident.site(*f)
		st := findingStatus(f.Kind, c.opts.Strict)
		if st == "" || f.Kind == backend.FindUninit {
			continue
		}
		if c.opts.StrictBaseline {
			if cr.Status == Pass {
				cr.Status, cr.Msg = st, f.Msg
			}
			continue
		}
		f.Baseline = true
	}
	sortFindings(fs)
	if cr.Status == Pass && c.opts.Race {
		if err := c.probe(ctx, c.ver, c.base, in, first, limit, &cr); err != nil {
			return cr, err
		}
	}
	return cr, nil
}

// probe runs the race probe: case in under every order, plainly on be,
// each required to give want.
func (c *checker) probe(ctx context.Context, be backend.Backend, src *sourceSet, in *spec.Instance, want map[string][]byte, limit time.Duration, cr *CaseResult) error {
	plain, err := c.programs(ctx, be, src, in.Stages, false)
	if err != nil {
		return err
	}
	// A case that relies on SIMD lockstep (a warning) gives other bytes
	// whenever a simd group's lanes run in another order than the
	// emulator's lane order, its stand-in for lockstep; those orders say
	// nothing about a GPU, as a parity difference there does not (see
	// verifyCase). The simd-group orders still run.
	lockstep := c.lockstepExempt(src, cr.Findings)
	m, left, err := c.orders(ctx, plain, in, want, limit, lockstep)
	if err != nil {
		return err
	}
	if m != nil {
		cr.Status, cr.Mismatch = FailRace, m
	}
	if len(left) > 0 {
		cr.Findings = append(cr.Findings, Finding{Kind: backend.FindLockstep, Warning: true, Case: cr.Case,
			Msg: "the race probe left out the orders " + strings.Join(left, ", ") + ", which run a simd group's lanes out of order: " +
				"the kernel relies on SIMD lockstep (warned above), which they break; the simd-group orders ran"})
	}
	return nil
}

// lockstepExempt reports whether the race probe leaves out the
// lane-reordering orders on a case with findings fs of src: the case
// relies on SIMD lockstep in an entry where the baseline's control relied
// on it too. The control records its entries; a variant cannot earn the
// exemption by adding a reliance to a kernel whose baseline had none.
func (c *checker) lockstepExempt(src *sourceSet, fs []Finding) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	exempt := false
	for _, f := range fs {
		if f.Kind != backend.FindLockstep {
			continue
		}
		if src == c.base {
			if c.lockstepEntries == nil {
				c.lockstepEntries = map[string]bool{}
			}
			c.lockstepEntries[f.Entry] = true
		}
		exempt = exempt || c.lockstepEntries[f.Entry]
	}
	return exempt
}

// lanesReordered: an order that runs the lanes of a simd group in another
// order than their index.
func lanesReordered(o backend.Order) bool {
	return o.Kind == "reversed" || o.Kind == "shuffle"
}

// orders runs in under every race-probe order other than in-order and
// returns the first difference from want. With lockstep it leaves out the
// orders that reorder a simd group's lanes, and names them.
func (c *checker) orders(ctx context.Context, progs []backend.Program, in *spec.Instance, want map[string][]byte, limit time.Duration, lockstep bool) (*Mismatch, []string, error) {
	var left []string
	for _, o := range c.opts.Orders {
		if o.Kind == "" || o.Kind == "in-order" {
			continue
		}
		if lockstep && lanesReordered(o) {
			left = append(left, o.Kind)
			continue
		}
		got, err := Execute(ctx, progs, in, o, limit)
		if err != nil {
			return nil, left, err
		}
		if m := Compare(in, want, got); m != nil {
			m.Order = o.String()
			return m, left, nil
		}
	}
	return nil, left, nil
}

// verifyCase verifies case in of a variant: its checking build on the
// verification backend, its findings judged against the baseline's, its
// bytes against want. It returns the case's result, the checking build's
// bytes and, when it ran, the plain build's; a kernel failure is an
// error, with the findings that stopped the run in the result.
func (c *checker) verifyCase(ctx context.Context, src *sourceSet, in *spec.Instance, want map[string][]byte, m *siteMapper, limit time.Duration) (CaseResult, map[string][]byte, map[string][]byte, error) {
	cr := CaseResult{Case: caseName(in), Status: Pass}
	got, fs, err := c.checkingRun(ctx, src, in, limit)
	if err != nil {
		c.differential(fs, m)
		cr.Findings = fs
		return cr, nil, nil, err
	}
	var plain map[string][]byte
	if hasKind(fs, backend.FindUninit) {
		// Uninitialised reads: the plain build's threadgroup memory starts
		// as other bytes. The same outputs say the reads reach none.
		plain, err = c.plainRun(ctx, c.ver, src, in, limit)
		if err != nil {
			c.differential(fs, m)
			cr.Findings = fs
			return cr, nil, nil, err
		}
		if d := Compare(in, got, plain); d == nil {
			unwrittenUnused(in, fs)
		} else {
			reachesOutput(fs, d)
		}
	}
	c.differential(fs, m)
	cr.Findings = fs
	if f, ok := c.failing(fs); ok {
		cr.Status, cr.Msg = findingStatus(f.Kind, c.opts.Strict), f.Msg
		return cr, got, plain, nil
	}
	d, tol := CompareParity(in, want, got, c.opts.Parity)
	cr.Tolerance = tol
	if d != nil {
		cr.Status, cr.Mismatch = FailParity, d
		// Bytes that differ where the variant relies on SIMD lockstep
		// say nothing about a GPU: the emulator runs a simd group's
		// lanes one after another, so it cannot give the bytes lanes
		// in lockstep would. The verdict names the reliance instead.
		for _, f := range fs {
			if f.Kind == backend.FindLockstep {
				cr.Status = FailLockstep
				cr.Msg = "the bytes differ and the variant relies on SIMD lockstep, which the cpu emulator does not reproduce " +
					"(it runs a simd group's lanes one after another): restore the simd-group synchronisation, or judge it on a GPU; " + f.Msg
				return cr, got, plain, nil
			}
		}
		if c.same {
			// Do the builds disagree? The plain build is the one timed.
			if plain == nil {
				if plain, err = c.plainRun(ctx, c.ver, src, in, limit); err != nil {
					return cr, got, nil, err
				}
			}
			if pd, _ := CompareParity(in, want, plain, c.opts.Parity); pd == nil {
				cr.Status = FailBuildsDisagree
				cr.Msg = "the builds disagree: the plain build (the one that is timed) gives the baseline's bytes, the checking build " +
					"gives others: " + d.String()
			}
		}
		return cr, got, plain, nil
	}
	if c.opts.Race {
		if err := c.probe(ctx, c.ver, src, in, got, limit, &cr); err != nil {
			return cr, got, plain, err
		}
	}
	return cr, got, plain, nil
}

// differential marks the findings of a variant's case that the baseline
// has at the same source site (through m) and those in code the variant
// changed, and sorts them: new failures first.
func (c *checker) differential(fs []Finding, m *siteMapper) {
	for i := range fs {
		f := &fs[i]
		site, changed := m.site(*f)
		f.Site, f.Changed = site, changed
		if f.Warning {
			continue
		}
		c.mu.Lock()
		baseSite := c.baseSites[site]
		c.mu.Unlock()
		if !changed && baseSite && !c.opts.StrictBaseline {
			f.Baseline = true
			f.Msg = "baseline finding: " + f.Msg
		}
		if changed {
			f.Msg += " (in code the variant changed)"
		}
		if !f.Baseline && !changed && f.Kind == backend.FindRace {
			c.mu.Lock()
			mn := string(backend.FindMemNone) + strings.TrimPrefix(site, string(f.Kind))
			memNone := c.baseSites[mn]
			c.mu.Unlock()
			if memNone {
				f.Msg += "; the baseline orders this pair with an execution barrier (a baseline finding, mem-none-order), the variant with nothing"
			}
		}
	}
	sortFindings(fs)
}

// collectWarnings adds the warnings of cr's findings to r, once each.
func collectWarnings(r *Result, cr CaseResult) {
	for _, f := range cr.Findings {
		if f.Warning && !slices.Contains(r.Warnings, f.Msg) && len(r.Warnings) < 20 {
			r.Warnings = append(r.Warnings, f.Msg)
		}
	}
}

// union is the verification's cases and then the confirmation's others.
func (c *checker) union() []*spec.Instance {
	out := slices.Clone(c.vinsts)
	for _, in := range c.insts {
		if !slices.Contains(out, in) {
			out = append(out, in)
		}
	}
	return out
}

// setsOf lists the case sets of insts, in order.
func (c *checker) setsOf(insts []*spec.Instance) []string {
	var out []string
	for _, in := range insts {
		if !slices.Contains(out, in.Case.Set) {
			out = append(out, in.Case.Set)
		}
	}
	return out
}

// merge is r's cases, one per case of either part: the verification's
// result where it failed or where the confirmation did not run the case,
// else the confirmation's (with the verification's findings).
func (c *checker) merge(r *Result) []CaseResult {
	var out []CaseResult
	idx := map[string]int{}
	for _, cr := range r.Verification.Cases {
		idx[cr.Case] = len(out)
		out = append(out, cr)
	}
	for _, cr := range r.Confirmation.Cases {
		i, ok := idx[cr.Case]
		if !ok {
			idx[cr.Case] = len(out)
			out = append(out, cr)
			continue
		}
		if out[i].Status == Pass && cr.Status != Pass {
			cr.Findings = out[i].Findings
			out[i] = cr
		}
	}
	return out
}

func backendName(b backend.Backend) string {
	if b == nil {
		return ""
	}
	return b.Name()
}

func (c *checker) progress(format string, args ...any) {
	if c.opts.Progress != nil {
		c.opts.Progress(fmt.Sprintf(format, args...))
	}
}

// variant judges one variant: its build (it fits the spec, compiles on
// both backends, keeps to the threadgroup memory limit), then its
// verification, then its confirmation; it stops at the first that fails.
func (c *checker) variant(ctx context.Context, v Variant, judge bool) (*Result, error) {
	start := time.Now()
	s := c.opts.Spec
	r := &Result{Name: v.Name, Path: v.Path, SHA256: sha(v.Text), Status: Pass}
	if r.Name == "" {
		r.Name = filepath.Base(v.Path)
	}
	r.Verification = Part{Backend: backendName(c.ver), Build: BuildChecking, Status: NotRun, Sets: c.setsOf(c.vinsts)}
	if c.ver == nil {
		r.Verification.Status = NotVerified
	}
	r.Confirmation = Part{Backend: c.run.Name(), Build: BuildPlain, Status: NotRun, Sets: c.setsOf(c.insts)}
	defer func() { r.Seconds = time.Since(start).Seconds() }()
	base := v.Base
	if base == "" {
		base = s.Source
	}
	if _, ok := c.sources[base]; !ok {
		return nil, fmt.Errorf("variant %s: no stage uses source %s", r.Name, base)
	}
	src := c.variantSources(base, v, r.Name)
	texts := src.texts
	if src.spec != nil {
		r.Point = src.spec.Path
	}
	if !judge {
		r.Status = NotJudged
		r.Msg = "the control failed"
		return r, nil
	}
	all := c.union()
	// The variant's own instances of the cases (its spec's, or the
	// baseline's).
	pins := map[*spec.Instance]*spec.Instance{}
	for _, in := range all {
		pin, err := c.instance(src, in)
		if err != nil {
			r.Status, r.Msg, r.Stopped = FailSpec, "the variant's spec does not fit the baseline's cases: "+firstLine(err.Error()), PartBuild
			r.Log = err.Error()
			return r, nil
		}
		pins[in] = pin
	}
	if c.metal() {
		for _, in := range all {
			err := pins[in].CheckKernels(func(path string) ([]byte, error) {
				if t, ok := texts[path]; ok {
					return t, nil
				}
				return c.opts.ReadFile(path)
			})
			if err != nil {
				r.Status, r.Msg, r.Stopped = FailSpec, "the variant no longer fits the spec: "+firstLine(err.Error()), PartBuild
				r.Log = err.Error()
				return r, nil
			}
		}
	}
	// Compile every stage configuration the cases need, on both backends,
	// and measure threadgroup memory before running anything.
	seen := map[string]bool{}
	for _, in := range all {
		for j, bst := range in.Stages {
			st := pins[in].Stages[j] // the variant's stage; bst the baseline's
			key := st.Entry + "\x00" + st.ConfigKey() + "\x00" + bst.Entry + "\x00" + bst.ConfigKey()
			if seen[key] {
				continue
			}
			seen[key] = true
			after, err := c.compile(ctx, c.run, src, st, false)
			if err != nil {
				r.Stopped = PartBuild
				return r, c.record(ctx, r, CompileError, fmt.Errorf("compile %s: %w", st.Entry, err))
			}
			if c.ver != nil {
				if _, err := c.compile(ctx, c.ver, src, st, true); err != nil {
					r.Stopped = PartBuild
					what := "compile %s for the checking mode: %w"
					if !c.same {
						what = "compile %s on the verification backend " + c.ver.Name() + ": %w"
					}
					return r, c.record(ctx, r, CompileError, fmt.Errorf(what, st.Entry, err))
				}
			}
			before, err := c.compile(ctx, c.run, c.base, bst, false)
			if err != nil {
				return nil, fmt.Errorf("baseline compile %s: %w", bst.Entry, err)
			}
			if st.Source != base && src.spec == nil {
				continue // the baseline's own stage
			}
			tg := TGMem{
				Entry: st.Entry, Before: before.ThreadgroupMemory(), After: after.ThreadgroupMemory(),
				SourceBefore: c.sourceTGMem(c.sources[bst.Source], bst), SourceAfter: c.sourceTGMem(src.texts[st.Source], st),
				DynamicBefore: dynamicTG(in, bst), DynamicAfter: dynamicTG(pins[in], st),
			}
			if !hasTG(r.TGMem, tg) {
				r.TGMem = append(r.TGMem, tg)
			}
			if total := tg.After + tg.DynamicAfter; total > c.opts.TGLimit && r.Status == Pass {
				r.Status, r.Stopped = FailTGMem, PartBuild
				r.Msg = fmt.Sprintf("%s: %d bytes of threadgroup memory, limit %d", st.Entry, total, c.opts.TGLimit)
				if tg.DynamicAfter > 0 {
					r.Msg = fmt.Sprintf("%s: %d bytes of threadgroup memory (%d static, %d bound by the spec's threadgroup buffers), limit %d",
						st.Entry, total, tg.After, tg.DynamicAfter, c.opts.TGLimit)
				}
			}
		}
	}
	if r.Status != Pass {
		return r, nil
	}
	dump := func(in *spec.Instance, label string, want, got map[string][]byte) error {
		if c.opts.DumpDir == "" || r.Dump != "" {
			return nil
		}
		dir := filepath.Join(c.opts.DumpDir, fileName(r.Name))
		index := DumpIndex{Spec: s.Path, Source: base, Variant: v.Path, Backend: label}
		if err := Dump(dir, index, in, []DumpRun{{Label: "baseline", Bytes: want}, {Label: "variant", Bytes: got}}); err != nil {
			return fmt.Errorf("dump %s: %w", r.Name, err)
		}
		r.Dump = dir
		return nil
	}
	verified := map[*spec.Instance]bool{}
	if c.ver != nil {
		vstart := time.Now()
		p := &r.Verification
		p.Status = Pass
		m := c.mapper(base, v, src)
		for i, in := range c.vinsts {
			c.progress("%s: case %d/%d %s", r.Name, i+1, len(c.vinsts), caseName(in))
			in := pins[in]
			cr, got, plain, err := c.verifyCase(ctx, src, in, c.vrefs[i], m, c.timeout(c.vtime, i))
			if err != nil {
				st, msg, log, err := c.caseFailure(ctx, r.Name, Crash, err)
				if err != nil {
					return nil, err
				}
				cr.Status, cr.Msg = st, msg
				if f, ok := c.failing(cr.Findings); ok {
					// The checking mode stopped the run: its finding says
					// more than the backend's one line.
					cr.Msg = f.Msg
				}
				if p.Log == "" {
					p.Log = log
				}
				addPart(p, cr)
				collectWarnings(r, cr)
				break // a crashing variant is not run further
			}
			switch cr.Status {
			case FailParity, FailLockstep:
				if err := dump(in, c.ver.Name()+" (checking build)", c.vrefs[i], got); err != nil {
					return nil, err
				}
			case FailBuildsDisagree:
				if err := dump(in, c.ver.Name()+" (checking build)", c.vrefs[i], got); err != nil {
					return nil, err
				}
			}
			_ = plain
			verified[in] = cr.Status == Pass
			addPart(p, cr)
			collectWarnings(r, cr)
		}
		if p.Status == Pass {
			if err := c.heldOut(ctx, r, v, src, m, p); err != nil {
				return nil, err
			}
		}
		p.Seconds = time.Since(vstart).Seconds()
		if p.Status != Pass {
			c.settle(r)
			return r, nil
		}
	}
	cstart := time.Now()
	p := &r.Confirmation
	p.Status = Pass
	for i, bin := range c.insts {
		in := pins[bin]
		if !c.same {
			c.progress("%s: confirm case %d/%d %s on %s", r.Name, i+1, len(c.insts), caseName(in), c.run.Name())
		} else if c.ver == nil {
			c.progress("%s: case %d/%d %s", r.Name, i+1, len(c.insts), caseName(in))
		}
		cr := CaseResult{Case: caseName(in), Status: Pass}
		limit := c.timeout(c.ctime, i)
		got, err := c.confirmRun(ctx, src, in, i, limit)
		if err != nil {
			st, msg, log, err := c.caseFailure(ctx, r.Name, Crash, err)
			if err != nil {
				return nil, err
			}
			cr.Status, cr.Msg = st, msg
			if p.Log == "" {
				p.Log = log
			}
			addPart(p, cr)
			break // a crashing variant is not run further
		}
		d, tol := CompareParity(in, c.crefs[i], got, c.opts.Parity)
		cr.Tolerance = tol
		if d != nil {
			cr.Status, cr.Mismatch = FailParity, d
			if c.same && verified[in] {
				cr.Status = FailBuildsDisagree
				cr.Msg = "the builds disagree: the checking build gives the baseline's bytes, the plain build (the one that is timed) " +
					"gives others: " + d.String()
			}
			if err := dump(in, c.run.Name()+" (plain build)", c.crefs[i], got); err != nil {
				return nil, err
			}
		}
		if cr.Status == Pass && i == 0 {
			// Determinism: the same variant on the same case, again.
			again, err := c.confirmRun(ctx, src, in, i, limit)
			if err != nil {
				st, msg, _, err := c.caseFailure(ctx, r.Name, Crash, err)
				if err != nil {
					return nil, err
				}
				cr.Status, cr.Msg = st, "the second of two identical runs: "+msg
			} else if d := Compare(in, got, again); d != nil {
				cr.Status, cr.Mismatch = FailNondet, d
				cr.Msg = "the variant is not deterministic: two identical runs of case " + caseName(in) +
					" give different bytes (want: the first run, got: the second): " + d.String()
			}
		}
		if cr.Status == Pass && c.opts.Race && c.ver == nil {
			if err := c.probe(ctx, c.run, src, in, got, limit, &cr); err != nil {
				st, msg, _, err := c.caseFailure(ctx, r.Name, Crash, err)
				if err != nil {
					return nil, err
				}
				cr.Status, cr.Msg = st, msg
			}
		}
		addPart(p, cr)
	}
	if p.Status == Pass && c.ver == nil {
		if err := c.heldOut(ctx, r, v, src, nil, p); err != nil {
			return nil, err
		}
	}
	p.Seconds = time.Since(cstart).Seconds()
	c.settle(r)
	return r, nil
}

// settle gives r the status of its first failing part and its merged
// cases.
func (c *checker) settle(r *Result) {
	r.Cases = c.merge(r)
	r.Verified = r.Verification.Status == Pass
	r.Tolerance = nil
	if !c.opts.Parity.Bitwise() {
		for _, p := range []*Part{&r.Verification, &r.Confirmation} {
			for _, cr := range p.Cases {
				if cr.Tolerance == nil {
					continue
				}
				if r.Tolerance == nil {
					r.Tolerance = newTolerance(c.opts.Parity)
				}
				r.Tolerance.add(c.opts.Parity, cr.Tolerance)
			}
		}
	}
	for _, part := range []struct {
		p    *Part
		name string
	}{{&r.Verification, PartVerification}, {&r.Confirmation, PartConfirmation}} {
		p := part.p
		if p.Status == Pass || p.Status == NotVerified || p.Status == NotRun {
			continue
		}
		r.Status, r.Msg, r.Mismatch, r.Stopped = p.Status, p.Msg, p.Mismatch, part.name
		if p.Mismatch != nil && p.Msg == p.Mismatch.String() {
			r.Msg = ""
		}
		if r.Log == "" {
			r.Log = p.Log
		}
		if !c.same && c.ver != nil {
			r.Msg = strings.TrimSpace(fmt.Sprintf("%s on %s: %s", part.name, p.Backend, r.Msg))
			r.Msg = strings.TrimSuffix(r.Msg, ":")
		}
		return
	}
}

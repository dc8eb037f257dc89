package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"metalab/spec"
	"metalab/variants"
)

// An Outcome is what evaluating one candidate came to, as a strategy
// needs it.
type Outcome struct {
	Infeasible bool   // its atoms cannot be combined
	Skipped    bool   // another shard evaluates it
	SHA256     string // the variant's, when built
	Passed     bool   // compiled and checked: bitwise identical, no finding
	Timed      bool   // explored: Ratio is its explore median ratio
	Ratio      float64
}

// A BudgetError says which budget ran out; the search stops there.
type BudgetError struct{ Why string }

func (e *BudgetError) Error() string { return "budget exhausted: " + e.Why }

// A Shard is the slice of a sweep one process runs: candidates whose
// index among the feasible ones is Index-1 modulo Count. The zero Shard
// is the whole sweep.
type Shard struct{ Index, Count int }

// ParseShard parses "I/N" (1 ≤ I ≤ N).
func ParseShard(s string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.Index, &sh.Count); err != nil || sh.Count < 1 || sh.Index < 1 || sh.Index > sh.Count ||
		fmt.Sprintf("%d/%d", sh.Index, sh.Count) != s {
		return Shard{}, fmt.Errorf("shard %q: want I/N with 1 ≤ I ≤ N, e.g. 2/4", s)
	}
	return sh, nil
}

func (s Shard) String() string {
	if s.Count <= 1 {
		return "1/1"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// owns reports whether the shard runs feasible candidate k.
func (s Shard) owns(k int) bool { return s.Count <= 1 || k%s.Count == s.Index-1 }

// What a strategy searches (Strategy.Over).
const (
	OverEdits  = "edits"  // sets of atoms: operators' choices at sites
	OverParams = "params" // points of the spec's tunable parameters
)

// A Strategy is one way of searching: over edits (the operators' atoms,
// Settings.Strategy) or over the spec's tunable parameters (its points,
// Settings.Tune). A sweep runs at most one of each: the hand-written
// variants first, then the edits at Settings.Point, then the points.
type Strategy struct {
	Name string
	Over string // OverEdits or OverParams
	Doc  string // what it does, in a line
	// Shardable says its candidates are fixed before any result is
	// known, so shards can split them; the others choose each step by
	// the results of the last.
	Shardable bool
	// Width and Step say it reads Settings.Beam and Settings.MinStep;
	// Samples that it reads Settings.Samples.
	Width, Step, Samples bool
	run                  func(x *explorer, ctx context.Context) error
	// expected is how many candidates it evaluates at most; 0 when not
	// known in advance.
	expected func(x *explorer) int
}

// Strategies are every strategy, over edits then over parameters.
var Strategies = []*Strategy{
	{Name: "ablate", Over: OverEdits, Shardable: true, Doc: "each atom alone: one choice of one site",
		run: (*explorer).ablate, expected: func(x *explorer) int { return len(x.sp.Atoms) }},
	{Name: "stack", Over: OverEdits, Doc: "the atoms added one by one, in source order or the order of --refs; an atom that fails is left out of later steps",
		run: (*explorer).stack, expected: func(x *explorer) int { return len(x.firsts()) }},
	{Name: "loo", Over: OverEdits, Shardable: true, Doc: "a set of atoms, then the set without each of them",
		run: (*explorer).loo, expected: func(x *explorer) int { return len(x.firsts()) + 1 }},
	{Name: "greedy", Over: OverEdits, Step: true, Doc: "forward selection: each round adds the atom whose variant explores fastest",
		run: func(x *explorer, ctx context.Context) error { return x.beam(ctx, 1) }},
	{Name: "beam", Over: OverEdits, Width: true, Step: true, Doc: "forward selection keeping the --beam fastest sets each round",
		run: func(x *explorer, ctx context.Context) error { return x.beam(ctx, x.set.Beam) }},
	{Name: "grid", Over: OverParams, Shardable: true, Doc: "every point of the tunable parameters the restrictions allow",
		run: (*explorer).points, expected: (*explorer).pointCount},
	{Name: "random", Over: OverParams, Shardable: true, Samples: true, Doc: "--samples points drawn from those the restrictions allow, by --seed",
		run: (*explorer).points, expected: (*explorer).pointCount},
}

// strategyOf returns the strategy called name, or the zero Strategy.
func strategyOf(name string) Strategy {
	if st := LookupStrategy(name, ""); st != nil {
		return *st
	}
	return Strategy{}
}

// LookupStrategy returns the strategy called name over over ("" either),
// or nil.
func LookupStrategy(name, over string) *Strategy {
	for _, st := range Strategies {
		if st.Name == name && (over == "" || st.Over == over) {
			return st
		}
	}
	return nil
}

// StrategyNames lists the strategies' names over over ("" all), joined
// by ", ".
func StrategyNames(over string) string {
	var names []string
	for _, st := range Strategies {
		if over == "" || st.Over == over {
			names = append(names, st.Name)
		}
	}
	return strings.Join(names, ", ")
}

// Shardable reports whether the search s runs can be split into shards:
// every strategy it runs fixes its candidates before any result is known
// (ablate, loo, grid, random).
func (s Settings) Shardable() bool {
	for _, name := range []string{s.Strategy, s.Tune} {
		if name == "" {
			continue
		}
		if st := LookupStrategy(name, ""); st == nil || !st.Shardable {
			return false
		}
	}
	return true
}

// Shardable reports whether the strategy called name can be sharded.
func Shardable(name string) bool {
	st := LookupStrategy(name, "")
	return st != nil && st.Shardable
}

// An explorer builds the candidates a strategy asks for, once each,
// within the budget, and evaluates those of its shard.
type explorer struct {
	sp     *Space
	set    Settings
	shard  Shard
	eval   func(ctx context.Context, c candidate) (Outcome, error)
	budget func() error // a time budget that ran out, or nil
	seen   map[string]Outcome
	built  int // feasible candidates, in every shard
	// hint, when set, is told of candidates the strategy will evaluate
	// soon (the pool checks them ahead); it changes no result.
	hint func(candidate)
	// edits are the edit variants the edit strategy built, at the
	// default point, in order, with their outcomes: the points are
	// tried on those that passed (on every one in a sharded sweep,
	// whose shards do not know each other's outcomes).
	edits []editVariant
}

// An editVariant is an edit strategy's variant as the parameter strategy
// crosses it with points.
type editVariant struct {
	atoms []int
	v     *variants.Variant // at the default point
	o     Outcome
}

// A candidate is a built variant and how the strategy came to it: its
// atoms, or the hand-written file it is.
type candidate struct {
	atoms []int
	v     *variants.Variant
	file  *HandWritten
	point spec.Point // the point it runs at; nil the default
}

// try builds atoms and evaluates the variant (or recalls it).
func (x *explorer) try(ctx context.Context, atoms []int) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	atoms = slices.Clone(atoms)
	slices.Sort(atoms)
	v, err := x.sp.Build(atoms)
	if err != nil {
		if Infeasible(err) {
			return Outcome{Infeasible: true}, nil
		}
		return Outcome{}, err
	}
	o, err := x.tryCandidate(ctx, candidate{atoms: atoms, v: x.sp.atPoint(v, x.sp.Fixed), point: x.sp.Fixed})
	if err == nil && !slices.ContainsFunc(x.edits, func(e editVariant) bool { return e.v.Sha256 == v.Sha256 }) {
		x.edits = append(x.edits, editVariant{atoms: atoms, v: v, o: o})
	}
	return o, err
}

// tryCandidate evaluates c (or recalls it) within the budgets.
func (x *explorer) tryCandidate(ctx context.Context, c candidate) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	if o, ok := x.seen[c.v.Sha256]; ok {
		return o, nil
	}
	if b := x.set.Budget.Variants; b > 0 && x.built >= b {
		return Outcome{}, &BudgetError{Why: fmt.Sprintf("variants=%d built", b)}
	}
	if err := x.budget(); err != nil {
		return Outcome{}, err
	}
	return x.evalOnce(ctx, c)
}

// evalOnce counts a new feasible candidate and evaluates it when the
// shard owns it.
func (x *explorer) evalOnce(ctx context.Context, c candidate) (Outcome, error) {
	k := x.built
	x.built++
	o := Outcome{SHA256: c.v.Sha256, Skipped: true}
	if x.shard.owns(k) {
		var err error
		o, err = x.eval(ctx, c)
		if err != nil {
			return Outcome{}, err
		}
		o.SHA256 = c.v.Sha256
	}
	x.seen[c.v.Sha256] = o
	return o, nil
}

// files evaluates the hand-written variants, in the plan's order, within
// the budgets, before the strategy's.
func (x *explorer) files(ctx context.Context) error {
	for i := range x.sp.Files {
		hw := &x.sp.Files[i]
		if _, err := x.tryCandidate(ctx, candidate{v: x.sp.atPoint(hw.Variant, x.sp.Fixed), file: hw, point: x.sp.Fixed}); err != nil {
			return err
		}
	}
	return nil
}

// explore runs the plan's strategy. A BudgetError ends it early and is
// returned; so is a cancelled context.
func (x *explorer) explore(ctx context.Context) error {
	if err := x.files(ctx); err != nil {
		return err
	}
	for _, name := range []struct{ name, over string }{{x.set.Strategy, OverEdits}, {x.set.Tune, OverParams}} {
		if name.name == "" || name.over == OverEdits && len(x.sp.Atoms) == 0 {
			continue
		}
		st := LookupStrategy(name.name, name.over)
		if st == nil {
			return fmt.Errorf("unknown strategy %q over %s", name.name, name.over)
		}
		if err := st.run(x, ctx); err != nil {
			return err
		}
	}
	return nil
}

// expected returns how many variants this shard is expected to evaluate:
// an upper bound (infeasible and repeated candidates are not evaluated),
// the variants budget's share, or 0 when not known in advance.
func (x *explorer) expected() int {
	n, known := len(x.sp.Files), true
	for _, name := range []struct{ name, over string }{{x.set.Strategy, OverEdits}, {x.set.Tune, OverParams}} {
		if name.name == "" || name.over == OverEdits && len(x.sp.Atoms) == 0 {
			continue
		}
		st := LookupStrategy(name.name, name.over)
		if st == nil || st.expected == nil {
			known = false
			continue
		}
		n += st.expected(x)
	}
	if !known {
		n = 0
	}
	if b := x.set.Budget.Variants; b > 0 && (n == 0 || b < n) {
		n = b
	}
	if c := x.shard.Count; c > 1 && n > 0 {
		n = (n + c - x.shard.Index) / c
	}
	return n
}

// order returns the atom indices in the seeded order the strategies take
// them in: a permutation drawn from a PCG generator's raw output, so that
// the same seed gives the same order on any machine and Go release. With
// explicit refs, their order.
func (x *explorer) order() []int {
	idx := make([]int, len(x.sp.Atoms))
	for i := range idx {
		idx[i] = i
	}
	if len(x.set.Refs) > 0 {
		return idx
	}
	r := rand.NewPCG(x.set.Seed, 0x6d65_74616c_6162) // "metalab"
	for i := len(idx) - 1; i > 0; i-- {
		j := int(r.Uint64() % uint64(i+1))
		idx[i], idx[j] = idx[j], idx[i]
	}
	return idx
}

// ablate tries each atom alone.
func (x *explorer) ablate(ctx context.Context) error {
	for _, a := range x.order() {
		if _, err := x.try(ctx, []int{a}); err != nil {
			return err
		}
	}
	return nil
}

// firsts returns the atoms a stack or leave-one-out set is made of: the
// refs as given, or each site's first choice in source order.
func (x *explorer) firsts() []int {
	var out []int
	for i, a := range x.sp.Atoms {
		if len(x.set.Refs) > 0 || !slices.ContainsFunc(out, func(j int) bool { return x.sp.Atoms[j].Site == a.Site }) {
			out = append(out, i)
		}
	}
	return out
}

// stack adds the atoms one by one, in order, each step building on the
// last that passed: an atom that cannot be combined or whose step fails a
// check is left out of the later steps.
func (x *explorer) stack(ctx context.Context) error {
	var cur []int
	firsts := x.firsts()
	for i, a := range firsts {
		if x.sp.sameSite(cur, a) {
			continue
		}
		o, err := x.try(ctx, append(slices.Clone(cur), a))
		if err != nil {
			return err
		}
		if o.Infeasible || !o.Passed {
			if x.hint != nil {
				// The steps ahead, taking each to pass.
				next := slices.Clone(cur)
				for _, b := range firsts[i+1:] {
					if !x.sp.sameSite(next, b) {
						next = append(next, b)
						x.hintAtoms(next)
					}
				}
			}
			continue
		}
		cur = append(cur, a)
	}
	return nil
}

// hintAtoms tells x.hint of the candidate of atoms, when it is feasible
// and new.
func (x *explorer) hintAtoms(atoms []int) {
	if x.hint == nil {
		return
	}
	atoms = slices.Clone(atoms)
	slices.Sort(atoms)
	v, err := x.sp.Build(atoms)
	if err != nil {
		return
	}
	c := candidate{atoms: atoms, v: x.sp.atPoint(v, x.sp.Fixed), point: x.sp.Fixed}
	if _, ok := x.seen[c.v.Sha256]; ok {
		return
	}
	x.hint(c)
}

// loo tries the whole set (its atoms that combine, in order), then the
// set without each of them in turn.
func (x *explorer) loo(ctx context.Context) error {
	var set []int
	for _, a := range x.firsts() {
		if x.sp.sameSite(set, a) {
			continue
		}
		if _, err := x.sp.Build(append(slices.Clone(set), a)); err != nil {
			if Infeasible(err) {
				continue
			}
			return err
		}
		set = append(set, a)
	}
	if len(set) == 0 {
		return nil
	}
	if _, err := x.try(ctx, set); err != nil {
		return err
	}
	if len(set) == 1 {
		return nil
	}
	for i := range set {
		rest := append(slices.Clone(set[:i]), set[i+1:]...)
		if _, err := x.try(ctx, rest); err != nil {
			return err
		}
	}
	return nil
}

// A node is a set of atoms the beam holds, with its explore ratio.
type node struct {
	atoms []int
	ratio float64
}

// beam is forward selection with a beam of width w (greedy: w = 1): each
// round extends every set of the beam by every atom it can take, keeps
// the w fastest by explore ratio, and stops when the fastest is not
// MinStep faster than the fastest before it.
func (x *explorer) beam(ctx context.Context, w int) error {
	beam := []node{{ratio: 1}}
	best := 1.0
	order := x.order()
	for {
		var pool []node
		var round [][]int
		tried := map[string]bool{}
		for _, n := range beam {
			for _, a := range order {
				if slices.Contains(n.atoms, a) || x.sp.sameSite(n.atoms, a) {
					continue
				}
				atoms := append(slices.Clone(n.atoms), a)
				slices.Sort(atoms)
				key := fmt.Sprint(atoms)
				if tried[key] {
					continue
				}
				tried[key] = true
				round = append(round, atoms)
			}
		}
		// The round's candidates are known before any of them is timed.
		for _, atoms := range round {
			x.hintAtoms(atoms)
		}
		for _, atoms := range round {
			o, err := x.try(ctx, atoms)
			if err != nil {
				return err
			}
			if o.Timed && o.Passed {
				pool = append(pool, node{atoms: atoms, ratio: o.Ratio})
			}
		}
		if len(pool) == 0 {
			return nil
		}
		slices.SortStableFunc(pool, func(a, b node) int {
			switch {
			case a.ratio < b.ratio:
				return -1
			case a.ratio > b.ratio:
				return 1
			}
			return 0
		})
		if pool[0].ratio > best*(1-x.set.MinStep) {
			return nil
		}
		best = pool[0].ratio
		beam = pool[:min(w, len(pool))]
	}
}

// A clock measures a sweep's time budgets.
type clock struct {
	start  time.Time
	wall   float64 // seconds; 0 unbounded
	device float64
	used   func() float64 // device seconds recorded so far
}

func (c *clock) check() error {
	if c.wall > 0 && time.Since(c.start).Seconds() >= c.wall {
		return &BudgetError{Why: "wall=" + seconds(c.wall) + " spent"}
	}
	if c.device > 0 && c.used() >= c.device {
		return &BudgetError{Why: "device=" + seconds(c.device) + " of timed samples recorded"}
	}
	return nil
}

// isBudget reports whether err is a BudgetError.
func isBudget(err error) bool {
	var be *BudgetError
	return errors.As(err, &be)
}

// describe lists atoms by ref, for logs.
func (sp *Space) describe(atoms []int) string {
	var refs []string
	for _, a := range atoms {
		refs = append(refs, sp.Atoms[a].String())
	}
	return strings.Join(refs, " + ")
}

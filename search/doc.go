// Package search runs a sweep: the loop of the hand-written kernel reports
// (snapshot the baseline, declare a plan, build variants, check them, time
// them in alternating pairs, confirm the best, decide by a rule declared
// in advance, hand back patches) as one call, Run, that records every
// result as it arrives and picks up where it stopped.
//
// # The plan
//
// A Plan is declared before anything runs and written to plan.json and
// into the results store (search/store), whose hash of it keys every
// result: the baseline's and the spec's sha256 (and every other source's),
// the owned functions and macro flags, the checked and timed cases, the
// target and explore cases, pairs, warm-ups, re-runs and dispatches per
// sample of each phase, the threadgroup memory limit and checking mode, the
// parity rule (bitwise, or an opt-in tolerance), the contamination screen,
// the search settings (strategies, operators, choices, refs, seed, beam
// width, budgets, hand-written variant files with their sha256, the
// tunable parameters' points, the patch scope) and the decision rule
// (measure.Rule) with its hash. Changing any
// of it, the rule above all, is a new plan, and a store or directory of
// another plan is refused (ResumeError, store.ErrOtherPlan): results of
// two plans are never mixed. Where the sweep runs (device, shard, output
// directory, repository to verify patches against) is not part of it.
//
// # Hand-written variants
//
// Settings.Files are variants written by hand (sweep --variant FILE|DIR,
// a directory's *.metal files): each is recorded in the plan by its path
// and sha256, named "file.<base name>-<sha256[:8]>", stored with the ref
// "file:<path>", and goes through the same stages as a generated variant,
// first, before the strategies'. One whose change reaches outside the
// owned functions (patches.CheckFuncScope) is recorded so (VariantFile.
// OutsideFn) and shown so in the report; its patch is refused unless
// Settings.Scope is "file" (--scope file). With files and neither
// operators nor refs only they are swept. A file that changed since the
// plan was made is an error on resume (FileChangedError), never a new
// variant.
//
// # Tunable parameters
//
// A spec's tune: section gives parameters (spec.Param) that its defines,
// geometry, constants and buffer sizes may read; the baseline is the spec
// at their defaults. A candidate is a source at a point: its checks run
// under the spec at that point (check.Variant.Spec), its outputs compared
// with the default-point baseline's on every case, its threadgroup memory
// judged at the point's own defines (so a point over the limit is not
// compiled). A candidate at another point is keyed by its source's and
// its point's hashes together, named "<name>@NSG=2" and stored with the
// ref "point:NSG=2". The points are fixed in the plan (Settings.Points):
// grid takes every point the restrictions allow but the default, random
// Settings.Samples of them drawn by the seed; each is tried on the
// baseline's source, on every hand-written variant's and on every edit
// variant's that passed its checks (every one built, in a sharded sweep):
// sources x points, within the budgets. Settings.Point
// (--point) is the point the edits and hand-written variants run at (the
// edits' barrier proofs are made for its geometry). A retained point's
// patch edits the #define of each parameter a define of the spec carries
// (Spec.DefineParams, patches.DefineEdit); every other parameter, and
// every geometry the point changes, is a host-side note (the patch's
// header, patches/<name>.host.txt, the report and the summary).
//
// # Parity
//
// Variants are compared with the baseline bitwise unless the plan opts in
// to a tolerance (Plan.Parity: "ulp=N" or "rel=X", check.Parity) for
// changes that reorder arithmetic. Under it, a case that passes without
// being bitwise identical is stored with the message "not bitwise (...)"
// and by how much, and the report's variant and case, the JSON result, the
// summary and the patch's header say so; the rule's text names the
// tolerance.
//
// # Atoms and strategies
//
// A Strategy searches edits (OverEdits: Settings.Strategy) or the
// tunable parameters' points (OverParams: Settings.Tune); Strategies
// lists them all, and a sweep runs at most one of each, after the
// hand-written variants: the edits at Settings.Point, then the points.
// The operators' sites in the owned functions (mutate.FindAll) give the
// atoms: one choice of one site (every choice, or each site's first with
// Settings.Choices "first"; or exactly Settings.Refs). A candidate is a
// set of atoms, built with variants.Build; an infeasible combination (two
// choices of one site, overlapping edits) is skipped, not a failure. The
// strategies:
//
//   - ablate: each atom alone;
//   - stack: the atoms added one by one in order (source order of each
//     site's first choice, or Refs), each step building on the last that
//     passed its checks, like the reports' exploratory tables;
//   - loo: a set (the same atoms, those that combine) and the set without
//     each of them: what each part contributes;
//   - greedy: forward selection: each round adds to the best set the atom
//     whose variant explores fastest, while it is MinStep faster;
//   - beam: forward selection keeping the Beam fastest sets each round;
//   - grid (over parameters): every point the restrictions allow;
//   - random (over parameters): Settings.Samples of those points.
//
// Ablate, greedy and beam take the atoms in an order drawn from a PCG
// generator seeded with Settings.Seed (its raw output, so the same seed
// gives the same order on any machine and Go release); with a budget, the
// seed decides which atoms an ablation samples. Given the plan, the
// strategies are deterministic except where timings steer them (greedy,
// beam), and a resumed sweep reads those timings back, so it takes the
// same path.
//
// Budgets (Budget) bound the variants built (hand-written, edits and
// points together), the device seconds of the
// timed samples recorded under the plan (a resumed sweep counts what it
// recorded before) and the wall time of one run. When one runs out the
// search stops (a BudgetError in Result.Budget and the report); a spent
// time budget stops confirmation too, leaving verdicts pending.
//
// # Stages
//
// Cheap before dear, each stage only for a variant that passed the last:
//
//  1. static threadgroup memory from the source (msl), over the limit:
//     not compiled (compile status fail-tgmem);
//  2. compile and compiled threadgroup memory, then the two-part verdict
//     (check.Session with a verification backend): verification, bitwise
//     parity in the checking mode (races, uninitialised reads, bounds) at
//     the verification cases on Options.Verify (the cpu backend for cuda
//     and metal) or the timing backend's own checking build; then
//     confirmation, bitwise parity of the build that is timed on the
//     timing backend at every timed case. A variant is timed only when
//     both pass (Plan.Verify.Off confirms only, and every result says
//     "not verified"). A variant made only of operators that claim to
//     keep outputs (ClaimsProof: all but drop-barrier) that fails is a
//     proof violated (check.ProofViolated): metalab's bug, counted apart
//     (Result.ProofViolated);
//  3. explore: Explore.Pairs alternating A/B pairs at the explore case
//     (measure.Paired), after a control of the baseline against itself
//     there. After every measurement of a variant, the outputs of each
//     side's last timed sample, read back after its dispatches and
//     outside its time, are compared (check.FailAfterTiming when they
//     differ: the variant is not timed again, and a confirmed one is
//     rejected);
//  4. confirm: the Confirm.Top fastest explored variants (those faster
//     than the baseline) are timed with Confirm.Pairs pairs at the target
//     case, then every other timed case, then Rule.Confirmations more times
//     at the target, between a control before and one after; the rule
//     decides as soon as the evidence settles a variant's fate (it
//     rejects it, or some evidence is unusable, contaminated in every
//     attempt, which more timing cannot mend), so a variant too slow at
//     the target is not timed elsewhere;
//  5. decide: Rule.Decide on the evidence; retained variants get a patch
//     (patches.Make: the owned functions only, or the whole file with
//     Settings.Scope "file", git apply --check against Options.Repo,
//     refused if its file is not the baseline any more). A repository
//     that does not hold the baseline at Plan.Path is refused before any
//     work (RepoError, CheckRepo).
//
// A sample is the dispatches of one timing run submitted together
// (Phase.Dispatches, else the spec's dispatches:), summed over the timed
// stages: those running an owned function; the stages after the last of
// them are not run. Samples are timed by the backend's clock; on the cpu
// backend they are emulator timings, and every report says so. When a
// measurement was contaminated and its samples were shorter than
// measure.MinSampleTime, the result suggests the --dispatches that would
// time them (Result.Dispatches, Result.Suggest). Plan.Screen sets the
// contamination screen (--max-noise, --no-screen).
//
// # Results, resume and the report
//
// Every compile, verification (the verification backend's checks),
// confirmation and check after timing (the timing backend's
// confirmations), timing pair, measurement summary, control and
// decision is written to the results store as it arrives (one transaction
// each, durable before the next run starts), keyed by plan, baseline,
// variant sha256, backend, device, case and phase. Run with
// Options.Resume asks the store before each step and redoes nothing that
// finished: a measurement cut short is taken again from its first pair. A
// contaminated measurement is measured again, up to Phase.MaxReruns times,
// each attempt kept. Statistics are always recomputed from the stored
// pairs (measure.Analyze), so a result reads the same whether it was just
// taken or read back, and BuildInput makes the report from the store
// alone: a resumed sweep's report equals an uninterrupted one's except for
// timings.
//
// The output directory holds plan.json, manifest.json (every source's
// sha256, metalab's version, backend, device, compiler, clock, and the
// directory the plan's relative paths are relative to, through which a
// sweep resumed from another directory finds them), the store
// (results.db), baseline/ (the snapshot), variants/ (every variant built),
// logs/ (one log per variant), report.md, report.json, plots/ and patches/.
//
// # Pipeline
//
// With Options.Jobs > 1 (sweep --jobs, default every core) a pool of
// that many workers checks the variants to come while the current one
// is timed: building the variant is the main loop's (cheap), and the
// pool runs check.Session.Check, which may be called from several
// goroutines (its compiles are shared by key, its held-out seeds drawn
// from each variant's text): the static threadgroup memory screen is
// the main loop's, then compile of both builds on both backends,
// verification, confirmation. Which variants come next: for ablate,
// loo, grid and random (Strategy.Shardable) every candidate, from a dry
// run of the strategy before the first is evaluated (each candidate
// taken to pass and not timed: grid and random then cross points with
// every edit variant, and those whose source fails are checked for
// nothing); for greedy and beam each round's candidates before the
// round's first is timed; for stack the steps ahead, taking each to pass
// (again after a step fails). The pool skips what the store already
// decides (a resumed sweep) and what the main loop will not check.
//
// The main loop is unchanged: it takes the candidates in the strategy's
// order, reads the pool's check of each (or checks it itself when the
// pool has not started it), records it, logs it and times it. So the
// store holds the same rows as with one job, written in the same order (apart
// from their times), the report and the verdicts are the same, and
// resume is as exact: a check the pool finished that the main loop had
// not recorded when the sweep was killed is only done again. Timing
// stays exclusive: every timed sample holds the device (a write lock);
// the pool's runs on the timing backend when it is a device (cuda,
// metal: confirmation, and the checking build's verification where the
// timing backend verifies) wait for the sample to end, because a kernel
// run on the GPU beside a sample would be timed with it. On the cpu
// backend the pool's confirmation runs beside samples like its compiles:
// both take the host's cores from the emulator's sample alike, so they
// are one question, Options.PauseDuringSamples (sweep
// --pause-during-samples on|off|auto): with it, the pool's compiles and
// runs of every backend wait while a sample is timed (an operation
// under way finishes first; its sample starts after). auto
// (PauseByDefault) pauses for the cpu timing backend, whose samples run
// on the cores the pool compiles on, and not for a GPU, whose samples
// the host's compiles do not run on; scripts/pool-control measures it:
// the 9-pair control at the first exploration with the pool busy and
// paused. Progress events carry the pool's state (Event.Pipeline: queued,
// compiling, verifying, confirming, timing, and its rate of checks).
//
// # Shards
//
// The unit of work is one variant's checks and timings on one device.
// Options.Shard runs a deterministic slice of a sweep whose strategies
// are all shardable (ablate, loo, grid, random): the feasible candidates
// whose index is I-1 modulo N, hand-written variants included, each shard
// into its
// own directory and store; MergeDirs combines the shards' stores (refusing
// mixed plans or baselines) and copies what a report needs, and Rerender
// renders the whole sweep. Each shard confirms and decides its own fastest
// variants. Strategies whose steps depend on earlier results (stack,
// greedy, beam) are not sharded.
package search

// Package measure times a candidate kernel against its baseline and
// decides, by a rule declared in advance, whether the candidate is
// better. It runs nothing itself: a Sampler (one timed sample of one
// side, supplied by the caller from a backend) is all it knows of a
// kernel, so it depends on no backend.
//
// # Paired alternating timing
//
// Paired takes warm-up samples of each side, then pairs: one sample of
// the baseline (side A) and one of the candidate (side B) back to back,
// A first in even pairs and B first in odd ones (A B, B A, A B, ...).
// Taking the two sides close together means a slow drift of the machine
// (clocks, temperature, other work) falls on both, and the per-pair
// ratio B/A cancels it; alternating the order cancels a position effect
// (the second run of a pair finding warm caches). Every sample is kept:
// warm-ups, pairs, earlier attempts, a half pair cut short. An untimed
// correctness run of each side is the caller's job, before Paired.
//
// A Sample says which clock timed it: ClockGPU (device timestamps, CUDA
// events, Metal GPU start and end times) or ClockHost (a host clock
// around the dispatches). One result never mixes clocks. Options.Label
// says what the time means ("cpu emulator time: exercises the loop, not
// a GPU claim"); measure carries and prints it.
//
// # Statistics
//
// A Result's Stats are those of its last attempt: each side's median;
// Ratio, the median of the per-pair ratios B/A (below 1: B is faster);
// Change, (Ratio-1)·100 percent; Wins, the pairs where B was faster;
// the smallest and largest pair ratio; Order, the position effect (how
// much slower the second run of a pair is than the first, from the
// A-first pairs against the B-first ones); and the relative noise of
// each side.
//
// Ratio's interval is a percentile bootstrap: the pairs are resampled
// with replacement Options.Resamples times (10000) by a PCG generator
// seeded with Options.Seed, the median ratio of each resample is taken,
// and the interval runs between the order statistics at α/2 and 1-α/2
// (nearest rank) for α = 1-Options.Confidence (0.95). Why this method:
// timing noise is skewed with a heavy right tail, so intervals that
// assume normal errors (a t interval on the mean ratio) are wrong, and
// the bootstrap assumes nothing about the distribution; the median
// ignores the odd preempted sample; the percentile method respects
// transformations (the interval for A/B or for the percent change is the
// same interval mapped), where BCa's acceleration, estimated by the
// jackknife, is unreliable for a median; and the fixed seed makes the
// same samples give the same interval, on any machine or Go release (the
// resampling indices come from the generator's raw output). Its coverage
// is near the nominal level at the default 9 pairs (about 95 %; a test
// checks at least 90 % over 200 seeded synthetic runs) but the median of
// a handful of values is coarse: at 7 pairs a nominal 95 % interval
// covers about 87 %. Use at least 9 pairs for decisions (Rule.MinPairs).
//
// # Contamination
//
// Something else on the machine (another GPU job, a clock change) can
// move both sides at once. Paired screens each attempt's pairs (Screen)
// and measures again, up to Options.MaxReruns times (2), when it finds
// any; Result.Notes say what each attempt found. If every attempt is
// contaminated, Result.Contaminated is set and no decision may use the
// result (Decide makes it inconclusive).
//
// The rule, per side, over the pairs in order: the level is the side's
// median; the noise σ is the smaller of two robust estimates of the
// standard deviation, the median absolute difference between successive
// samples over 0.6745·√2, which a level shift disturbs by one difference
// only, and the median absolute deviation from the median times 1.4826,
// which an isolated outlier disturbs by one deviation only (the MAD alone
// grows with a shift that covers much of the series, and hides it). A
// pair is out of level when both sides are further from their medians than
// max(K·σ, Floor·median) (K 3, Floor 5 %) in the same direction. Then:
//
//   - shift: Run (2) or more consecutive pairs out of level in the same
//     direction: both sides jumped together, as in a contention burst
//     (pairs at 80–88 ms after 63–66 ms);
//   - noise: both sides' σ exceeds MaxNoise (5 %) of their medians: the
//     machine was busy throughout (99–133 ms).
//
// A single pair out of level (a warm-up or load outlier) is a note, not a
// flag: the medians set it aside. A difference between the sides, however
// large, is not contamination; nor is noise in one side only (the
// candidate's own timing may vary; a note says so). Drift across a
// sweep is caught by controls.
//
// # Controls
//
// Control measures the baseline against itself. Its ratio should be 1;
// its Spread (how far its interval reaches from 1) is the smallest
// difference the measurement resolves. A control before the candidates
// and one after, compared with Drift, show whether the machine changed
// in between: a contaminated control, different clocks, or a baseline
// level (the median of all the control's samples) moving by more than
// MaxDrift (1 %) is drift.
//
// # The decision rule
//
// A Rule is declared before any candidate runs and identified by Hash
// (the sha256 of its canonical JSON), so a sweep's plan can show it was
// not tuned to the results. Rule.Decide is a pure function of the
// evidence (Decision: the bitwise assertion, the target case, the other
// cases, the confirmations, the controls) that returns a Verdict with
// one Clause per condition, each with its reason. The default rule:
// bitwise identical; a median gain of at least 3 % at the target case;
// no other case slower by more than 1 % with confidence (the interval's
// lower bound on the slowdown exceeds 1 %: a noisy case is not called a
// regression on its median alone); two confirmations, each a fresh
// Paired at the target case that must show a median gain of at least
// 3 % and an interval wholly below a ratio of 1. Both, because a
// candidate picked as the best of many explored has an upward-biased
// gain (the winner's curse): a fresh run must reach the bar itself, not
// merely differ from zero. A failed clause rejects; unusable evidence
// (contaminated, cut short, too few pairs) makes the verdict
// inconclusive; missing evidence makes it pending.
//
// # Export
//
// WriteBenchfmt writes the samples in the Go benchmark format
// (golang.org/x/perf/benchfmt) for benchstat; WriteText writes a summary
// for people; a Result marshals to JSON with every sample, and Analyze
// recomputes a Result from stored pairs.
package measure

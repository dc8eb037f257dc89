// Package report renders a sweep's results: report.md with tables in the
// shape of the hand-written reports metalab automates, report.json with
// the same content under stable field names, and SVG plots.
//
// The sweep fills an Input from its results store (search/store); Render
// never computes a statistic, it shows the numbers the measuring code
// computed, each with its pair count, the controls and the backend and
// device they ran on.
//
// # report.md
//
//   - the decision in one sentence (a retained variant with its point,
//     patch, refused patch or host-side change), the clock's own caveat
//     (for the cpu backend: "cpu emulator timings exercise the loop, they
//     are not GPU claims") as given in Provenance.Clock, and, when outputs
//     were compared under a tolerance (Plan.Parity, or a variant or case
//     judged by one), a "Not bitwise" line naming each variant that
//     differs from the baseline within it and by how much;
//   - Confirmation: per timed variant and case, before and after medians,
//     the gain (one minus the median per-pair ratio: the rule's median
//     gain, positive is faster, with "faster" or "slower" in words), its
//     interval, pairs, the check status (with the tolerance's judgement
//     when there is one), threadgroup bytes before → after and the
//     verdict, then each verdict with the rule's reasons, the patch or
//     why it was refused, and a host-side change; when no variant was
//     confirmed, whether any was timed in the exploration;
//   - Exploratory ablation: variant, before, after, gain at the explore
//     case;
//   - Checks: every variant's sites, compile, both parts of its checks,
//     threadgroup bytes and the first failure;
//   - Controls: the baseline timed against itself, medians, ratio and
//     spread (smallest and largest per-pair ratio);
//   - Contamination notes, with their attempt counts; the Plan (rule,
//     parity rule, strategy, tunable parameters, patch scope, kernel,
//     cases, pairs, baseline sha256, threadgroup limit, plan hash);
//     Provenance (metalab version, backend, device, compiler, clock);
//     links to the plots.
//
// Columns appear only when an input uses them: origin (a hand-written
// variant's file and sha256) when a variant is hand-written, point when
// one ran at a tunable-parameter point, "outside --fn" when one changes
// code outside the owned functions, parity when a tolerance was used.
// report.json's fields for them are left out when empty.
//
// A rule's reason that counts a measurement's attempts ("contaminated in
// all N attempts") is made to count them as the measurement's
// contamination note does, which counts every attempt stored.
//
// Durations in a table share one unit, the largest in which the table's
// smallest median is at least 1.
//
// # Plots
//
// Plots are drawn with gonum.org/v1/plot as SVG: per variant with raw
// pairs, its samples by pair index (A the baseline, B the variant), one
// panel per case under a header naming the variant by its id, its label,
// point and origin, and a legend above the panels; per case, every median
// pair ratio with its interval (controls with their spread) against a
// line at 1, each row named above its interval by its id, its words and
// its gain. Text is laid out as if drawn 1.3 times as wide as the plots'
// font (Liberation Serif; a viewer without it falls back to another, and
// DejaVu Serif is that much wider): a plot widens to its longest line, up
// to 10 inches, and wraps beyond at spaces and after a name's separators,
// never cutting a word short. The SVG carries no time stamp, so one input
// gives the same bytes. The tests do not compare SVG bytes with a golden,
// since the library's output (number formatting, element order) may
// change between its versions without the plot changing; they parse each
// file as XML and count its marks by colour (one per sample, ratio and
// interval), and measure every text against the canvas, the other texts
// and the marks.
//
// # Render
//
// Render writes every file atomically (a synced temporary file renamed
// into place) into a directory that is new, empty or an earlier report's:
// the manifest .metalab-report.json lists the files Render wrote with
// their sha256. A file Render did not write, or one changed since, is
// never overwritten (ErrNotOurs); a non-empty directory without a
// manifest is refused (ErrNotReportDir). The manifest is updated before
// and after the files are written, so a Render killed midway leaves a
// directory the next Render takes over.
package report

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
//   - the decision in one sentence, and the clock's own caveat (for the
//     cpu backend: "cpu emulator timings exercise the loop, they are not
//     GPU claims") as given in Provenance.Clock;
//   - Confirmation: per timed variant and case, before and after medians,
//     change (median per-pair ratio minus one), its interval, pairs,
//     bitwise status, threadgroup bytes before → after and the verdict,
//     then each verdict with the rule's reasons and the patch;
//   - Exploratory ablation: variant, before, after, change at the explore
//     case;
//   - Checks: every variant's sites, compile, bitwise status over every
//     case, threadgroup bytes and the first failure;
//   - Controls: the baseline timed against itself, medians, ratio and
//     spread (smallest and largest per-pair ratio);
//   - Contamination notes; the Plan (rule, strategy, kernel, cases, pairs,
//     baseline sha256, threadgroup limit, plan hash); Provenance (metalab
//     version, backend, device, compiler, clock); links to the plots.
//
// Durations in a table share one unit, the largest in which the table's
// smallest median is at least 1.
//
// # Plots
//
// Plots are drawn with gonum.org/v1/plot as SVG: per variant with raw
// pairs, its samples by pair index (A the baseline, B the variant), one
// panel per case; per case, every median pair ratio with its interval
// (controls with their spread) against a line at 1. The SVG carries no
// time stamp, so one input gives the same bytes. The tests do not compare
// SVG bytes with a golden, since the library's output (number formatting,
// element order) may change between its versions without the plot
// changing; they parse each file as XML and count its marks by colour:
// one per sample, ratio and interval.
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

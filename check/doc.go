// Package check decides whether kernel variants may replace their
// baseline: each variant must compile, stay within the threadgroup memory
// limit, and produce bitwise the same bytes as the baseline in every output
// buffer, never-written regions included (outputs start as sentinel
// bytes), and leave every input buffer as the baseline leaves it, for
// every case of the chosen sets (by default the spec's DefaultSets); with
// the race probe, its outputs must also not change with the order in which
// a threadgroup's threads run.
//
// # Control
//
// Before any variant is judged, the baseline runs twice on the same inputs
// (and, with the race probe, under every thread order). If those runs
// differ, the harness or the kernel is nondeterministic, and no variant is
// judged: the report says so.
//
// # Results
//
// Everything a variant does wrong (a compile error, a crash, a timeout, an
// out-of-bounds access, a parity or race difference, too much threadgroup
// memory) is that variant's result, with its log and the first differing
// element decoded by type; the other variants still run. Run returns an
// error only when checking itself cannot proceed (a bad spec case, an
// unreadable source, a cancelled context).
package check

// Package property holds the end-to-end property test of the mutation
// catalogue: on every bundled kernel spec (the qsa family, the examples)
// and specs of the cpu backend's conformance kernels, every site of every
// mutation is applied alone, and seeded random compositions are built
// both at once and one after another (sites listed again on each
// variant); each variant is checked on the cpu backend on the quick cases
// with the race probe. A mutation that keeps behaviour must give bitwise
// identical outputs with no race; only drop-barrier may be caught instead.
// The static threadgroup memory of every variant, from the source and from
// the compiled program, must agree.
//
// The default run checks a deterministic sample of sites; with
// METALAB_PROPERTY=all it checks every site and choice. -short skips it.
// METALAB_PROPERTY_REPORT=file.json writes the per-mutation numbers.
// METALAB_PROPERTY_COMPOSITIONS=N checks N random compositions at once and
// N/2 sequences per spec instead of the mode's number (2 and 1; 24 and 12
// with all), for files whose variants take long to build.
// METALAB_PROPERTY_JOBS=N checks N of a spec's variants at once (default
// one; the specs themselves run -test.parallel at once).
package property

// Package conformance holds the cpu backend's conformance suite: small Metal
// kernels in testdata/*.metal run through the real backend (translator,
// prelude, runner) and compared byte for byte with outputs computed
// independently in Go. Each implemented or partial row of the prelude's
// completeness table (backend/cpu/prelude/README.md) has a case here
// (stdlib_test.go for most), written the way ggml and MLX write kernels.
// It also checks that each program's static threadgroup memory matches
// msl's source estimate, that a racy kernel is caught by the fiber-order
// probe while its fixed twin is not, and that crashes, hangs, deadlocks and
// out-of-bounds writes come back as typed backend failures. Benchmarks
// compare emulated and native speed.
package conformance

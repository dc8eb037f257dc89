// Package runner is metalab's side of the runner protocol: the framed
// request/reply exchange (protocol.h, embedded as ProtocolHeader) with a
// child process that loads compiled kernels and runs them. The cpu
// backend's runner runs threadgroups as fibers on the host; the cuda
// backend's runs them on an NVIDIA GPU. Both speak the same protocol, and
// this package is what the two backends share of it:
//
//   - Start and Proc: starting a runner in its own process group with a
//     private working directory (removed as soon as the runner is in it,
//     so none is left in TMPDIR), one request at a time (Call) with a
//     timeout, and the translation of a runner that died into the kernel's
//     backend.Failure by its exit status (BadAccess, Sandbox, Timeout,
//     Crash; a memory fault of kernel code outside the runner's layout is
//     a BadAccess, death by SIGSYS a Sandbox failure) or into ErrProtocol;
//   - Encoder and Decoder for payloads, and the protocol's numbers;
//   - Load and Execute: the LOAD request, and a run's RESET, BUFFER,
//     DISPATCH and READ sequence;
//   - Pool and Lease: a runner process per program (per variant), the
//     least recently used stopped past a bound, one started ahead of its
//     use (the cuda backend, while nvcc compiles) or kept spare (the cpu
//     backend);
//   - Program: the lifecycle of one compiled kernel on both backends (its
//     lease, its kernel loaded again into a new runner, a run validated,
//     serialised by the backend's lock and retried), with the backend's
//     hooks: LOAD flags, what it keeps of the LOAD reply, the dispatch
//     itself (the cuda backend's launch lock and racecheck, the cpu
//     backend's findings) and its failures;
//   - Retry: a run that broke the protocol (a kernel that wrote to the
//     reply channel) is run once more on a fresh runner, and a second
//     violation is the kernel's Sandbox failure;
//   - serve.h (ServeHeader), the C++ both runners share around
//     protocol.h: the private reply descriptor, replies, the exit on a
//     broken protocol, the watch on metalab and the request loop, to
//     which each runner gives its handlers (WriteHeaders puts both
//     headers next to a runner's sources, HashHeaders into its cache
//     key).
//
// What a backend keeps for itself: how its runner is built and started
// (arguments, sandbox, environment), its checking-mode findings, and how it
// validates a dispatch.
package runner

// protocol.h — the framed protocol between metalab (Go) and the runner.
//
// Every request is: u32 kRequestMagic, u32 sequence number, u32 payload
// length, u8 type, payload. Every reply is: u32 kReplyMagic, u32 the
// request's sequence number, u32 payload length, u8 type, payload. All
// integers are little-endian. metalab checks the magic and the sequence
// number of every reply: bytes a kernel writes to the reply descriptor
// break them, and metalab restarts the runner and runs the request again.
// Two runners speak it: the cpu runner (backend/cpu/runtime) and the cuda
// runner (backend/cuda/runtime). The Go side (backend/runner/proto.go)
// mirrors these numbers.
//
// Requests and their payloads:
//   HELLO    -> OK: u32 len, a one-line description of the runner (fibers,
//               sandbox, address layout; or the GPU). The cuda runner
//               appends: u8 ready (a GPU is usable), u32 len, why not,
//               u32 len, GPU name, u32 compute capability major, minor,
//               u32 driver version, u32 runtime version (CUDA's 1000*major
//               + 10*minor), u32 multiprocessors, u64 global memory bytes,
//               u32 max threads per block, u64 shared memory per block,
//               u64 shared memory per block opt-in, u32 device count,
//               u32 device index
//   LOAD     u32 len, so path; u32 len, kernel name; u8 flags (bit 0: the
//            object is built for the checking mode)
//            -> OK: u32 handle, u64 static threadgroup bytes, u32 max threads,
//               u32 nslots, then per slot i32 id, u64 offset, u64 size,
//               u64 elem size, u32 rank, 4 x u64 extents, u32 len, name;
//               the cuda runner appends u32 len, the compiled function's
//               resources (registers, local memory, ...) as text
//   BUFFER   u32 index, u8 kind (0 device, 1 threadgroup), u64 size,
//            u8 source, then for source 1 size bytes; for 2 (keep) u32 len,
//            key, size bytes; for 3 (restore) u32 len, key. Source 0: no
//            data (threadgroup memory); 1: the bytes; 2: the bytes, and
//            the runner keeps a copy under key; 3: the bytes of the copy
//            kept under key, restored on the device (the cuda runner).
//            -> OK: empty; ERR kErrNotKept when no copy is kept under key
//               (never kept, or evicted): metalab sends the bytes again
//   DISPATCH u32 handle, u32 threadgroups x y z, u32 threads x y z,
//            u32 repeat, u8 order, u64 seed
//            -> OK: u32 n, n x u64 wall nanoseconds, u32 nfindings, findings,
//               [u64 nanoseconds of all repeat dispatches together]. The cpu
//               runner times each dispatch (n = repeat) and omits the
//               total; the cuda runner times them together between two
//               CUDA events (n = 0) and sends the total.
//   READ     u32 index -> OK: the buffer's bytes
//   RESET    -> OK: empty (frees every buffer)
// Replies are OK or ERR: u8 error kind, u32 len, message, and for DISPATCH
// u32 nfindings, findings.
//
// A finding is: u8 kind, u8 space, u8 fatal, u8 0, i32 buffer (device
// buffer index, threadgroup slot id or host threadgroup index), u32 len,
// name, i64 byte offset, u32 access size, u32 count (occurrences), two
// accesses, u32 len, note. An access is: u8 valid, u8 write, u8 atomic,
// u8 0, u32 threadgroup x y z, u32 thread index in threadgroup, u64 pc (an
// offset into the kernel's shared object, 0 if unknown), u32 line, u32
// column, u32 len, file (a known source position, when line > 0).
#pragma once
#include <cstdint>

namespace mtl_proto {

constexpr uint32_t kRequestMagic = 0x51544c4d;  // "MLTQ"
constexpr uint32_t kReplyMagic = 0x52544c4d;    // "MLTR"

enum MsgType : uint8_t {
  kOK = 0,
  kErr = 1,
  kLoad = 2,
  kBuffer = 3,
  kDispatch = 4,
  kRead = 5,
  kReset = 6,
  kHello = 7,
};

enum ErrKind : uint8_t {
  kErrOther = 0,
  kErrDeadlock = 1,
  kErrBadAccess = 2,
  kErrUsage = 3,  // a malformed request or one the kernel cannot take
  kErrLaunch = 4,  // the GPU refused the launch (resources, shared memory); cuda only
  kErrNotKept = 5,  // BUFFER restore: no copy is kept under the key (cuda only)
};

enum OrderKind : uint8_t {
  kInOrder = 0,       // threads in index order each phase
  kReversed = 1,      // threads in reverse index order
  kShuffle = 2,       // threads in a seeded random order, new each phase
  kSimdAhead = 3,     // one simd group at a time, lowest first, each to its next threadgroup barrier
  kSimdReversed = 4,  // as kSimdAhead, highest simd group first
  kSimdShuffle = 5,   // as kSimdAhead, simd groups in a seeded random order
};

enum BufferKind : uint8_t {
  kDevice = 0,
  kThreadgroup = 1,
};

enum BufferSource : uint8_t {
  kSourceNone = 0,
  kSourceData = 1,
  kSourceKeep = 2,
  kSourceRestore = 3,
};

enum LoadFlags : uint8_t {
  kLoadChecking = 1,
};

enum FindingKind : uint8_t {
  kFindRace = 1,       // conflicting accesses of two simd groups (or threadgroups) in one interval
  kFindUninit = 2,     // read of threadgroup memory no thread of the threadgroup wrote
  kFindBounds = 3,     // access outside the buffer or array
  kFindLockstep = 4,   // conflicting accesses of one simd group with no simd synchronisation between
  kFindDivergent = 5,  // a threadgroup barrier some threads never reached because they returned
};

enum Space : uint8_t {
  kSpaceDevice = 1,
  kSpaceThreadgroup = 2,  // static threadgroup declaration (buffer = slot id)
  kSpaceHostThreadgroup = 3,  // [[threadgroup(n)]] memory (buffer = n)
  kSpaceThread = 4,       // a thread-private array
  kSpaceUnknown = 5,
};

// Exit statuses of a runner that died because of the kernel.
constexpr int kExitBadAccess = 70;
constexpr int kExitCrash = 71;
constexpr int kExitProtocol = 72;
constexpr int kExitSandbox = 73;  // the kernel made a system call the sandbox forbids
constexpr int kExitTimeout = 74;  // the GPU's watchdog stopped the kernel (cuda)

}  // namespace mtl_proto

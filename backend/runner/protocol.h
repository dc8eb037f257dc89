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
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

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
  kFindMemNone = 6,    // a race whose accesses only a barrier without the memory's mem_flags separates
  kFindSameValue = 7,  // a race of two writes, the later leaving the bytes as the earlier did
};

enum Space : uint8_t {
  kSpaceDevice = 1,
  kSpaceThreadgroup = 2,  // static threadgroup declaration (buffer = slot id)
  kSpaceHostThreadgroup = 3,  // [[threadgroup(n)]] memory (buffer = n)
  kSpaceThread = 4,       // a thread-private array
  kSpaceUnknown = 5,
  kSpaceOutside = 6,      // no buffer, threadgroup array or the thread's stack: a forged pointer
};

// Exit statuses of a runner that died because of the kernel.
constexpr int kExitBadAccess = 70;
constexpr int kExitCrash = 71;
constexpr int kExitProtocol = 72;
constexpr int kExitSandbox = 73;  // the kernel made a system call the sandbox forbids
constexpr int kExitTimeout = 74;  // the GPU's watchdog stopped the kernel (cuda)

// ---------------------------------------------------------------------------
// Framing, shared by both runners: reading requests, writing replies.

constexpr uint32_t kMaxPayload = 1u << 31;

// read_full reads n bytes from fd; false at the end of input or on an
// error.
inline bool read_full(int fd, void* p, size_t n) {
  unsigned char* b = static_cast<unsigned char*>(p);
  while (n > 0) {
    ssize_t k = read(fd, b, n);
    if (k == 0) return false;
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    b += k;
    n -= size_t(k);
  }
  return true;
}

// write_full writes n bytes to fd; false on an error.
inline bool write_full(int fd, const void* p, size_t n) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  while (n > 0) {
    ssize_t k = write(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    b += k;
    n -= size_t(k);
  }
  return true;
}

// A Reader decodes one request payload; the first short read clears ok
// and every later read returns zero.
struct Reader {
  const unsigned char* p;
  const unsigned char* end;
  bool ok = true;
  template <typename T>
  T get() {
    T v{};
    if (size_t(end - p) < sizeof(T)) {
      ok = false;
      return v;
    }
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::string str() {
    uint32_t n = get<uint32_t>();
    if (!ok || size_t(end - p) < n) {
      ok = false;
      return std::string();
    }
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
};

// A Writer encodes one reply payload.
struct Writer {
  std::vector<unsigned char> b;
  template <typename T>
  void put(T v) {
    size_t n = b.size();
    b.resize(n + sizeof(T));
    std::memcpy(b.data() + n, &v, sizeof(T));
  }
  void bytes(const void* p, size_t n) {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    b.insert(b.end(), c, c + n);
  }
  void str(const std::string& s) {
    put<uint32_t>(uint32_t(s.size()));
    bytes(s.data(), s.size());
  }
};

// A Request is one request read by read_request.
struct Request {
  uint32_t seq = 0;
  uint8_t type = 0;
  std::vector<unsigned char> payload;
  Reader reader() const { return Reader{payload.data(), payload.data() + payload.size()}; }
};

// read_request reads the next request from fd into r. It returns nullptr
// on success; otherwise why it could not, with *closed set when metalab
// closed the pipe (the runner then exits quietly) rather than broke the
// protocol.
inline const char* read_request(int fd, Request* r, bool* closed) {
  *closed = false;
  unsigned char hdr[13];
  if (!read_full(fd, hdr, sizeof hdr)) {
    *closed = true;
    return "metalab closed the pipe";
  }
  uint32_t magic, len;
  std::memcpy(&magic, hdr, 4);
  std::memcpy(&r->seq, hdr + 4, 4);
  std::memcpy(&len, hdr + 8, 4);
  r->type = hdr[12];
  if (magic != kRequestMagic) return "bad request magic";
  if (len > kMaxPayload) return "request too large";
  r->payload.resize(len);
  if (len && !read_full(fd, r->payload.data(), len)) return "truncated request";
  return nullptr;
}

// send_reply writes one reply to fd: the header with the request's
// sequence number, then the payload; false when the write failed.
inline bool send_reply(int fd, uint32_t seq, uint8_t type, const void* payload, size_t n) {
  unsigned char hdr[13];
  uint32_t magic = kReplyMagic, len = uint32_t(n);
  std::memcpy(hdr, &magic, 4);
  std::memcpy(hdr + 4, &seq, 4);
  std::memcpy(hdr + 8, &len, 4);
  hdr[12] = type;
  return write_full(fd, hdr, sizeof hdr) && (n == 0 || write_full(fd, payload, n));
}

}  // namespace mtl_proto

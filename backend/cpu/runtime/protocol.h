// protocol.h — the framed protocol between metalab (Go) and the runner.
//
// Every message, in both directions, is: u32 payload length, u8 type,
// payload. All integers are little-endian. The Go side (backend/cpu/proto.go)
// mirrors these numbers.
//
// Requests and their payloads:
//   LOAD     u32 len, so path; u32 len, kernel name
//            -> OK: u32 handle, u64 static threadgroup bytes, u32 max threads,
//               u32 nslots, then per slot i32 id, u64 offset, u64 size
//   BUFFER   u32 index, u8 kind (0 device, 1 threadgroup), u64 size,
//            u8 has data, [size bytes]
//            -> OK: empty
//   DISPATCH u32 handle, u32 threadgroups x y z, u32 threads x y z,
//            u32 repeat, u8 order, u64 seed
//            -> OK: u32 n, n × u64 wall nanoseconds
//   READ     u32 index -> OK: the buffer's bytes
//   RESET    -> OK: empty (frees every buffer)
// Replies are OK or ERR: u8 error kind, u32 len, message.
#pragma once
#include <cstdint>

namespace mtl_proto {

enum MsgType : uint8_t {
  kOK = 0,
  kErr = 1,
  kLoad = 2,
  kBuffer = 3,
  kDispatch = 4,
  kRead = 5,
  kReset = 6,
};

enum ErrKind : uint8_t {
  kErrOther = 0,
  kErrDeadlock = 1,
  kErrBadAccess = 2,
  kErrUsage = 3,  // a malformed request or one the kernel cannot take
};

enum OrderKind : uint8_t {
  kInOrder = 0,
  kReversed = 1,
  kShuffle = 2,
};

enum BufferKind : uint8_t {
  kDevice = 0,
  kThreadgroup = 1,
};

// Exit statuses of a runner that died because of the kernel.
constexpr int kExitBadAccess = 70;
constexpr int kExitCrash = 71;
constexpr int kExitProtocol = 72;

}  // namespace mtl_proto

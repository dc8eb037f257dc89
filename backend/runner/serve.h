// serve.h — what the two runners (backend/cpu/runtime and
// backend/cuda/runtime) share around the protocol of protocol.h: the
// private reply descriptor, replies, the exit on a broken protocol, the
// watch that ends a runner when metalab goes away, and main's loop over
// requests. Each runner gives the handlers of its requests (Handlers) and
// keeps what is its own: the kernel ABI, buffers, dispatches, faults.
#pragma once
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "protocol.h"

namespace mtl_serve {

using mtl_proto::Reader;
using mtl_proto::Writer;

// g_out is the descriptor replies go to (take_protocol), g_seq the
// sequence number of the request being answered, g_report the descriptor
// of the runner's own one-line reports (stderr, or a private copy of it
// where a sandbox closes the rest).
inline int g_out = 1;
inline uint32_t g_seq = 0;
inline int g_report = 2;

// report_line writes s and a newline with one write(2), so that a line
// survives a runner about to die.
inline void report_line(const std::string& s) {
  std::string line = s + "\n";
  ssize_t r = write(g_report, line.data(), line.size());
  (void)r;
}

// protocol_exit reports why the protocol broke and exits with the status
// metalab reads as a protocol failure (it restarts the runner).
[[noreturn]] inline void protocol_exit(const char* why) {
  report_line(std::string("runner: ") + why);
  _exit(mtl_proto::kExitProtocol);
}

inline void send(uint8_t type, const void* payload, size_t n) {
  if (!mtl_proto::send_reply(g_out, g_seq, type, payload, n)) protocol_exit("write to metalab failed");
}

inline void send_ok(const Writer& w) { send(mtl_proto::kOK, w.b.data(), w.b.size()); }

// send_err replies ERR of kind with msg, then extra's bytes (a DISPATCH's
// findings).
inline void send_err(uint8_t kind, const std::string& msg, const Writer* extra = nullptr) {
  Writer w;
  w.put<uint8_t>(kind);
  w.str(msg);
  if (extra) w.bytes(extra->b.data(), extra->b.size());
  send(mtl_proto::kErr, w.b.data(), w.b.size());
}

// take_protocol moves replies to a private descriptor and makes stdout
// stderr, so that a kernel's stray output lands on stderr instead of
// corrupting replies; a write to a closed pipe is an error, not a signal.
inline void take_protocol() {
  g_out = dup(1);
  dup2(2, 1);
  signal(SIGPIPE, SIG_IGN);
}

// watch_parent ends the runner when metalab goes away, even while a
// kernel spins forever.
inline void watch_parent() {
  pid_t parent = getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (getppid() != parent) _exit(0);
    }
  }).detach();
}

// Handlers are a runner's answers to the requests; each replies itself.
struct Handlers {
  void (*hello)();
  void (*load)(Reader&);
  void (*buffer)(Reader&);
  void (*dispatch)(Reader&);
  void (*read)(Reader&);
  void (*reset)();
};

// serve answers requests on stdin until metalab closes it.
[[noreturn]] inline void serve(const Handlers& h) {
  mtl_proto::Request req;
  for (;;) {
    bool closed = false;
    if (const char* why = mtl_proto::read_request(0, &req, &closed)) {
      if (closed) _exit(0);
      protocol_exit(why);
    }
    g_seq = req.seq;
    Reader r = req.reader();
    switch (req.type) {
      case mtl_proto::kHello: h.hello(); break;
      case mtl_proto::kLoad: h.load(r); break;
      case mtl_proto::kBuffer: h.buffer(r); break;
      case mtl_proto::kDispatch: h.dispatch(r); break;
      case mtl_proto::kRead: h.read(r); break;
      case mtl_proto::kReset: h.reset(); break;
      default: send_err(mtl_proto::kErrUsage, "unknown request type " + std::to_string(req.type));
    }
  }
}

}  // namespace mtl_serve

// sandbox.cpp — hand-written kernels (no prelude, no translator, so nothing
// refuses them before they run) that try what a Metal kernel cannot do.
// The runner's sandbox must stop each one.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "mtl_rt.h"

using namespace mtl_rt;

namespace {

bool first() { return ctx().thread_position_in_grid[0] == 0; }

// shell: system() needs fork/clone and exec.
void shell_run(void* const* b, void* const*) {
  if (first()) static_cast<uint32_t*>(b[0])[0] = uint32_t(system("touch /tmp/metalab-sandbox-shell"));
}

// read_file: out[0] = 1 if a file outside the kernel cache could be read,
// out[1] = the errno of the attempt.
void read_file_run(void* const* b, void* const*) {
  if (!first()) return;
  uint32_t* out = static_cast<uint32_t*>(b[0]);
  int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
  out[0] = fd >= 0;
  out[1] = fd >= 0 ? 0 : uint32_t(errno);
  if (fd >= 0) close(fd);
}

// write_file: opening a file for writing is a forbidden system call.
void write_file_run(void* const* b, void* const*) {
  if (!first()) return;
  FILE* f = fopen("/tmp/metalab-sandbox-write", "w");
  static_cast<uint32_t*>(b[0])[0] = f != nullptr;
  if (f) fclose(f);
}

// net: a socket is a forbidden system call.
void net_run(void* const* b, void* const*) {
  if (first()) static_cast<uint32_t*>(b[0])[0] = uint32_t(socket(AF_INET, SOCK_STREAM, 0));
}

// asm_syscall: getuid through inline assembly, past every library.
void asm_syscall_run(void* const* b, void* const*) {
  if (!first()) return;
  long r = -1;
#if defined(__x86_64__)
  long nr = SYS_getuid;
  __asm__ volatile("syscall" : "=a"(r) : "a"(nr) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = SYS_getuid;
  register long x0 __asm__("x0");
  __asm__ volatile("svc 0" : "=r"(x0) : "r"(x8) : "memory");
  r = x0;
#endif
  static_cast<uint32_t*>(b[0])[0] = uint32_t(r);
}

// environment: out[0] = 1 if the runner's environment has any variable.
extern "C" char** environ;
void environment_run(void* const* b, void* const*) {
  if (first()) static_cast<uint32_t*>(b[0])[0] = environ != nullptr && environ[0] != nullptr;
}

// junk: writes a fake reply header to every descriptor the protocol could
// use, then finishes normally.
void junk_run(void* const* b, void* const*) {
  if (!first()) return;
  const char junk[] = "MLTR\x01\x00\x00\x00junk junk junk";
  for (int fd = 1; fd < 16; fd++) {
    if (write(fd, junk, sizeof junk) < 0) {
    }
  }
  static_cast<uint32_t*>(b[0])[0] = 7;
}

const KernelInfo kernels[] = {
    {"shell", shell_run, 0, nullptr, 1024},
    {"read_file", read_file_run, 0, nullptr, 1024},
    {"write_file", write_file_run, 0, nullptr, 1024},
    {"net", net_run, 0, nullptr, 1024},
    {"asm_syscall", asm_syscall_run, 0, nullptr, 1024},
    {"environment", environment_run, 0, nullptr, 1024},
    {"junk", junk_run, 0, nullptr, 1024},
};

}  // namespace

extern "C" const KernelInfo* mtl_kernels(int* count) {
  *count = int(sizeof kernels / sizeof kernels[0]);
  return kernels;
}

// hostile.cpp — hand-written kernels (no prelude, no translator, so no
// vetting refuses them) that attack the runner itself: its checking hooks,
// its code and its state, the other kernels, the host. Each must be stopped
// or caught by the runner's sandbox alone, and none may change what another
// kernel's run reports. Built for the checking mode, so the hooks exist.
//
// Buffer 0 (at least 64 bytes) is the kernel's output: out[0] and out[1]
// are results of the attack where the kernel lives to write them.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mtl_rt.h"

using namespace mtl_rt;

namespace {

bool first() { return ctx().thread_position_in_grid[0] == 0; }
uint32_t* out(void* const* b) { return static_cast<uint32_t*>(b[0]); }
uintptr_t page_of(const void* p) { return reinterpret_cast<uintptr_t>(p) & ~uintptr_t(4095); }

// race_body is an honest race: every thread of the (two or more simd
// group) threadgroup writes word 2 of buffer 0.
void race_body(void* const* b) { out(b)[2] = ctx().thread_position_in_grid[0]; }

// hook finds a checking hook the way the attack did: the runner exports it.
void* hook(const char* name) { return dlsym(RTLD_DEFAULT, name); }

// ret_over writes x86 `ret` (or aarch64 `ret`) over the first bytes of fn.
void ret_over(void* fn) {
#if defined(__aarch64__)
  const uint32_t ret = 0xd65f03c0;
  std::memcpy(fn, &ret, 4);
#else
  *static_cast<volatile unsigned char*>(fn) = 0xc3;
#endif
}

const char* const kHooks[] = {"__tsan_read1", "__tsan_read2", "__tsan_read4", "__tsan_read8",
                              "__tsan_write1", "__tsan_write2", "__tsan_write4", "__tsan_write8"};

// race: the honest racing kernel run after each hostile one.
void race_run(void* const* b, void* const*) { race_body(b); }

// patch_hooks_rwx: mprotect the hooks' code read-write-execute, as the
// attack did, write ret over them, then race.
void patch_hooks_rwx_run(void* const* b, void* const*) {
  if (first()) {
    for (const char* n : kHooks) {
      void* h = hook(n);
      if (!h) continue;
      mprotect(reinterpret_cast<void*>(page_of(h)), 8192, PROT_READ | PROT_WRITE | PROT_EXEC);
      ret_over(h);
    }
  }
  race_body(b);
}

// patch_hooks_rw: the same without PROT_EXEC in the mprotect (the hooks'
// pages stay executable only if the protection change is refused).
void patch_hooks_rw_run(void* const* b, void* const*) {
  if (first()) {
    for (const char* n : kHooks) {
      void* h = hook(n);
      if (!h) continue;
      mprotect(reinterpret_cast<void*>(page_of(h)), 8192, PROT_READ | PROT_WRITE);
      ret_over(h);
    }
  }
  race_body(b);
}

// remap_hooks: replace the hooks' pages with a fresh writable mapping.
void remap_hooks_run(void* const* b, void* const*) {
  if (first()) {
    void* h = hook("__tsan_write4");
    void* m = mmap(reinterpret_cast<void*>(page_of(h)), 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    out(b)[0] = m == MAP_FAILED;
    out(b)[1] = m == MAP_FAILED ? uint32_t(errno) : 0;
    if (m != MAP_FAILED) ret_over(h);
  }
}

// unmap_code: unmap the hooks' code (a later mapping could take its place).
void unmap_code_run(void* const* b, void* const*) {
  if (first()) {
    void* h = hook("__tsan_write4");
    int r = munmap(reinterpret_cast<void*>(page_of(h)), 4096);
    out(b)[0] = r != 0;
    out(b)[1] = r != 0 ? uint32_t(errno) : 0;
  }
}

// noop_hook is where patch_got sends the kernel's calls of __tsan_write4.
extern "C" void noop_hook(void*) {}

// relro_range returns this object's relocated read-only data (its GOT).
bool relro_range(uintptr_t* lo, uintptr_t* hi) {
  Dl_info self;
  if (!dladdr(reinterpret_cast<void*>(&noop_hook), &self)) return false;
  struct Find {
    uintptr_t base, lo, hi;
  } f = {reinterpret_cast<uintptr_t>(self.dli_fbase), 0, 0};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        Find* f = static_cast<Find*>(data);
        if (info->dlpi_addr != f->base) return 0;
        for (int i = 0; i < info->dlpi_phnum; i++) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_GNU_RELRO) {
            f->lo = info->dlpi_addr + ph.p_vaddr;
            f->hi = f->lo + ph.p_memsz;
          }
        }
        return 1;
      },
      &f);
  *lo = f.lo;
  *hi = f.hi;
  return f.lo != 0;
}

// patch_got: the kernel's calls of the hooks go through its GOT; make the
// GOT writable, point __tsan_write4's entry at a function that does
// nothing, then race. The GOT is searched for the hook's address.
void patch_got_run(void* const* b, void* const*) {
  if (first()) {
    out(b)[3] = 0;  // one call of __tsan_write4 first: a lazily bound entry is now bound
    uintptr_t target = reinterpret_cast<uintptr_t>(hook("__tsan_write4"));
    uintptr_t lo = 0, hi = 0;
    // The GOT is in the RELRO range (full RELRO) or just past it (lazy
    // binding's .got.plt): scan both.
    if (relro_range(&lo, &hi)) {
      uintptr_t plo = lo & ~uintptr_t(4095), phi = (hi + 4095) & ~uintptr_t(4095);
      mprotect(reinterpret_cast<void*>(plo), phi - plo, PROT_READ | PROT_WRITE);
      // The plain build calls no hook: there the entry of a C library
      // function it does call (dladdr) is overwritten with itself, which
      // only the seal stops.
      bool found = false;
      for (int pass = 0; pass < 2 && !found; pass++) {
        uintptr_t want = pass == 0 ? target : reinterpret_cast<uintptr_t>(&dladdr);
        uintptr_t with = pass == 0 ? reinterpret_cast<uintptr_t>(&noop_hook) : want;
        for (uintptr_t p = lo & ~uintptr_t(7); p + 8 <= phi + 4096; p += 8) {
          if (*reinterpret_cast<volatile uintptr_t*>(p) == want) {
            *reinterpret_cast<volatile uintptr_t*>(p) = with;
            found = true;
          }
        }
      }
    }
  }
  race_body(b);
}

// blind_checker: the checking mode's state is the runner's data. Shrink
// the address layout the hooks consult to nothing, then race. The runner
// exports it (runner::g_layout; span is its second word).
void blind_checker_run(void* const* b, void* const*) {
  if (first()) {
    if (auto* layout = static_cast<uintptr_t*>(dlsym(RTLD_DEFAULT, "_ZN6runner8g_layoutE"))) {
      layout[1] = 0;
      out(b)[0] = 1;
    }
  }
}

// mmap_exec: a fresh executable page, for code of its own.
void mmap_exec_run(void* const* b, void* const*) {
  if (first()) {
    void* m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    out(b)[0] = m != MAP_FAILED;
  }
}

// stack_exec: make its stack executable.
void stack_exec_run(void* const* b, void* const*) {
  if (first()) {
    char buf[64];
    out(b)[0] = mprotect(reinterpret_cast<void*>(page_of(buf)), 4096, PROT_READ | PROT_WRITE | PROT_EXEC) == 0;
  }
}

// ret_addr: overwrite its own return address (the fiber's stack).
__attribute__((noinline)) void smash(volatile uintptr_t* frame) { frame[1] = 0x4141414141414141ull; }
void ret_addr_run(void* const* b, void* const*) {
  if (first()) {
    smash(static_cast<volatile uintptr_t*>(__builtin_frame_address(0)));
    out(b)[0] = 1;
  }
}

// forged_write: write through a pointer made from an integer, outside
// every buffer and threadgroup array.
void forged_write_run(void* const* b, void* const*) {
  if (first()) *reinterpret_cast<volatile uint32_t*>(uintptr_t(0x10000)) = 1;
  out(b)[0] = 1;
}

// code_write: write into its own code.
void code_write_run(void* const* b, void* const*) {
  if (first()) ret_over(reinterpret_cast<void*>(&noop_hook));
  out(b)[0] = 1;
}

// sigaction_segv: install its own fault handler (to survive or fake faults).
void on_segv(int) { _exit(0); }
void sigaction_segv_run(void* const* b, void* const*) {
  if (first()) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    out(b)[0] = sigaction(SIGSEGV, &sa, nullptr) == 0;
  }
}

// thread: start a thread that outlives the dispatch (it makes only
// system calls the runner may: the thread itself is what must be refused).
void* spin(void*) {
  for (;;) sched_yield();
  return nullptr;
}
void thread_run(void* const* b, void* const*) {
  if (first()) {
    pthread_t t;
    out(b)[0] = pthread_create(&t, nullptr, spin, nullptr) == 0;
  }
}

// fork: a process of its own.
void fork_run(void* const* b, void* const*) {
  if (first()) {
    pid_t p = fork();
    if (p == 0) {
      for (;;) sched_yield();
    }
    out(b)[0] = p > 0;
  }
}

// kill: signal metalab (signal 0: a probe, harmless if it got through).
void kill_run(void* const* b, void* const*) {
  if (first()) out(b)[0] = kill(getppid(), 0) == 0;
}

// socket: a Unix socket (no network needed to be refused).
void socket_run(void* const* b, void* const*) {
  if (first()) out(b)[0] = socket(AF_UNIX, SOCK_STREAM, 0) >= 0;
}

// huge_alloc: out[0] = 1 if 1 TiB could be allocated, out[1] = 1 if 64 GiB
// could be mapped and touched.
void huge_alloc_run(void* const* b, void* const*) {
  if (first()) {
    void* p = std::malloc(size_t(1) << 40);
    out(b)[0] = p != nullptr;
    std::free(p);
    void* m = mmap(nullptr, size_t(64) << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    out(b)[1] = m != MAP_FAILED;
    if (m != MAP_FAILED) munmap(m, size_t(64) << 30);
  }
}

// proc_mem: read the runner's memory through /proc (out[0] = opened,
// out[1] = errno).
void proc_mem_run(void* const* b, void* const*) {
  if (first()) {
    int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    out(b)[0] = fd >= 0;
    out(b)[1] = fd >= 0 ? 0 : uint32_t(errno);
    if (fd >= 0) close(fd);
  }
}

// other_objects: read the objects directory it was loaded from: list it
// (out[0], out[1]) and open a file the test put there (out[2], out[3]).
void other_objects_run(void* const* b, void* const*) {
  if (!first()) return;
  Dl_info self;
  if (!dladdr(reinterpret_cast<void*>(&noop_hook), &self) || !self.dli_fname) return;
  std::string dir = self.dli_fname;
  dir.resize(dir.rfind('/'));
  int d = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  out(b)[0] = d >= 0;
  out(b)[1] = d >= 0 ? 0 : uint32_t(errno);
  if (d >= 0) close(d);
  int f = open((dir + "/metalab-hostile-secret.cpp").c_str(), O_RDONLY | O_CLOEXEC);
  out(b)[2] = f >= 0;
  out(b)[3] = f >= 0 ? 0 : uint32_t(errno);
  if (f >= 0) close(f);
}

// write_log: write text to stdout and stderr (out[0], out[1] = what
// write returned), then fault so that the runner's log comes back.
void write_log_run(void* const* b, void* const*) {
  if (!first()) return;
  const char text[] = "HOSTILE-TEXT-IN-LOG\n";
  out(b)[0] = uint32_t(write(1, text, sizeof text - 1));
  out(b)[1] = uint32_t(write(2, text, sizeof text - 1));
  std::fprintf(stderr, "%s", text);
  std::fflush(stderr);
  // The fault: far outside every region.
  *reinterpret_cast<volatile uint32_t*>(uintptr_t(0x20000)) = 1;
}

// host_file: try to leave a file on the host.
void host_file_run(void* const* b, void* const*) {
  if (first()) {
    int fd = open("/tmp/metalab-hostile-file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    out(b)[0] = fd >= 0;
  }
}

const KernelInfo kernels[] = {
    {"race", race_run, 0, nullptr, 1024, 0, nullptr},
    {"patch_hooks_rwx", patch_hooks_rwx_run, 0, nullptr, 1024, 0, nullptr},
    {"patch_hooks_rw", patch_hooks_rw_run, 0, nullptr, 1024, 0, nullptr},
    {"remap_hooks", remap_hooks_run, 0, nullptr, 1024, 0, nullptr},
    {"unmap_code", unmap_code_run, 0, nullptr, 1024, 0, nullptr},
    {"patch_got", patch_got_run, 0, nullptr, 1024, 0, nullptr},
    {"blind_checker", blind_checker_run, 0, nullptr, 1024, 0, nullptr},
    {"mmap_exec", mmap_exec_run, 0, nullptr, 1024, 0, nullptr},
    {"stack_exec", stack_exec_run, 0, nullptr, 1024, 0, nullptr},
    {"ret_addr", ret_addr_run, 0, nullptr, 1024, 0, nullptr},
    {"forged_write", forged_write_run, 0, nullptr, 1024, 0, nullptr},
    {"code_write", code_write_run, 0, nullptr, 1024, 0, nullptr},
    {"sigaction_segv", sigaction_segv_run, 0, nullptr, 1024, 0, nullptr},
    {"thread", thread_run, 0, nullptr, 1024, 0, nullptr},
    {"fork", fork_run, 0, nullptr, 1024, 0, nullptr},
    {"kill", kill_run, 0, nullptr, 1024, 0, nullptr},
    {"socket", socket_run, 0, nullptr, 1024, 0, nullptr},
    {"huge_alloc", huge_alloc_run, 0, nullptr, 1024, 0, nullptr},
    {"proc_mem", proc_mem_run, 0, nullptr, 1024, 0, nullptr},
    {"other_objects", other_objects_run, 0, nullptr, 1024, 0, nullptr},
    {"write_log", write_log_run, 0, nullptr, 1024, 0, nullptr},
    {"host_file", host_file_run, 0, nullptr, 1024, 0, nullptr},
};

}  // namespace

extern "C" const KernelInfo* mtl_kernels(int* count) {
  *count = int(sizeof kernels / sizeof kernels[0]);
  return kernels;
}

// sandbox.cpp — the runner runs untrusted kernels: after start-up it keeps
// only what running them needs.
//
// On Linux, in this order. At start-up: resource limits (no core files, no
// file growth, few descriptors, bounded memory and CPU time); no_new_privs;
// Landlock, so the only files the process can open are the compiled kernels
// in the objects directory (read-only) and it can make no TCP connection or
// signal another process; and a seccomp filter that allows the system calls
// the runner needs — reading and writing its pipes, memory mapping, futexes,
// clocks, read-only opens (for loading kernels) — and traps every other one
// (exec, fork, clone, sockets, ptrace, sigaction, ...). A trapped call ends
// the runner with a one-line report naming the call.
//
// A runner loads one kernel object in its life. Before loading it, a second
// Landlock layer narrows what can be read to that one file (and the shared
// libraries the loader may need), so a kernel cannot read the other kernels
// in the objects directory. Once it is loaded, lock_after_load seals (mseal)
// every loaded object's code, read-only data and relocated read-only data
// (the GOT of objects linked -z now), so nothing can make them writable,
// unmap or replace them, and installs a second seccomp filter: no mapping or
// protection change may add PROT_EXEC (no new code, ever: a page made
// writable can never run), no further filters, Landlock layers or seals,
// and writes only to the protocol's and the reports' descriptors (a kernel's
// own writes to stdout or stderr fail with EBADF and leave no text in the
// log). Where mseal is missing only the PROT_EXEC rule guards the code; the
// hello says which (seal=unavailable), and the runner's -no-seal makes it
// act so where mseal is there, for the tests of that fallback. Elsewhere only the resource limits apply.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runner.h"

#if defined(__linux__)
#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#endif

using namespace mtl_proto;

namespace runner {

int g_report_fd = 2;

namespace {

std::string set_limit(int res, const char* name, uint64_t v) {
  struct rlimit rl;
  rl.rlim_cur = rlim_t(v);
  rl.rlim_max = rlim_t(v);
  if (setrlimit(res, &rl) != 0) {
    // Lowering below a hard limit cannot fail; raising can: keep what is.
    return std::string(" ") + name + "=(" + std::strerror(errno) + ")";
  }
  return std::string(" ") + name + "=" + std::to_string(v);
}

#if defined(__linux__)

// Landlock, declared here so that older kernel headers do not matter.
constexpr uint64_t kLLReadFile = 1ull << 2, kLLReadDir = 1ull << 3;
constexpr int kLLCreateVersion = 1;
constexpr int kLLRulePathBeneath = 1;
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct LLRuleset {
  uint64_t handled_fs, handled_net, scoped;
};
struct __attribute__((packed)) LLPathBeneath {
  uint64_t allowed;
  int32_t parent_fd;
};

// library_dirs lists the directories of the shared libraries the
// process has loaded, each once.
std::vector<std::string> library_dirs() {
  std::vector<std::string> dirs;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        auto* out = static_cast<std::vector<std::string>*>(data);
        const char* name = info->dlpi_name;
        const char* slash = name ? std::strrchr(name, '/') : nullptr;
        if (!slash || slash == name) return 0;
        std::string dir(name, size_t(slash - name));
        for (const std::string& d : *out)
          if (d == dir) return 0;
        out->push_back(dir);
        return 0;
      },
      &dirs);
  return dirs;
}

// enter_landlock adds a Landlock layer to the calling thread (and the
// threads it starts later) under which only path (a directory, or one file
// when file is set), the loader's cache and the directories of the loaded
// libraries can be read.
std::string enter_landlock(const std::string& path, bool file) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kLLCreateVersion);
  if (abi < 1) return " landlock=unavailable";
  // Every filesystem right this ABI knows is handled (so denied unless a
  // rule allows it): 13 rights in v1, REFER in v2, TRUNCATE in v3,
  // IOCTL_DEV in v5.
  uint64_t fs = (1ull << 13) - 1;
  if (abi >= 2) fs |= 1ull << 13;
  if (abi >= 3) fs |= 1ull << 14;
  if (abi >= 5) fs |= 1ull << 15;
  LLRuleset rs = {fs, 0, 0};
  size_t size = 8;
  if (abi >= 4) {
    rs.handled_net = 3;  // bind and connect TCP
    size = 16;
  }
  if (abi >= 6) {
    rs.scoped = 3;  // abstract unix sockets and signals to other processes
    size = 24;
  }
  int fd = int(syscall(SYS_landlock_create_ruleset, &rs, size, 0));
  if (fd < 0) return std::string(" landlock=(") + std::strerror(errno) + ")";
  // Read-only: the kernel objects, and what the dynamic loader needs to
  // load their dependencies (a kernel object can need a library the
  // runner itself did not load, libm where libstdc++ no longer pulls it
  // in): the loader's cache and the directories of the libraries loaded.
  std::string readable = path;
  bool ok = true;
  auto allow = [&](const std::string& p, bool dir) {
    int pfd = open(p.c_str(), O_PATH | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
    if (pfd < 0) return false;
    LLPathBeneath pb = {dir ? kLLReadFile | kLLReadDir : kLLReadFile, pfd};
    long r = syscall(SYS_landlock_add_rule, fd, kLLRulePathBeneath, &pb, 0);
    close(pfd);
    return r == 0;
  };
  if (!path.empty()) ok = allow(path, !file);
  allow("/etc/ld.so.cache", false);
  for (const std::string& dir : library_dirs()) {
    allow(dir, true);
    readable += "," + dir;
  }
  long r = syscall(SYS_landlock_restrict_self, fd, 0);
  close(fd);
  if (r != 0) return std::string(" landlock=(") + std::strerror(errno) + ")";
  if (!ok) return " landlock=abi" + std::to_string(abi) + "(cannot open " + path + ")";
  return " landlock=abi" + std::to_string(abi) + "(read-only:" + readable + ")";
}

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kAuditArch = 0;
#endif

#ifndef SYS_mseal
#define SYS_mseal 462
#endif
constexpr int kSysMseal = SYS_mseal;

// allowed are the system calls the runner makes after start-up.
const int allowed[] = {
    SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64, SYS_close, SYS_fstat, SYS_lseek,
#ifdef SYS_newfstatat
    SYS_newfstatat,
#endif
#ifdef SYS_statx
    SYS_statx,
#endif
    SYS_mmap, SYS_munmap, SYS_mprotect, SYS_mremap, SYS_madvise, SYS_brk, SYS_futex,
    SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_sigaltstack, SYS_exit, SYS_exit_group, SYS_getpid, SYS_gettid,
    SYS_getppid, SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep, SYS_sched_yield,
#ifdef SYS_getrandom
    SYS_getrandom,
#endif
#ifdef SYS_rseq
    SYS_rseq,
#endif
    SYS_set_robust_list, SYS_restart_syscall, SYS_sched_getaffinity, SYS_getcwd,
    // Set-up after start-up, before the kernel object is loaded: the
    // object's Landlock layer, the seals and the second filter. The second
    // filter forbids them again.
    SYS_landlock_create_ruleset, SYS_landlock_add_rule, SYS_landlock_restrict_self, SYS_seccomp, kSysMseal,
};

// syscall_name names the system calls a kernel is most likely to try.
const char* syscall_name(int nr) {
  struct {
    int nr;
    const char* name;
  } names[] = {
#ifdef SYS_fork
      {SYS_fork, "fork"},
#endif
#ifdef SYS_vfork
      {SYS_vfork, "vfork"},
#endif
#ifdef SYS_clone3
      {SYS_clone3, "clone3"},
#endif
#ifdef SYS_open
      {SYS_open, "open"},
#endif
      {SYS_clone, "clone"},       {SYS_execve, "execve"},   {SYS_execveat, "execveat"},
      {SYS_socket, "socket"},     {SYS_connect, "connect"}, {SYS_openat, "openat (for writing)"},
      {SYS_kill, "kill"},         {SYS_tgkill, "tgkill"},   {SYS_ptrace, "ptrace"},
      {SYS_getuid, "getuid"},     {SYS_unlinkat, "unlinkat"}, {SYS_rt_sigaction, "rt_sigaction"},
      {SYS_prctl, "prctl"},       {SYS_ioctl, "ioctl"},     {SYS_mprotect, "mprotect (adding PROT_EXEC)"},
      {SYS_mmap, "mmap (with PROT_EXEC)"}, {SYS_pkey_mprotect, "pkey_mprotect"}, {SYS_seccomp, "seccomp"},
      {kSysMseal, "mseal"},       {SYS_landlock_restrict_self, "landlock_restrict_self"},
      {SYS_landlock_create_ruleset, "landlock_create_ruleset"}, {SYS_landlock_add_rule, "landlock_add_rule"},
      {SYS_rt_sigreturn, "rt_sigreturn"}, {SYS_process_vm_writev, "process_vm_writev"},
      {SYS_process_vm_readv, "process_vm_readv"}, {SYS_memfd_create, "memfd_create"},
  };
  for (const auto& n : names)
    if (n.nr == nr) return n.name;
  return nullptr;
}

void sigsys(int, siginfo_t* si, void*) {
  claim_death();
  Line l;
  l.str("sandbox: the kernel made a forbidden system call: ");
  if (const char* name = syscall_name(si->si_syscall)) l.str(name).str(" ");
  l.str("(number ").uint(uint64_t(si->si_syscall)).str(")");
  l.emit();
  _exit(kExitSandbox);
}

std::string enter_seccomp() {
  if (kAuditArch == 0) return " seccomp=unsupported-arch";
  std::vector<sock_filter> f;
  auto stmt = [&](uint16_t code, uint32_t k) { f.push_back(BPF_STMT(code, k)); };
  auto jump = [&](uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { f.push_back(BPF_JUMP(code, k, jt, jf)); };
  const uint32_t kTrap = SECCOMP_RET_TRAP, kAllow = SECCOMP_RET_ALLOW;
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
  jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);  // the x32 ABI
  stmt(BPF_RET | BPF_K, kTrap);
#endif
  for (int nr : allowed) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, 1);
    stmt(BPF_RET | BPF_K, kAllow);
  }
  // openat: read-only opens only (loading kernels); Landlock limits where.
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 2 * 8);
  jump(BPF_JMP | BPF_JSET | BPF_K, O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | 020000000, 0, 1);
  stmt(BPF_RET | BPF_K, kTrap);
  stmt(BPF_RET | BPF_K, kAllow);
  // Threads, until the kernel object is loaded (the workers start just
  // before): clone only with CLONE_THREAD; clone3, whose flags the filter
  // cannot see, fails with ENOSYS and the C library falls back to clone.
  // The second filter forbids both.
#ifdef SYS_clone3
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
#endif
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args));
  jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
  stmt(BPF_RET | BPF_K, kAllow);
  stmt(BPF_RET | BPF_K, kTrap);
  // tgkill: only to this process (abort raises SIGABRT this way).
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 0, 3);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args));
  jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(getpid()), 0, 1);
  stmt(BPF_RET | BPF_K, kAllow);
  stmt(BPF_RET | BPF_K, kTrap);
  struct sock_fprog prog;
  prog.len = static_cast<unsigned short>(f.size());
  prog.filter = f.data();
  // TSYNC: the filter applies to every thread of the process, the workers
  // started before it included.
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    return std::string(" seccomp=(") + std::strerror(errno) + ")";
  }
  return " seccomp=on";
}

// A Range is a page-aligned address range.
struct Range {
  uintptr_t lo, hi;
};

// sealable lists what lock_after_load seals: of every loaded object, each
// loadable segment that is not writable (code, read-only data) and its
// relocated read-only data (PT_GNU_RELRO, as the loader protected it).
std::vector<Range> sealable() {
  std::vector<Range> out;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        auto* out = static_cast<std::vector<Range>*>(data);
        uintptr_t pg = uintptr_t(page_size());
        for (int i = 0; i < info->dlpi_phnum; i++) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
          if (ph.p_memsz == 0) continue;
          if (ph.p_type == PT_LOAD && !(ph.p_flags & PF_W)) {
            out->push_back({lo & ~(pg - 1), (hi + pg - 1) & ~(pg - 1)});
          } else if (ph.p_type == PT_GNU_RELRO) {
            Range r = {lo & ~(pg - 1), hi & ~(pg - 1)};
            if (r.hi > r.lo) out->push_back(r);
          }
        }
        return 0;
      },
      &out);
  return out;
}

// g_no_seal makes seal_objects act as where the kernel lacks mseal (the
// runner's -no-seal, for the tests of that fallback).
bool g_no_seal = false;

std::string seal_objects() {
  if (g_no_seal) return " seal=unavailable(-no-seal)";
  int sealed = 0, failed = 0;
  std::string why;
  for (const Range& r : sealable()) {
    if (syscall(kSysMseal, r.lo, r.hi - r.lo, 0) == 0) {
      sealed++;
      continue;
    }
    if (errno == ENOSYS) return " seal=unavailable";
    failed++;
    if (why.empty()) why = std::strerror(errno);
  }
  std::string s = " sealed=" + std::to_string(sealed);
  if (failed) s += "(" + std::to_string(failed) + " failed: " + why + ")";
  return s;
}

std::string enter_run_filter(int proto_fd) {
  if (kAuditArch == 0) return " run-filter=unsupported-arch";
  std::vector<sock_filter> f;
  auto stmt = [&](uint16_t code, uint32_t k) { f.push_back(BPF_STMT(code, k)); };
  auto jump = [&](uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { f.push_back(BPF_JUMP(code, k, jt, jf)); };
  const uint32_t kTrap = SECCOMP_RET_TRAP, kAllow = SECCOMP_RET_ALLOW;
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  // mmap and mprotect: never PROT_EXEC (the low word holds every PROT_ bit).
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 1, 0);
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 2 * 8);
  jump(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1);
  stmt(BPF_RET | BPF_K, kTrap);
  stmt(BPF_RET | BPF_K, kAllow);
  // write and writev: only the protocol's and the reports' descriptors
  // (the descriptor is an unsigned int: the low word is all of it).
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 1, 0);
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_writev, 0, 5);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args));
  jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(proto_fd), 2, 0);
  jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(g_report_fd), 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EBADF);
  stmt(BPF_RET | BPF_K, kAllow);
  // What only set-up needed.
  const int setup[] = {SYS_clone,
#ifdef SYS_clone3
                       SYS_clone3,
#endif
                       SYS_seccomp, SYS_landlock_create_ruleset, SYS_landlock_add_rule, SYS_landlock_restrict_self,
                       kSysMseal, SYS_pkey_mprotect};
  for (int nr : setup) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, 1);
    stmt(BPF_RET | BPF_K, kTrap);
  }
  stmt(BPF_RET | BPF_K, kAllow);
  struct sock_fprog prog;
  prog.len = static_cast<unsigned short>(f.size());
  prog.filter = f.data();
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    return std::string(" run-filter=(") + std::strerror(errno) + ")";
  }
  return " run-filter=on";
}

#endif  // __linux__

}  // namespace

std::string confine_to_object(const std::string& path) {
#if defined(__linux__)
  return "object" + enter_landlock(path, true);
#else
  (void)path;
  return "";
#endif
}

void act_without_seal() {
#if defined(__linux__)
  g_no_seal = true;
#endif
}

std::string lock_after_load(int proto_fd) {
#if defined(__linux__)
  std::string s = seal_objects();
  return s + enter_run_filter(proto_fd);
#else
  (void)proto_fd;
  return "";
#endif
}

void install_sigsys_handler() {
#if defined(__linux__)
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = sigsys;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSYS, &sa, nullptr);
#endif
}

std::string restrict_process(const SandboxOptions& o) {
  std::string s = "rlimits:";
  s += set_limit(RLIMIT_CORE, "core", 0);
  s += set_limit(RLIMIT_FSIZE, "fsize", 0);
  s += set_limit(RLIMIT_NOFILE, "nofile", 64);
  if (o.memory > 0) {
    s += set_limit(RLIMIT_DATA, "data", o.memory);
    s += set_limit(RLIMIT_AS, "as", g_layout.span + o.memory + (uint64_t(8) << 30));
  }
  if (o.cpu_seconds > 0) s += set_limit(RLIMIT_CPU, "cpu", o.cpu_seconds);
#if defined(__linux__)
  s += "; no_new_privs=";
  s += prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? "on" : "(failed)";
  s += ";" + enter_landlock(o.objects, false);
#endif
  return s;
}

std::string filter_syscalls() {
#if defined(__linux__)
  return enter_seccomp();
#else
  return " no system-call filter on this OS";
#endif
}


// ---------------------------------------------------------------------------
// The compile sandbox: `runner -compile-sandbox [options] -- COMMAND ARGS`
// runs the compiler (or its preprocessor) under resource limits,
// no_new_privs and a Landlock domain that lets it read and execute the
// toolchain, read its include closure (every directory an -I, -iquote,
// -isystem or -idirafter names, every file an -include or -imacros names,
// every input file, and each -read PATH), write only the -write
// directories, and make no TCP connection. Options: -read PATH, -write DIR,
// -memory BYTES (RLIMIT_DATA), -cpu SECONDS (RLIMIT_CPU), -fsize BYTES
// (RLIMIT_FSIZE), -procs N (processes at once). It never returns: it runs
// COMMAND or exits 126.
//
// With -procs the launcher stays, as COMMAND's parent and the subreaper of
// everything it starts (so a process that leaves its parent or its
// process group is still counted), and counts COMMAND's descendants every
// few milliseconds; past N it stops them all, says so on stderr in one
// line starting "compile limit:" and exits kExitCompileProcs. When COMMAND
// ends, what it left running is stopped and the launcher exits as COMMAND
// did. RLIMIT_NPROC cannot do this: it counts every process of the user,
// and binds no process of root. The driver's own children (cc1plus, as,
// collect2, ld) are a handful at a time.

#if defined(__linux__)
namespace {

constexpr uint64_t kLLExecute = 1ull << 0, kLLWriteFile = 1ull << 1, kLLRemoveDir = 1ull << 4,
                   kLLRemoveFile = 1ull << 5, kLLMakeDir = 1ull << 7, kLLMakeReg = 1ull << 8,
                   kLLTruncate = 1ull << 14;

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace
#endif

#if defined(__linux__)
namespace {

// kExitCompileProcs is the launcher's exit status when it stopped a
// command for running too many processes.
constexpr int kExitCompileProcs = 125;

// children appends the child processes of every thread of pid.
void children(pid_t pid, std::vector<pid_t>* out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", int(pid));
  DIR* d = opendir(path);
  if (!d) return;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char file[128];
    snprintf(file, sizeof file, "/proc/%d/task/%s/children", int(pid), e->d_name);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[4096];
    std::string text;
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
    close(fd);
    const char* p = text.c_str();
    while (*p) {
      char* end = nullptr;
      long c = std::strtol(p, &end, 10);
      if (end == p) break;
      if (c > 0) out->push_back(pid_t(c));
      p = end;
    }
  }
  closedir(d);
}

// descendants lists every process below this one.
std::vector<pid_t> descendants() {
  std::vector<pid_t> all;
  children(getpid(), &all);
  for (size_t i = 0; i < all.size() && all.size() < 100000; i++) children(all[i], &all);
  return all;
}

// stop_all kills every descendant and reaps them, again until none is
// left (a process that forks as it is killed leaves a child to the next
// round: a killed process forks no more).
void stop_all() {
  for (int round = 0; round < 10000; round++) {
    std::vector<pid_t> ds = descendants();
    for (pid_t p : ds) kill(p, SIGKILL);
    int st;
    while (waitpid(-1, &st, WNOHANG) > 0) {
    }
    if (ds.empty() && waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD) return;
    if (ds.empty()) usleep(1000);
  }
}

// supervise forks: the child returns, to sandbox itself and run the
// command; the launcher counts the command's processes (see above) and
// never returns.
void supervise(uint64_t procs) {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    Line().str("compile sandbox: cannot become a subreaper: ").str(std::strerror(errno)).emit();
    _exit(126);
  }
  pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) {
    Line().str("compile sandbox: fork: ").str(std::strerror(errno)).emit();
    _exit(126);
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) _exit(126);
    return;
  }
  int status = 0;
  for (;;) {
    int st;
    bool done = false;
    for (pid_t w; (w = waitpid(-1, &st, WNOHANG)) > 0;) {
      if (w == child) status = st, done = true;
    }
    if (done) break;
    std::vector<pid_t> ds = descendants();
    if (ds.size() > procs) {
      // Stopped first, reported after: the report's write cannot give a
      // fork bomb time.
      stop_all();
      Line().str("compile limit: the compiler ran more than ").uint(procs).str(" processes at once (").uint(ds.size()).str(" seen); stopped").emit();
      _exit(kExitCompileProcs);
    }
    usleep(2000);
  }
  stop_all();
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    kill(getpid(), sig);
  }
  _exit(126);
}

}  // namespace
#endif

int exec_sandboxed(int argc, char** argv, int first) {
  std::vector<std::string> reads, writes;
  uint64_t memory = 0, cpu = 0, fsize = 0, procs = 0;
  int i = first;
  for (; i < argc; i++) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--") {
      i++;
      break;
    } else if (a == "-read") {
      reads.push_back(v), i++;
    } else if (a == "-write") {
      writes.push_back(v), i++;
    } else if (a == "-memory") {
      memory = std::strtoull(v, nullptr, 10), i++;
    } else if (a == "-cpu") {
      cpu = std::strtoull(v, nullptr, 10), i++;
    } else if (a == "-fsize") {
      fsize = std::strtoull(v, nullptr, 10), i++;
    } else if (a == "-procs") {
      procs = std::strtoull(v, nullptr, 10), i++;
    } else {
      Line().str("compile sandbox: unknown option ").str(a.c_str()).emit();
      _exit(126);
    }
  }
  if (i >= argc) {
    Line().str("compile sandbox: no command").emit();
    _exit(126);
  }
  char** cmd = argv + i;
#if defined(__linux__)
  if (procs > 0) supervise(procs);
#endif
  set_limit(RLIMIT_CORE, "core", 0);
  if (memory) set_limit(RLIMIT_DATA, "data", memory);
  if (cpu) set_limit(RLIMIT_CPU, "cpu", cpu);
  if (fsize) set_limit(RLIMIT_FSIZE, "fsize", fsize);
#if defined(__linux__)
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  // The include closure, from the command line.
  static const char* const path_opts[] = {"-I", "-iquote", "-isystem", "-idirafter", "-include", "-imacros"};
  for (int k = i + 1; k < argc; k++) {
    std::string a = argv[k];
    bool matched = false;
    for (const char* o : path_opts) {
      size_t n = std::strlen(o);
      std::string path;
      if (a == o && k + 1 < argc) {
        path = argv[++k];
      } else if (a.size() > n && a.compare(0, n, o) == 0) {
        path = a.substr(n);
      } else {
        continue;
      }
      // An included header is read from its directory, where the
      // compiler also looks for its precompiled form.
      if (o[1] == 'i' && o[2] != 'q' && o[2] != 's' && o[2] != 'd') {
        size_t cut = path.rfind('/');
        if (cut != std::string::npos && cut > 0) path.resize(cut);
      }
      reads.push_back(path);
      matched = true;
      break;
    }
    if (matched) continue;
    if (a == "-o" && k + 1 < argc) {
      k++;
      continue;
    }
    if (!a.empty() && a[0] != '-' && is_file(a)) reads.push_back(a);
  }
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kLLCreateVersion);
  if (abi >= 1) {
    uint64_t fs = (1ull << 13) - 1;
    if (abi >= 2) fs |= 1ull << 13;
    if (abi >= 3) fs |= 1ull << 14;
    if (abi >= 5) fs |= 1ull << 15;
    LLRuleset rs = {fs, 0, 0};
    size_t size = 8;
    if (abi >= 4) {
      rs.handled_net = 3;
      size = 16;
    }
    if (abi >= 6) {
      rs.scoped = 3;
      size = 24;
    }
    int fd = int(syscall(SYS_landlock_create_ruleset, &rs, size, 0));
    if (fd < 0) {
      Line().str("compile sandbox: landlock: ").str(std::strerror(errno)).emit();
      _exit(126);
    }
    auto allow = [&](const std::string& p, uint64_t rights) {
      if (p.empty()) return;
      bool dir = is_dir(p);
      int pfd = open(p.c_str(), O_PATH | O_CLOEXEC);
      if (pfd < 0) return;
      if (!dir) rights &= kLLExecute | kLLReadFile | kLLWriteFile | (abi >= 3 ? kLLTruncate : 0);
      LLPathBeneath pb = {rights & fs, pfd};
      syscall(SYS_landlock_add_rule, fd, kLLRulePathBeneath, &pb, 0);
      close(pfd);
    };
    const uint64_t rx = kLLExecute | kLLReadFile | kLLReadDir;
    // The toolchain: the system's programs and libraries, and the
    // installation the compiler runs from.
    static const char* const toolchain[] = {"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin",
                                            "/etc/ld.so.cache", "/etc/alternatives"};
    for (const char* t : toolchain) allow(t, rx);
    if (const char* slash = std::strrchr(cmd[0], '/')) {
      char real[4096];
      if (realpath(cmd[0], real)) {
        std::string r = real;
        // <prefix>/bin/<compiler>: the whole prefix.
        for (int up = 0; up < 2; up++) {
          size_t cut = r.rfind('/');
          if (cut == std::string::npos || cut == 0) break;
          r.resize(cut);
        }
        if (r.size() > 1) allow(r, rx);
      }
      (void)slash;
    }
    allow("/dev/null", kLLReadFile | kLLWriteFile);
    allow("/dev/urandom", kLLReadFile);
    for (const std::string& r : reads) allow(r, kLLReadFile | kLLReadDir);
    uint64_t rw = kLLReadFile | kLLReadDir | kLLWriteFile | kLLRemoveDir | kLLRemoveFile | kLLMakeDir | kLLMakeReg |
                  (abi >= 3 ? kLLTruncate : 0);
    for (const std::string& w : writes) allow(w, rw);
    if (syscall(SYS_landlock_restrict_self, fd, 0) != 0) {
      Line().str("compile sandbox: landlock: ").str(std::strerror(errno)).emit();
      _exit(126);
    }
    close(fd);
  }
#endif
  execvp(cmd[0], cmd);
  Line().str("compile sandbox: cannot run ").str(cmd[0]).str(": ").str(std::strerror(errno)).emit();
  _exit(126);
}

}  // namespace runner

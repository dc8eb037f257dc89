// report.cpp — reports that must survive a dying process: the fault
// handler and the one-line, one-write report it leaves on stderr.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "runner.h"

using namespace mtl_proto;

namespace runner {

Line& Line::str(const char* s) {
  while (*s && n < sizeof buf - 2) buf[n++] = *s++;
  return *this;
}

Line& Line::uint(uint64_t v) {
  char t[24];
  int i = 23;
  t[i] = 0;
  do {
    t[--i] = char('0' + v % 10);
    v /= 10;
  } while (v > 0);
  return str(t + i);
}

Line& Line::hex(uint64_t v) {
  char t[24];
  int i = 23;
  t[i] = 0;
  do {
    t[--i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v > 0);
  t[--i] = 'x';
  t[--i] = '0';
  return str(t + i);
}

void Line::emit() {
  buf[n++] = '\n';
  const char* p = buf;
  size_t left = n;
  while (left > 0) {
    ssize_t k = write(g_report_fd, p, left);
    if (k <= 0) return;
    p += k;
    left -= size_t(k);
  }
}

namespace {
std::atomic<int> g_dying{0};
}

bool claim_death() {
  if (g_dying.exchange(1) == 0) return true;
  // Another thread is reporting its fault and will end the process.
  for (;;) {
    struct timespec ts = {1, 0};
    nanosleep(&ts, nullptr);
  }
}

namespace {

// describe_region appends what the faulting address belongs to, if it is
// in the layout: a device buffer or a threadgroup array.
bool describe_region(Line& l, uintptr_t addr) {
  const Layout& L = g_layout;
  if (!L.reserved || addr - L.lo >= L.span) return false;
  uintptr_t data = 0, size = 0;
  if (addr < L.tg_lo) {
    int region = int((addr - L.dev_lo) >> L.dev_shift);
    int index = g_region_owner[region];
    if (index < 0) index = nearest_buffer(addr);
    l.str("bad access: ");
    if (index < 0) {
      l.str("address ").hex(addr).str(" is in no bound buffer");
      return true;
    }
    l.str("buffer ").uint(uint64_t(index));
    data = reinterpret_cast<uintptr_t>(g_dev[index].data);
    size = g_dev[index].size;
  } else {
    uintptr_t idx = (addr - L.tg_lo) >> L.tg_shift;
    int owner = int(idx / kMaxTGSlots), slot = int(idx % kMaxTGSlots);
    Worker* w = tls_worker;
    l.str("bad access: ");
    if (!w || owner != w->id || slot >= w->narrays) {
      l.str("address ").hex(addr).str(" is in no threadgroup array of the faulting threadgroup");
      return true;
    }
    const TGArray& a = w->arrays[slot];
    const char* name = nullptr;
    if (a.space == kSpaceThreadgroup && w->job) {
      for (const auto& s : w->job->kernel->slots)
        if (s.id == a.id && s.desc) name = s.desc->name;
    }
    if (name) {
      l.str("threadgroup array ").str(name);
    } else {
      l.str("threadgroup memory [[threadgroup(").uint(uint64_t(a.id)).str(")]]");
    }
    data = reinterpret_cast<uintptr_t>(a.data);
    size = a.size;
  }
  if (addr >= data) {
    l.str(", byte offset +").uint(addr - (data + size)).str(" past the end (size ");
  } else {
    l.str(", byte offset -").uint(data - addr).str(" before the start (size ");
  }
  l.uint(size).str(")");
  return true;
}

void on_fault(int sig, siginfo_t* si, void*) {
  claim_death();
  uintptr_t addr = reinterpret_cast<uintptr_t>(si->si_addr);
  Line l;
  if ((sig == SIGSEGV || sig == SIGBUS) && describe_region(l, addr)) {
    l.emit();
    _exit(kExitBadAccess);
  }
  const char* name = "signal";
  switch (sig) {
    case SIGSEGV: name = "SIGSEGV"; break;
    case SIGBUS: name = "SIGBUS"; break;
    case SIGFPE: name = "SIGFPE"; break;
    case SIGILL: name = "SIGILL"; break;
    case SIGABRT: name = "SIGABRT (abort)"; break;
    case SIGTRAP: name = "SIGTRAP"; break;
  }
  l.str("crash: ").str(name);
  if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) l.str(" at address ").hex(addr);
  Worker* w = tls_worker;
  if (w && w->cur) {
    FiberSlot* f = w->cur;
    uintptr_t slo = reinterpret_cast<uintptr_t>(f->stack_map);
    if ((sig == SIGSEGV || sig == SIGBUS) && addr >= slo && addr < slo + page_size()) l.str(" (stack overflow)");
    l.str(" in thread ").uint(uint64_t(f->index)).str(" of threadgroup (");
    l.uint(w->group_pos[0]).str(",").uint(w->group_pos[1]).str(",").uint(w->group_pos[2]).str(")");
  }
  l.emit();
  _exit(kExitCrash);
}

}  // namespace

void install_fault_handlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
  for (int s : sigs) sigaction(s, &sa, nullptr);
}

}  // namespace runner

// memory.cpp — the runner's address layout: one reservation holding a region
// per device buffer and a region per threadgroup array of each worker.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "runner.h"

namespace runner {

size_t page_size() {
  static size_t pg = size_t(sysconf(_SC_PAGESIZE));
  return pg;
}

Layout g_layout;
DevBuf g_dev[kMaxBuffers];
int g_region_owner[kMaxBuffers];

namespace {

constexpr int kDevRegions = 64;

void* reserve(size_t len) {
  void* m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return m == MAP_FAILED ? nullptr : m;
}

// release returns [p, p+len) to the reservation: inaccessible, no pages.
void release(void* p, size_t len) {
  if (len == 0) return;
  mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

unsigned char canary_byte(uintptr_t addr) {
  return static_cast<unsigned char>(0xA5 ^ (addr * 0x3B) ^ (addr >> 8));
}

void fill_canary(unsigned char* lo, unsigned char* hi) {
  for (unsigned char* p = lo; p < hi; p++) *p = canary_byte(reinterpret_cast<uintptr_t>(p));
}

unsigned char* first_damage(unsigned char* lo, unsigned char* hi) {
  for (unsigned char* p = lo; p < hi; p++) {
    if (*p != canary_byte(reinterpret_cast<uintptr_t>(p))) return p;
  }
  return nullptr;
}

}  // namespace

// reserve_layout tries regions of 2^38 bytes per device buffer and 2^33 per
// threadgroup array (a 32-bit index times a 16-byte element reaches 2^36),
// halving both until the reservation fits the address space.
bool reserve_layout(int workers) {
  for (int i = 0; i < kMaxBuffers; i++) g_region_owner[i] = -1;
  for (int dev = 38, tg = 33; tg >= 24; dev--, tg--) {
    size_t dev_len = size_t(kDevRegions) << dev;
    size_t tg_len = size_t(workers) * kMaxTGSlots << tg;
    void* m = reserve(dev_len + tg_len);
    if (!m) continue;
    g_layout.lo = reinterpret_cast<uintptr_t>(m);
    g_layout.span = dev_len + tg_len;
    g_layout.dev_lo = g_layout.lo;
    g_layout.dev_shift = dev;
    g_layout.dev_regions = kDevRegions;
    g_layout.tg_lo = g_layout.lo + dev_len;
    g_layout.tg_shift = tg;
    g_layout.tg_workers = workers;
    g_layout.reserved = true;
    return true;
  }
  return false;
}

std::string layout_text() {
  if (!g_layout.reserved) return "no address reservation";
  return std::to_string(g_layout.dev_regions) + " device regions of 2^" + std::to_string(g_layout.dev_shift) +
         " bytes, threadgroup regions of 2^" + std::to_string(g_layout.tg_shift) + " bytes";
}

unsigned char* region_base_dev(int region) {
  return reinterpret_cast<unsigned char*>(g_layout.dev_lo + (uintptr_t(region) << g_layout.dev_shift));
}

unsigned char* region_base_tg(int worker, int slot) {
  uintptr_t idx = uintptr_t(worker) * kMaxTGSlots + uintptr_t(slot);
  return reinterpret_cast<unsigned char*>(g_layout.tg_lo + (idx << g_layout.tg_shift));
}

// bind_device maps buffer index with size bytes in a free region: its data
// ends 16-byte aligned in the middle of the region, the slack before it in
// its pages is a canary, and its trailing slack (less than 16 bytes) too.
bool bind_device(int index, size_t size, const void* data) {
  free_device(index);
  int region = -1;
  for (int r = 0; r < g_layout.dev_regions; r++) {
    if (g_region_owner[r] < 0) {
      region = r;
      break;
    }
  }
  if (region < 0) return false;
  size_t pg = page_size();
  size_t padded = round_up(std::max<size_t>(size, 1), 16);
  size_t pages = round_up(padded, pg);
  unsigned char* mid = region_base_dev(region) + (size_t(1) << (g_layout.dev_shift - 1));
  if (pages > (size_t(1) << (g_layout.dev_shift - 2))) return false;
  if (mprotect(mid, pages, PROT_READ | PROT_WRITE) != 0) return false;
  DevBuf& b = g_dev[index];
  b.bound = true;
  b.region = region;
  b.map = mid;
  b.map_len = pages;
  b.data = mid + pages - padded;
  b.size = size;
  b.writable = true;
  fill_canary(b.map, b.data);
  fill_canary(b.data + size, b.map + pages);
  if (data) std::memcpy(b.data, data, size);
  g_region_owner[region] = index;
  return true;
}

int nearest_buffer(uintptr_t addr) {
  int best = -1;
  uintptr_t best_d = ~uintptr_t(0);
  for (int i = 0; i < kMaxBuffers; i++) {
    if (!g_dev[i].bound) continue;
    uintptr_t lo = reinterpret_cast<uintptr_t>(g_dev[i].data), hi = lo + g_dev[i].size;
    uintptr_t d = addr < lo ? lo - addr : addr >= hi ? addr - hi : 0;
    if (d < best_d) best = i, best_d = d;
  }
  return best;
}

void free_device(int index) {
  DevBuf& b = g_dev[index];
  if (!b.bound) return;
  release(b.map, b.map_len);
  if (b.shadow) munmap(b.shadow, b.shadow_len);
  g_region_owner[b.region] = -1;
  b = DevBuf();
}

// check_canaries reports the first buffer whose slack was written. A stored
// byte that happens to equal the canary goes unseen, so the damage is
// reported by 4-byte word (offsets from the buffer's ends).
bool check_canaries(std::string* msg) {
  for (int i = 0; i < kMaxBuffers; i++) {
    DevBuf& g = g_dev[i];
    if (!g.bound) continue;
    unsigned char* end = g.data + g.size;
    if (unsigned char* p = first_damage(end, g.map + g.map_len)) {
      *msg = "bad access: buffer " + std::to_string(i) + ", byte offset +" + std::to_string((p - end) / 4 * 4) +
             " past the end (size " + std::to_string(g.size) + "; canary overwritten)";
      return false;
    }
    if (unsigned char* p = first_damage(g.map, g.data)) {
      *msg = "bad access: buffer " + std::to_string(i) + ", byte offset -" + std::to_string((g.data - p + 3) / 4 * 4) +
             " before the start (size " + std::to_string(g.size) + "; canary overwritten)";
      return false;
    }
  }
  return true;
}

}  // namespace runner

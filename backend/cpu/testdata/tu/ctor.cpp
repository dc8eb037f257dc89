// ctor.cpp — a kernel object whose load-time constructor tries to run a
// shell: it runs inside the sandbox, at dlopen, and is stopped there.
#include <cstdint>
#include <cstdlib>

#include "mtl_rt.h"

using namespace mtl_rt;

namespace {

__attribute__((constructor)) void at_load() {
  if (system("touch /tmp/metalab-sandbox-ctor") == 0) {
  }
}

void noop_run(void* const* b, void* const*) { static_cast<uint32_t*>(b[0])[0] = 1; }

const KernelInfo kernels[] = {{"noop", noop_run, 0, nullptr, 1024}};

}  // namespace

extern "C" const KernelInfo* mtl_kernels(int* count) {
  *count = 1;
  return kernels;
}

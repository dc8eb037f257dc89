// stub_rt.h — a test implementation of mtl_rt.h: run_threads starts n OS
// threads as the threads of one threadgroup (lanes of simd groups of 32), so
// simd-group collectives and barriers behave as on the runner.
#pragma once
#include <functional>

namespace mtl_test {
// run_threads runs body on n threads (n <= 1024) and waits for them.
void run_threads(int n, const std::function<void()>& body);
}  // namespace mtl_test

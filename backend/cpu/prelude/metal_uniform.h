// metal_uniform.h — <metal_uniform>: uniform<T> and make_uniform.
//
// In Metal, uniform<T> promises the compiler that a value is the same for
// every thread, so it may keep it in scalar registers. The emulator runs
// each thread's code separately and has nothing to gain from the promise,
// so uniform<T> is T itself: every operator, conversion, member and
// function that takes a T takes a uniform<T>. The promise is not checked.
// (One consequence: two overloads that differ only in uniform<T> against T
// are one function here and do not compile.)
#pragma once

namespace metal {

template <class T>
using uniform = T;

// make_uniform returns x as a uniform value.
template <class T>
constexpr uniform<T> make_uniform(T x) {
  return x;
}

}  // namespace metal

// DefaultInitAllocator: a std::allocator whose value-less construct() default-initialises, so
// that vector<T>::resize(n) of a trivially constructible T does not write (zero) the memory.
// Used for Capture::ops, which is filled by a scatter right after resize(): pages then become
// resident only as rows land in them. Thread-safety: stateless.
#pragma once

#include <memory>
#include <new>
#include <utility>

namespace tfdiag {

template <typename T, typename A = std::allocator<T>>
class DefaultInitAllocator : public A {
  using Traits = std::allocator_traits<A>;

 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U, typename Traits::template rebind_alloc<U>>;
  };
  using A::A;

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    Traits::construct(static_cast<A&>(*this), p, std::forward<Args>(args)...);
  }
};

}  // namespace tfdiag

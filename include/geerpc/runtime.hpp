// geerpc: the runtime, what clients and servers share beside their connections (asio's io_context
// is the model): the thread that fires deadlines (scheduler/deadline_scheduler.hpp), the clock it
// measures them by, the CPU budget the tuning heuristics plan for, the count of callers waiting for
// a reply (a lone one may spin: tuning/spin.hpp) and the free list of writer blocks
// (net/output_chunk.hpp). Its thread starts with the first user that needs deadlines fired (a
// threaded client, a server): a program of blocking clients has none.
//
//   auto rt = std::make_shared<geerpc::runtime>();            // or {{.cpus = 1}}
//   geerpc::server server({.runtime = rt});
//   auto client = geerpc::dial(address, {.runtime = rt});
//
// A client or server given none uses the default runtime, made on first use and shared by all of
// them; it is destroyed, its thread joined, when the last of them is gone, and made again by the
// next. Ownership is shared: whatever uses a runtime holds it, so a runtime lives as long as
// the last client or server made with it, whoever else lets go first.
//
// A runtime made with `manual_clock` measures deadlines by a clock that moves only in advance(),
// for tests: a deadline fires when the clock is moved past it, never before.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>

#include "config.hpp"
#include "detail/assert.hpp"
#include "detail/chrono.hpp"
#include "net/output_chunk.hpp"
#include "scheduler/deadline_scheduler.hpp"
#include "scheduler/manual_clock.hpp"
#include "tuning/cpu_budget.hpp"

GEERPC_BEGIN_NAMESPACE

struct runtime_options {
  // The CPUs this process may use, as the tuning heuristics of every client and server of this
  // runtime see them, and the budget a server's io_threads = 0 is drawn from; 0: detect them once,
  // when the runtime is made, from the CPU affinity and the cgroup CPU quota (tuning/cpu_budget.hpp).
  unsigned cpus = 0;
  // Deadlines by a clock that moves only in advance(), starting at steady_clock::now(): for tests.
  bool manual_clock = false;
};

class runtime {
 public:
  using clock = std::chrono::steady_clock;

  explicit runtime(runtime_options opts = {}) : cpus_(opts.cpus != 0 ? opts.cpus : detail::process_cpus()) {
    if (opts.manual_clock) manual_.emplace();
  }
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // The runtime of every client and server given none: made on first use, destroyed with its
  // last user. The same one for all of them while any lives.
  static std::shared_ptr<runtime> default_runtime() {
    default_slot& slot = defaults();
    std::lock_guard lock(slot.mutex);
    std::shared_ptr<runtime> made = slot.current.lock();
    if (!made) {
      made = std::make_shared<runtime>();
      slot.current = made;
      slot.made.fetch_add(1, std::memory_order_relaxed);
    }
    return made;
  }
  // How many times the default runtime has been made in this process (for tests: a program that
  // passes its own runtime everywhere never makes one).
  static std::size_t default_runtimes_made() noexcept { return defaults().made.load(std::memory_order_relaxed); }
  // Whether the default runtime exists now (for tests; it may be made or let go right after).
  static bool default_runtime_alive() {
    default_slot& slot = defaults();
    std::lock_guard lock(slot.mutex);
    return !slot.current.expired();
  }

  // The time deadlines are measured against: steady_clock's, or the manual clock's.
  clock::time_point now() const noexcept { return manual_ ? manual_->now() : clock::now(); }
  bool has_manual_clock() const noexcept { return manual_.has_value(); }
  // Moves the manual clock forward by `by` and returns once every deadline it passed has fired.
  // Only on a runtime made with manual_clock; not from a deadline's callback; and by a caller
  // that holds the runtime (a shared_ptr of its own), so that the runtime cannot go meanwhile.
  void advance(clock::duration by) {
    GEERPC_ASSERT(manual_.has_value(), "runtime: advance() needs a runtime made with manual_clock");
    manual_->advance(by);
    scheduler().catch_up();
  }

  // The CPUs the tuning heuristics plan for (runtime_options::cpus).
  unsigned cpus() const noexcept { return cpus_; }

  // Its deadline scheduler, whose thread starts on the first call (an engine's, when it is made:
  // never on a call's path).
  detail::deadline_scheduler& scheduler() {
    std::call_once(scheduler_once_, [&] {
      scheduler_.emplace(manual_ ? &*manual_ : nullptr);
      started_.store(true, std::memory_order_release);
    });
    return *scheduler_;
  }
  // Whether scheduler() has started its thread (for tests).
  bool scheduler_started() const noexcept { return started_.load(std::memory_order_acquire); }

  // For the engines: the callers of this runtime waiting for a reply (tuning/spin.hpp's
  // reply_wait), and the free list their writers' blocks come from. Both outlive every user.
  std::atomic<int>& waiting_callers() noexcept { return waiting_callers_; }
  net::chunk_pool& chunk_pool() noexcept { return chunk_pool_; }

 private:
  struct default_slot {
    std::mutex mutex;
    std::weak_ptr<runtime> current;
    std::atomic<std::size_t> made{0};
  };
  static default_slot& defaults() noexcept {
    static default_slot slot;
    return slot;
  }

  const unsigned cpus_;
  std::optional<detail::manual_clock> manual_;
  std::atomic<int> waiting_callers_{0};
  net::chunk_pool chunk_pool_;
  std::once_flag scheduler_once_;
  std::atomic<bool> started_{false};  // scheduler_ is made
  // Last: its thread stops first. Destroyed on its own thread (a deadline's callback let go of the
  // last user), it lets that thread go without joining it (deadline_scheduler's destructor).
  std::optional<detail::deadline_scheduler> scheduler_;
};

GEERPC_END_NAMESPACE

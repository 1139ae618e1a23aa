// geerpc: the servers a balanced client (balanced_client.hpp) calls: the discovery's list as
// entries, the choice of one by select_mode, each server's connection (dialled when a call first
// needs it) with the calls made on it counted, and the back-off of a server that failed.
//
// Connections: one per server, dialled outside any lock the other servers' calls need (a server
// that does not answer holds up only the calls that chose it, for its connect timeout or their
// deadline, whichever comes first). A server that leaves the list has its connection closed once
// the calls made on it have ended (looked at on the next call).
//
// Failures: a failed dial or a broken connection leaves the server out for a back-off (growing,
// capped; balanced_options). When every server is left out, the one whose back-off ends first is
// tried anyway.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../context.hpp"
#include "../detail/chrono.hpp"
#include "../detail/deadline.hpp"
#include "../detail/random_index.hpp"
#include "../discovery.hpp"
#include "../error.hpp"
#include "../options.hpp"
#include "basic_client.hpp"
#include "hedging.hpp"
#include "retry_budget.hpp"

GEERPC_BEGIN_NAMESPACE

enum class select_mode : std::uint8_t {
  random,          // any server, uniformly
  round_robin,     // each server in turn
  least_inflight,  // of two servers picked at random, the one with fewer calls in flight
};

struct balanced_options {
  select_mode mode = select_mode::round_robin;
  // For every connection; its connect_timeout bounds each dial (and so does a call's deadline).
  options client{};
  // A server whose dial fails or whose connection breaks is left out for `backoff`, doubled at each
  // failure in a row up to `max_backoff`; a call that succeeds on it starts it over.
  std::chrono::nanoseconds backoff = std::chrono::milliseconds(100);
  std::chrono::nanoseconds max_backoff = std::chrono::seconds(10);
  // Methods ("Service.Method") that may safely run twice: a call of one whose connection broke
  // after it was sent moves to another server, and with `hedging` on, a slow call of one gets a
  // second attempt on another server.
  std::vector<std::string> idempotent{};
  // What every retry to another server and every hedge spends (client/retry_budget.hpp).
  retry_budget_options retry_budget{};
  // Hedged calls of idempotent methods (client/hedging.hpp): off by default.
  hedging_options hedging{};
};

namespace detail {

// Every member is safe to call from several threads at once.
template <class Transport, class Codec>
class server_set {
 public:
  using client_type = basic_client<Transport, Codec>;
  using clock = std::chrono::steady_clock;
  struct entry;

  // One connection to a server, and the calls made on it that have not ended (sync calls until
  // they return, async ones until they complete): raised only under mutex_ and only while the
  // connection is its server's current one, so that a retired connection whose count a reaper
  // (under mutex_) sees at 0 stays at 0, and may be closed. The count is the calls' hold on the
  // connection and, for least_inflight, its load. It has a life of its own: an async call's
  // completion may run on a timer's thread after the connection is gone (the balanced client
  // destroyed meanwhile), and lowers it then.
  struct link_state {
    link_state(client_type c, std::shared_ptr<entry> s) : server(std::move(s)), client(std::move(c)) {}
    std::shared_ptr<std::atomic<std::size_t>> calls = std::make_shared<std::atomic<std::size_t>>(0);
    // Its server, kept while the connection is: a caller holding the connection reaches its server
    // through it. (While it is the server's current connection the two hold each other; retiring
    // it, or the balanced client's destructor, breaks that.)
    std::shared_ptr<entry> server;
    client_type client;
  };
  using link_ptr = std::shared_ptr<link_state>;

  // A synchronous call's count on a connection, lowered when dropped (the call has returned).
  struct call_hold {
    explicit call_hold(link_state* l) noexcept : link(l) {}
    call_hold(const call_hold&) = delete;
    call_hold& operator=(const call_hold&) = delete;
    ~call_hold() {
      if (link != nullptr) link->calls->fetch_sub(1, std::memory_order_release);
    }
    link_state* link;
  };
  // An asynchronous call's count, lowered once: by its completion, or when dropped unrun (the call
  // could not start).
  struct async_hold {
    explicit async_hold(std::shared_ptr<std::atomic<std::size_t>> c) noexcept : count(std::move(c)) {}
    async_hold(const async_hold&) = delete;
    async_hold& operator=(const async_hold&) = delete;
    ~async_hold() { release(); }
    void release() noexcept {
      if (count) std::exchange(count, nullptr)->fetch_sub(1, std::memory_order_release);
    }
    std::shared_ptr<std::atomic<std::size_t>> count;
  };

  struct entry {
    explicit entry(std::string a) : address(std::move(a)) {}
    const std::string address;
    // Under mutex_:
    bool dialing = false;  // one dial at a time for this server; others wait on dialled_
    link_ptr current;      // its connection, if it has one
    bool listed = true;    // false once a new list dropped it: it is dialled no more
    clock::time_point left_out_until{};
    std::chrono::nanoseconds backoff{0};  // 0: not failing
    std::uint64_t failures = 0;           // dials that failed, so that a caller that waited for one learns it
    std::optional<error> last_failure;
    // Whether backoff is running, written under mutex_ but read without it by succeeded(): a
    // success that reads a stale false leaves a back-off that a concurrent failure has just begun.
    std::atomic<bool> failing{false};
  };
  using tried_list = std::vector<std::shared_ptr<entry>>;

  explicit server_set(std::shared_ptr<discovery> source, balanced_options opts)
      : source_(std::move(source)), opts_(std::move(opts)) {
    if (!source_) throw std::invalid_argument("geerpc::balanced_client: no discovery");
  }
  // Closes every connection; calls on them still pending complete with connection_closed.
  ~server_set() {
    std::vector<link_ptr> current;  // a server's current connection and the server hold each other
    {
      std::lock_guard lock(mutex_);
      for (const auto& e : entries_)
        if (e->current) current.push_back(std::move(e->current));
    }
  }  // closed here, then retiring_'s
  server_set(const server_set&) = delete;
  server_set& operator=(const server_set&) = delete;

  // The servers of the discovery's list last looked at, and whether each has a connection open.
  std::size_t connection_count() const {
    std::lock_guard lock(mutex_);
    std::size_t open = 0;
    for (const auto& e : entries_)
      if (e->current && e->current->client.is_open()) ++open;
    return open;
  }

  static error no_servers_error(const std::string& what) {
    return {make_error_code(errc::no_servers), "rpc client: " + what + ": the discovery lists no servers"};
  }
  static error deadline_error(const std::string& address) {
    return {make_error_code(errc::deadline_exceeded), "rpc client: call to " + address + ": deadline exceeded"};
  }

  // A server to call and its open connection, with this call counted on it: chosen among those not
  // tried and not left out, dialled if need be; a failed dial (which left that server out) moves on.
  result<link_state*> pick_connected(const context& ctx, tried_list& tried, std::optional<error>& last) {
    for (;;) {
      auto chosen = choose(ctx, tried, last);
      if (!chosen) return chosen.error();
      if (chosen.value().held != nullptr) return chosen.value().held;
      std::shared_ptr<entry> e = std::move(chosen.value().to_dial);
      auto connected = connect(e, ctx);
      if (connected) return connected.value();
      if (connected.code() == errc::deadline_exceeded) return connected.error();
      tried.push_back(std::move(e));
      last = connected.error();
    }
  }

  // A server not tried and not left out whose connection is open, with this call counted on it;
  // none if there is no such server. It never dials: a hedge taken from here leaves its caller free
  // to see the first attempt's answer (a dial to a mute server would hold it for the connect
  // timeout). The list is the one the call's first choice refreshed.
  link_state* pick_open(const tried_list& tried) {
    std::lock_guard lock(mutex_);
    const auto now = clock::now();
    const auto candidate = [&](const entry& e) {
      return e.left_out_until <= now && e.current && e.current->client.is_open() &&
             std::none_of(tried.begin(), tried.end(), [&](const auto& t) { return t.get() == &e; });
    };
    const auto open = static_cast<std::size_t>(
        std::count_if(entries_.begin(), entries_.end(), [&](const auto& e) { return candidate(*e); }));
    if (open == 0) return nullptr;
    entry* pick = select(open, [&](std::size_t k) {
      for (const auto& e : entries_)
        if (candidate(*e) && k-- == 0) return e.get();
      return entries_.front().get();  // not reached: k < open
    });
    pick->current->calls->fetch_add(1, std::memory_order_relaxed);
    return pick->current.get();
  }

  // Whether the list last looked at has a server not in `tried`, left out or not (choose() takes
  // one left out when every server is): whether a call that has tried those could move on at all.
  bool lists_untried(const tried_list& tried) const {
    std::lock_guard lock(mutex_);
    return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) {
      return std::none_of(tried.begin(), tried.end(), [&](const auto& t) { return t.get() == e.get(); });
    });
  }

  // The discovery's list as entries, rebuilt when its snapshot changed.
  result<std::vector<std::shared_ptr<entry>>> current_entries(const context& ctx) {
    const std::uint64_t listed_version = source_->version();
    auto listed = source_->servers_for(ctx);  // the user's code: outside the lock
    if (!listed) return listed.error();
    std::vector<link_ptr> reaped;  // destroyed after the lock is released
    std::lock_guard lock(mutex_);
    refresh(listed.value(), listed_version);
    reap(reaped);
    return entries_;
  }

  // The server's open connection with this call counted on it, dialled if it has none, within the
  // connect timeout and the caller's deadline. A failed dial leaves the server out (before the
  // next caller waiting to dial it gets the lock: that one returns the same failure instead of
  // dialling again).
  result<link_state*> connect(const std::shared_ptr<entry>& server, const context& ctx) {
    entry& e = *server;
    const auto& deadline = ctx.deadline();
    std::unique_lock lock(mutex_);
    const std::uint64_t failures_before = e.failures;
    for (;;) {
      if (!e.listed) return no_servers_error("call to " + e.address + ": the server left the list");
      if (e.current && e.current->client.is_open()) {
        e.current->calls->fetch_add(1, std::memory_order_relaxed);
        return e.current.get();
      }
      if (e.failures != failures_before && e.last_failure) return *e.last_failure;  // dialled and failed meanwhile
      if (!e.dialing) break;
      if (!deadline)
        dialled_.wait(lock);
      else if (dialled_.wait_until(lock, *deadline) == std::cv_status::timeout && e.dialing)
        return deadline_error(e.address);
    }
    e.dialing = true;
    lock.unlock();
    struct dial_done {  // whatever way the dial ends, the next caller may dial
      server_set& self;
      entry& e;
      bool pending = true;
      void locked() noexcept {  // under mutex_
        pending = false;
        e.dialing = false;
        self.dialled_.notify_all();
      }
      ~dial_done() {
        if (!pending) return;
        std::lock_guard relock(self.mutex_);
        locked();
      }
    } done{*this, e};
    options dial_options = opts_.client;
    bool cut_by_deadline = false;
    if (deadline) {
      const auto left = *deadline - clock::now();
      if (left <= clock::duration::zero()) return deadline_error(e.address);
      if (dial_options.timeouts.connect == std::chrono::nanoseconds::zero() || left < dial_options.timeouts.connect) {
        dial_options.timeouts.connect = std::chrono::duration_cast<std::chrono::nanoseconds>(left);
        cut_by_deadline = true;
      }
    }
    auto dialled = try_dial<Transport, Codec>(e.address, dial_options);
    if (!dialled) {
      if (cut_by_deadline && dialled.code() == errc::connect_timeout) return deadline_error(e.address);
      eject(e, dialled.error());
      return dialled.error();
    }
    auto made = std::make_shared<link_state>(std::move(dialled).value(), server);
    made->calls->fetch_add(1, std::memory_order_relaxed);  // before anyone else can see it
    link_state* held = made.get();
    lock.lock();
    done.locked();
    if (!e.listed) {  // dropped from the list while it was dialled: it ends with its call
      retiring_.push_back(std::move(made));
      return held;
    }
    if (e.current) retiring_.push_back(std::move(e.current));  // closed or going away: it ends with its calls
    e.current = std::move(made);
    return held;
  }

  // A failure on `e`: left out for its back-off, which grows; its connection, if broken, retires.
  void eject(entry& e, const error& why) {
    std::lock_guard lock(mutex_);
    e.backoff =
        e.backoff == std::chrono::nanoseconds::zero() ? opts_.backoff : std::min(e.backoff * 2, opts_.max_backoff);
    e.left_out_until = detail::saturating_deadline(clock::now(), e.backoff);
    e.failing.store(true, std::memory_order_relaxed);
    ++e.failures;
    e.last_failure = why;
    if (e.current && !e.current->client.is_open()) retiring_.push_back(std::move(e.current));
  }
  void succeeded(entry& e) {
    // Most calls succeed on a server that was not failing: they take no lock here.
    if (!e.failing.load(std::memory_order_relaxed)) return;
    std::lock_guard lock(mutex_);
    e.backoff = std::chrono::nanoseconds::zero();
    e.left_out_until = {};
    e.failing.store(false, std::memory_order_relaxed);
  }

 private:
  // The server chosen: its connection with this call counted on it when it has one open (taken
  // under the same lock, so that the common call locks mutex_ once), else the server to dial.
  struct choice {
    link_state* held = nullptr;
    std::shared_ptr<entry> to_dial;
  };

  result<choice> choose(const context& ctx, const tried_list& tried, const std::optional<error>& last) {
    // While the discovery's version stays what the entries were built from, its list is not asked
    // for (nor copied).
    const std::uint64_t listed_version = source_->version();
    std::vector<link_ptr> reaped;  // destroyed after the lock is released
    std::unique_lock lock(mutex_);
    if (listed_version == 0 || listed_version != seen_version_) {
      lock.unlock();
      auto listed = source_->servers_for(ctx);  // the user's code: outside the lock
      if (!listed) return listed.error();
      lock.lock();
      refresh(listed.value(), listed_version);
    }
    reap(reaped);
    if (entries_.empty()) return no_servers_error("call");
    entry* pick = nullptr;
    const auto is_tried = [&](const entry& e) {
      return std::any_of(tried.begin(), tried.end(), [&](const auto& t) { return t.get() == &e; });
    };
    if (tried.empty() && std::none_of(entries_.begin(), entries_.end(),
                                      [](const auto& e) { return e->failing.load(std::memory_order_relaxed); })) {
      // The common case: every server is a candidate.
      pick = select(entries_.size(), [&](std::size_t k) { return entries_[k].get(); });
    } else {
      // The candidates are the servers not tried and not left out; counted first, then the k-th
      // taken, so that no list of them is allocated per call.
      const auto now = clock::now();
      const auto candidate = [&](const entry& e) { return e.left_out_until <= now && !is_tried(e); };
      std::size_t open = 0;
      entry* soonest = nullptr;  // of those left out and not tried
      for (const auto& e : entries_) {
        if (candidate(*e))
          ++open;
        else if (!is_tried(*e) && (soonest == nullptr || e->left_out_until < soonest->left_out_until))
          soonest = e.get();
      }
      if (open == 0) {
        pick = soonest;  // every server is left out: try the one back soonest
      } else {
        pick = select(open, [&](std::size_t k) {
          for (const auto& e : entries_)
            if (candidate(*e) && k-- == 0) return e.get();
          return entries_.front().get();  // not reached: k < open
        });
      }
    }
    if (pick == nullptr) {
      if (last) return *last;
      return no_servers_error("call");
    }
    if (pick->current && pick->current->client.is_open()) {
      pick->current->calls->fetch_add(1, std::memory_order_relaxed);
      return choice{pick->current.get(), nullptr};
    }
    const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.get() == pick; });
    return choice{nullptr, *it};
  }

  // Under mutex_: one of `count` candidates, `nth(k)` being the k-th, by the select mode.
  template <class Nth>
  entry* select(std::size_t count, Nth&& nth) {
    if (opts_.mode == select_mode::round_robin) return nth(next_++ % count);
    const std::size_t first = random_.below(count);
    entry* pick = nth(first);
    if (opts_.mode == select_mode::least_inflight && count > 1) {
      std::size_t second = random_.below(count - 1);
      if (second >= first) ++second;  // another one than the first
      entry* other = nth(second);
      if (load(*other) < load(*pick)) pick = other;
    }
    return pick;
  }

  static std::size_t load(const entry& e) { return e.current ? e.current->calls->load(std::memory_order_relaxed) : 0; }

  // Under mutex_: takes a new snapshot's addresses, keeping the entries of those still listed.
  // The connections of servers no longer listed wait in retiring_ until their calls have ended.
  // `listed_version` is the discovery's, read before the snapshot was: a snapshot read under an older
  // version than the entries' (a caller that read the list before another caller's newer one was
  // taken), or under none once there was one (etcd's before its first list), is not taken. Two
  // snapshots read under the same version may still be taken out of order; the version raised
  // right after the newer one has the next call take it again.
  void refresh(const server_list& listed, std::uint64_t listed_version) {
    if (listed_version < seen_version_) return;  // (0 after a number, too)
    seen_version_ = listed_version;
    if (listed == seen_) return;
    std::vector<std::shared_ptr<entry>> next;
    const std::vector<std::string> empty;
    const std::vector<std::string>& addresses = listed ? *listed : empty;
    next.reserve(addresses.size());
    for (const std::string& address : addresses) {
      if (std::any_of(next.begin(), next.end(), [&](const auto& e) { return e->address == address; }))
        continue;  // listed twice: one entry
      auto kept =
          std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e && e->address == address; });
      if (kept != entries_.end())
        next.push_back(std::move(*kept));
      else
        next.push_back(std::make_shared<entry>(address));
    }
    for (auto& e : entries_) {
      if (!e) continue;  // kept, moved into next
      e->listed = false;
      if (e->current) retiring_.push_back(std::move(e->current));
    }
    entries_ = std::move(next);
    seen_ = listed;
  }

  // Under mutex_: hands out the retired connections whose calls have all ended, to be destroyed
  // (closed) once the lock is released. Not from a thread on which one of this client's
  // connections completes calls: a connection cannot end itself, and ending another there could
  // wait on a thread that waits on this one.
  void reap(std::vector<link_ptr>& out) {
    if (retiring_.empty()) return;
    const auto on_ours = [](const link_ptr& c) { return c && c->client.on_receiving_thread(); };
    if (std::any_of(retiring_.begin(), retiring_.end(), on_ours) ||
        std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return on_ours(e->current); }))
      return;
    for (auto it = retiring_.begin(); it != retiring_.end();) {
      if ((*it)->calls->load(std::memory_order_acquire) == 0) {
        out.push_back(std::move(*it));
        it = retiring_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::shared_ptr<discovery> source_;
  const balanced_options opts_;
  mutable std::mutex mutex_;         // guards everything below, and each entry's fields but its address
  std::condition_variable dialled_;  // a dial ended
  server_list seen_;                 // the snapshot entries_ was built from
  std::uint64_t seen_version_ = 0;   // and the discovery's version then (0: none, or it keeps none)
  std::vector<std::shared_ptr<entry>> entries_;
  std::vector<link_ptr> retiring_;  // of servers no longer listed, or replaced by a new dial
  std::size_t next_ = 0;            // round_robin's turn
  detail::random_index random_;
};

}  // namespace detail
GEERPC_END_NAMESPACE

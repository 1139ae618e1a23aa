// geerpc: what one server is set up with before it serves (its handlers, options, codec,
// interceptors, statistics and runtime), read-only while it serves.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "../codecs.hpp"
#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../interceptor.hpp"
#include "../options.hpp"
#include "../runtime.hpp"
#include "frame_translator.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class dispatcher;  // server/dispatcher.hpp

// The frozen configuration of a server: basic_server sets it (constructor, add(), use(),
// listen()) while not serving; server_link::listen() binds the runtime and marks it serving;
// basic_server marks it stopped once its engine has stopped. Every setter asserts it is not
// serving, so a connection reads it without a lock.
class server_config {
 public:
  // ---- Set before serving.
  void set_options(server_options options) {
    assert_not_serving();
    options_ = std::move(options);
  }
  void set_handlers(const dispatcher* handlers, const codec_ids& codecs) noexcept {
    assert_not_serving();
    handlers_ = handlers;
    codecs_ = codecs;
  }
  // The translator of a stream protocol one of its codecs brings (frame_translator.hpp), if any.
  void set_translation(frame_translation translation) noexcept {
    assert_not_serving();
    translation_ = translation;
  }
  void add_interceptor(server_interceptor interceptor) {
    assert_not_serving();
    interceptors_.push_back(std::move(interceptor));
  }
  // Statistics for `methods` methods when options().observability.statistics is on: kept while
  // the methods stay the same (a server that listens again keeps its figures).
  void keep_statistics(std::size_t methods) {
    assert_not_serving();
    if (options_.observability.statistics && (!stats_ || stats_->method_count() != methods))
      stats_ = std::make_unique<server_statistics>(methods, options_.observability.slow_call);
  }
  // The runtime it serves on: options().runtime, or the default one, kept when it listens again.
  void bind_runtime() {
    assert_not_serving();
    if (!runtime_) runtime_ = options_.runtime ? options_.runtime : runtime::default_runtime();
    scheduler_ = &runtime_->scheduler();
  }
  // Two stop() calls at once may both mark it stopped: an atomic, though only asserts read it.
  void set_serving(bool serving) noexcept { serving_.store(serving, std::memory_order_relaxed); }

  // ---- Read by the engine and the connections.
  const server_options& options() const noexcept { return options_; }
  const dispatcher* handlers() const noexcept { return handlers_; }
  const codec_ids& codecs() const noexcept { return codecs_; }
  const frame_translation& translation() const noexcept { return translation_; }
  const std::vector<server_interceptor>& interceptors() const noexcept { return interceptors_; }
  // Null when statistics are off; its counters are the observer's to write.
  server_statistics* stats() const noexcept { return stats_.get(); }
  // Null until bind_runtime().
  geerpc::runtime* runtime() const noexcept { return runtime_.get(); }
  deadline_scheduler* scheduler() const noexcept { return scheduler_; }
  bool serving() const noexcept { return serving_.load(std::memory_order_relaxed); }

 private:
  void assert_not_serving() const noexcept {
    GEERPC_ASSERT(!serving(), "server: its configuration is set before it serves, not while");
  }

  const dispatcher* handlers_ = nullptr;
  server_options options_;
  codec_ids codecs_;
  frame_translation translation_;                 // make is null: no translated streams
  std::vector<server_interceptor> interceptors_;  // empty: calls skip them
  std::unique_ptr<server_statistics> stats_;
  std::shared_ptr<geerpc::runtime> runtime_;  // held while the server lives
  deadline_scheduler* scheduler_ = nullptr;   // runtime_'s
  std::atomic<bool> serving_{false};
};

}  // namespace detail
GEERPC_END_NAMESPACE

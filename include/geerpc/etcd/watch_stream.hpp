// geerpc: etcd's watch answer as it streams in: one JSON object per line, each a batch of events
// (a key put or deleted), or the news that the watch ended. Complete lines are read as they arrive
// and their events handed on; what a line says about the watch ending becomes failure(). Apart
// from libcurl, which feeds it (gateway.hpp), so that it can be tested and fuzzed alone.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "answers.hpp"

GEERPC_BEGIN_NAMESPACE
namespace etcd {

// What a watch reports: a key put (value set) or deleted (value empty, deleted true).
struct watch_event {
  std::string key;
  std::string value;
  bool deleted = false;
};

namespace detail {

class watch_stream {
 public:
  using handler = std::function<void(const std::vector<watch_event>&)>;
  // A line longer than this ends the watch: the stream holds at most this much of one line.
  static constexpr std::size_t most_line = std::size_t{16} << 20;

  // `answered` is set once a line shows that etcd set the watch up (it is then not retried on
  // another endpoint); `on_events` is called with each line's events, on the feeding thread.
  watch_stream(const handler& on_events, bool& answered) : on_events_(on_events), answered_(answered) {}

  // Takes the next bytes of the answer: false once the watch has ended (failure() says why), and
  // nothing is read after that.
  bool feed(std::string_view bytes) {
    if (!failure_.empty()) return false;
    try {
      pending_.append(bytes);
      std::size_t start = 0;
      for (auto end = pending_.find('\n'); end != std::string::npos; end = pending_.find('\n', start)) {
        const std::string_view line(pending_.data() + start, end - start);
        if (line.find_first_not_of(" \r\t") != std::string_view::npos) read_line(line);
        start = end + 1;
      }
      pending_.erase(0, start);
      if (pending_.size() > most_line) throw error("etcd: watch line over 16 MiB");
    } catch (const std::exception& e) {  // a bad line, or on_events threw
      failure_ = e.what();
      if (failure_.empty()) failure_ = "etcd: watch ended";
      pending_.clear();
      return false;
    }
    return true;
  }

  const std::string& failure() const noexcept { return failure_; }
  // Why etcd canceled the watch (a rejected token, no permission), empty when it did not.
  const std::string& cancel_reason() const noexcept { return cancel_reason_; }
  // Bytes of a line not complete yet.
  std::size_t pending() const noexcept { return pending_.size(); }

 private:
  void read_line(std::string_view line) {
    auto message = nlohmann::json::parse(line, nullptr, false);
    if (message.is_discarded() || !message.is_object()) throw error("etcd: watch sent a line that is not JSON");
    const auto result = message.find("result");
    if (result == message.end() || !result->is_object()) {
      const auto text = message.find("message");
      throw error("etcd: watch failed: " +
                  (text != message.end() && text->is_string() ? text->get<std::string>() : message.dump()));
    }
    answered_ = true;
    if (json_int(*result, "compact_revision") != 0) throw error("etcd: watch revision was compacted");
    if (const auto canceled = result->find("canceled");
        canceled != result->end() && canceled->is_boolean() && canceled->get<bool>()) {
      const auto reason = result->find("cancel_reason");
      cancel_reason_ = reason != result->end() && reason->is_string() ? reason->get<std::string>() : "no reason given";
      throw error("etcd: watch canceled by etcd: " + cancel_reason_);
    }
    const auto events = result->find("events");
    if (events == result->end() || !events->is_array()) return;
    std::vector<watch_event> batch;
    for (const auto& event : *events) {
      if (!event.is_object()) continue;
      const auto kv = event.find("kv");
      if (kv == event.end() || !kv->is_object()) continue;
      const auto type = event.find("type");
      const bool deleted = type != event.end() && type->is_string() && type->get_ref<const std::string&>() == "DELETE";
      batch.push_back({json_bytes(*kv, "key"), deleted ? std::string() : json_bytes(*kv, "value"), deleted});
    }
    if (!batch.empty()) on_events_(batch);
  }

  std::string pending_;
  const handler& on_events_;
  bool& answered_;
  std::string failure_;
  std::string cancel_reason_;
};

}  // namespace detail
}  // namespace etcd
GEERPC_END_NAMESPACE

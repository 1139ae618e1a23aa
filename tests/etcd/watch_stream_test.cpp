// etcd's watch answer read as it streams in (etcd/watch_stream.hpp), without etcd: lines split
// anywhere between reads, the events of a line, and each way a line ends the watch.
#include <geerpc/etcd/watch_stream.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "../catch.hpp"

namespace watch_stream_test {

using geerpc::etcd::watch_event;
using geerpc::etcd::detail::watch_stream;

// What etcd 3.4's gateway sends: the watch's creation, then a put and a delete of
// "geerpc/Arith/a" (value "127.0.0.1:9001").
const std::string created = R"({"result":{"header":{"revision":"7"},"created":true}})"
                            "\n";
const std::string put_then_delete =
    R"({"result":{"header":{"revision":"9"},"events":[)"
    R"({"kv":{"key":"Z2VlcnBjL0FyaXRoL2E=","value":"MTI3LjAuMC4xOjkwMDE=","mod_revision":"8"}},)"
    R"({"type":"DELETE","kv":{"key":"Z2VlcnBjL0FyaXRoL2E=","mod_revision":"9"}}]}})"
    "\n";

struct recorder {
  std::vector<std::vector<watch_event>> batches;
  watch_stream::handler handler() {
    return [this](const std::vector<watch_event>& batch) { batches.push_back(batch); };
  }
};

TEST_CASE("a watch stream reads lines split anywhere between reads, and hands on each line's events",
          "[etcd][watch_stream]") {
  const std::string answer = created + put_then_delete;
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, answer.size()}) {
    recorder seen;
    const auto handler = seen.handler();
    bool answered = false;
    watch_stream stream(handler, answered);
    for (std::size_t at = 0; at < answer.size(); at += chunk) REQUIRE(stream.feed(answer.substr(at, chunk)));
    CHECK(answered);
    CHECK(stream.failure().empty());
    CHECK(stream.pending() == 0);
    REQUIRE(seen.batches.size() == 1);
    const auto& batch = seen.batches[0];
    REQUIRE(batch.size() == 2);
    CHECK(batch[0].key == "geerpc/Arith/a");
    CHECK(batch[0].value == "127.0.0.1:9001");
    CHECK_FALSE(batch[0].deleted);
    CHECK(batch[1].key == "geerpc/Arith/a");
    CHECK(batch[1].value.empty());
    CHECK(batch[1].deleted);
  }
}

TEST_CASE("a watch stream ends on a line that says the watch ended or is not etcd's, and reads nothing after",
          "[etcd][watch_stream]") {
  struct ending {
    std::string line;
    std::string failure;
    bool answered;
  };
  const std::vector<ending> endings{
      {R"({"result":{"compact_revision":"3"}})", "compacted", true},
      {R"({"result":{"canceled":true}})", "canceled", true},
      {R"({"error":{"grpc_code":14},"message":"etcdserver: no leader"})", "etcdserver: no leader", false},
      {"not json", "not JSON", false},
      {"[1,2]", "not JSON", false},
      {R"({"result":{"events":[{"kv":{"key":"%%%"}}]}})", "not base64", true},
      {R"({"result":{"compact_revision":"x"}})", "not an integer", true},
  };
  for (const ending& e : endings) {
    CAPTURE(e.line);
    recorder seen;
    const auto handler = seen.handler();
    bool answered = false;
    watch_stream stream(handler, answered);
    CHECK_FALSE(stream.feed(e.line + "\n" + put_then_delete));
    CHECK(stream.failure().find(e.failure) != std::string::npos);
    CHECK(answered == e.answered);
    CHECK(seen.batches.empty());  // the line after it was not read
    CHECK_FALSE(stream.feed(put_then_delete));
    CHECK(seen.batches.empty());
  }
}

TEST_CASE("a watch stream holds at most one line of 16 MiB, and ends when on_events throws", "[etcd][watch_stream]") {
  bool answered = false;
  const watch_stream::handler ignore = [](const std::vector<watch_event>&) {};
  watch_stream stream(ignore, answered);
  const std::string mebibyte(std::size_t{1} << 20, 'x');
  bool open = true;
  for (int i = 0; i < 17 && open; ++i) open = stream.feed(mebibyte);
  CHECK_FALSE(open);
  CHECK(stream.failure() == "etcd: watch line over 16 MiB");
  CHECK(stream.pending() == 0);  // given back

  const watch_stream::handler throwing = [](const std::vector<watch_event>&) {
    throw std::runtime_error("the list could not be updated");
  };
  watch_stream second(throwing, answered);
  CHECK_FALSE(second.feed(put_then_delete));
  CHECK(second.failure() == "the list could not be updated");
}

}  // namespace watch_stream_test

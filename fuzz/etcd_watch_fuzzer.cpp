// Fuzzes the etcd watch answer's reader (etcd/watch_stream.hpp): bytes as etcd's gateway might
// stream them, fed in reads of 1 to 64 bytes that the input's first byte chooses. Nothing may crash,
// hang or leak; a deleted key's event carries no value, the stream holds no more than one line of
// its bound, and once it has ended it reads nothing more.
#include <geerpc/etcd/watch_stream.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using geerpc::etcd::watch_event;
  using geerpc::etcd::detail::watch_stream;
  if (size < 1) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  const std::string_view answer(reinterpret_cast<const char*>(data + 1), size - 1);
  const watch_stream::handler check = [](const std::vector<watch_event>& batch) {
    if (batch.empty()) std::abort();  // only a line with events is handed on
    for (const watch_event& event : batch)
      if (event.deleted && !event.value.empty()) std::abort();
  };
  bool answered = false;
  watch_stream stream(check, answered);
  bool open = true;
  for (std::size_t at = 0; at < answer.size(); at += chunk) {
    const bool was_open = open;
    open = stream.feed(answer.substr(at, std::min(chunk, answer.size() - at)));
    if (!was_open && open) std::abort();                 // an ended watch stays ended
    if (open != stream.failure().empty()) std::abort();  // it ends with a reason, and only then
    if (stream.pending() > watch_stream::most_line) std::abort();
  }
  return 0;
}

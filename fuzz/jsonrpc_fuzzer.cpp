// Fuzzes the JSON-RPC stream's translator (json/jsonrpc_stream.hpp) and its scanner
// (json/jsonrpc_scanner.hpp): the peer's bytes in, geerpc request frames and error replies out.
// The input's first byte picks the message limit, its second how the rest is cut into reads.
// Whatever the bytes: no crash, no UB; the same frames, replies and verdict however the stream is
// cut; every frame a well-formed request of a seq of its own, whose params fit the limit; every
// reply, and every response translated back, one line of JSON, an object; nothing kept past the
// limit; no id kept once its response went out.
#include <geerpc/json/jsonrpc_stream.hpp>
#include <geerpc/json/tape.hpp>
#include <geerpc/wire/frame.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <span>
#include <string_view>
#include <vector>

namespace {

using geerpc::detail::frame_translator;
using geerpc::json::detail::jsonrpc_stream;

struct outcome {
  std::vector<std::byte> frames, replies;
  bool broken = false;
  std::size_t too_large = 0;
};

void fail(const char* why) {
  std::fprintf(stderr, "jsonrpc fuzzer: %s\n", why);
  std::abort();
}

// Feeds `stream` to a translator in reads of the sizes `cuts` gives (cycled; 0: the whole rest).
outcome feed(jsonrpc_stream& translator, std::span<const std::byte> stream, std::span<const std::size_t> cuts,
             std::size_t limit) {
  outcome out;
  std::size_t at = 0;
  for (std::size_t read = 0; at < stream.size() && !out.broken; ++read) {
    const std::size_t cut = cuts.empty() ? 0 : cuts[read % cuts.size()];
    const std::size_t size = cut == 0 ? stream.size() - at : std::min(cut, stream.size() - at);
    const frame_translator::intake intake = translator.inbound(stream.subspan(at, size), out.frames, out.replies);
    out.broken = intake.outcome == frame_translator::verdict::broken;
    out.too_large += intake.too_large;
    at += size;
    if (translator.buffered() > limit) fail("kept more than the limit");
  }
  return out;
}

// Each reply is a line: one JSON object, then a newline.
void check_lines(std::span<const std::byte> text) {
  std::size_t from = 0;
  while (from < text.size()) {
    std::size_t end = from;
    while (end < text.size() && static_cast<char>(text[end]) != '\n') ++end;
    if (end == text.size()) fail("a reply without its newline");
    geerpc::json::tape parsed(text.subspan(from, end - from));
    if (!parsed.parse()) fail("a reply that is no JSON");
    if (parsed[0].kind != geerpc::json::token_kind::object_begin) fail("a reply that is no object");
    from = end + 1;
  }
}

// Each frame a request with a seq of its own and params within the limit; each answered back
// (a success with the params as its result), which must be one line of JSON and let go of its id.
void check_frames(jsonrpc_stream& translator, std::span<const std::byte> frames, std::size_t limit) {
  std::set<std::uint64_t> seqs;
  std::vector<std::byte> response, text;
  while (!frames.empty()) {
    const geerpc::wire::frame_scan scan = geerpc::wire::scan_frame(frames, std::numeric_limits<std::uint32_t>::max());
    if (scan.what != geerpc::wire::frame_scan::state::complete) fail("a frame cut short");
    geerpc::wire::frame_view frame;
    if (geerpc::wire::parse_frame(frames.first(scan.size), frame) != nullptr) fail("a frame that does not parse");
    if (frame.header.kind != geerpc::wire::frame_kind::request) fail("a frame that is no request");
    if (!seqs.insert(frame.header.seq).second) fail("a seq twice");
    if (frame.body.size() > limit) fail("params past the limit");
    response.clear();
    const std::size_t start = geerpc::wire::begin_frame(
        response, {geerpc::wire::frame_kind::response, 0, frame.header.seq, 0}, std::string_view());
    response.insert(response.end(), frame.body.begin(), frame.body.end());
    geerpc::wire::finish_frame(response, start);
    text.clear();
    translator.outbound(response, text);
    check_lines(text);
    frames = frames.subspan(scan.size);
  }
  if (translator.ids_held() != 0) fail("an id kept after its response");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t limit = 16 + std::size_t{data[0]} * 8;
  std::vector<std::size_t> cuts;
  for (unsigned seed = data[1] | 1u; cuts.size() < 8; seed = seed * 1103515245u + 12345u)
    cuts.push_back(1 + (seed >> 16) % 40);
  const auto stream = std::as_bytes(std::span(data + 2, size - 2));

  jsonrpc_stream whole(static_cast<std::uint32_t>(limit));
  jsonrpc_stream cut(static_cast<std::uint32_t>(limit));
  const outcome once = feed(whole, stream, {}, limit);
  const outcome pieces = feed(cut, stream, cuts, limit);
  if (once.frames != pieces.frames || once.replies != pieces.replies || once.broken != pieces.broken ||
      once.too_large != pieces.too_large)
    fail("the outcome depends on where the reads were cut");
  check_lines(once.replies);
  check_frames(whole, once.frames, limit);
  return 0;
}

// Fuzzes the translator of a client calling Go's net/rpc/jsonrpc server (json/jsonrpc_client.hpp):
// after the client's hello and a few request frames, the server's bytes in, response frames out.
// The input's first byte picks the client's frame limit; its second how many calls were sent (1 to
// 8), how many it keeps waiting (1 to 8: often fewer, so that some are forgotten) and how the rest
// is cut into reads. Whatever the bytes: no crash, no UB; the same frames and verdict however the stream
// is cut; every frame a well-formed response to a seq that was sent, within the limit, its body
// JSON; a call kept waiting answered at most once; no more calls kept than the bound; none kept
// once the stream broke, each of those then failed with protocol_error.
#include <geerpc/error.hpp>
#include <geerpc/json.hpp>
#include <geerpc/json/jsonrpc_client.hpp>
#include <geerpc/json/tape.hpp>
#include <geerpc/wire/frame.hpp>
#include <geerpc/wire/handshake.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <span>
#include <string_view>
#include <vector>

namespace {

using geerpc::json::detail::jsonrpc_client_translator;

void fail(const char* why) {
  std::fprintf(stderr, "jsonrpc_client fuzzer: %s\n", why);
  std::abort();
}

// The client's hello announcing `limit`, then requests of seqs 1 to `calls`, as its engine writes them.
std::vector<std::byte> client_bytes(std::uint32_t limit, std::uint64_t calls) {
  std::array<std::byte, geerpc::wire::hello_size> hello{};
  geerpc::wire::encode_hello({geerpc::wire::protocol_version, geerpc::json_codec::id, 0, limit}, hello);
  std::vector<std::byte> out(hello.begin(), hello.end());
  static constexpr std::string_view params = "[1]";
  const auto body = std::as_bytes(std::span(params.data(), params.size()));
  for (std::uint64_t seq = 1; seq <= calls; ++seq) {
    const std::size_t start =
        geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::request, 0, seq, 0}, "Arith.Sum");
    out.insert(out.end(), body.begin(), body.end());
    geerpc::wire::finish_frame(out, start);
  }
  return out;
}

struct outcome {
  std::vector<std::byte> frames;
  bool ok = true;
};

// Feeds the server's `stream` in reads of the sizes `cuts` gives (cycled; empty: the whole at once).
outcome feed(jsonrpc_client_translator& t, std::span<const std::byte> stream, std::span<const std::size_t> cuts) {
  outcome out;
  std::size_t at = 0;
  for (std::size_t read = 0; at < stream.size() && out.ok; ++read) {
    const std::size_t size = cuts.empty() ? stream.size() - at : std::min(cuts[read % cuts.size()], stream.size() - at);
    out.ok = t.from_server(stream.subspan(at, size), out.frames);
    at += size;
    if (t.waiting() > t.max_waiting()) fail("more calls kept than the bound");
  }
  return out;
}

// Each frame a response to a seq sent, within the limit, with a JSON body when it succeeded, a
// status Go's answers map to; a call answered twice only if it was forgotten. Returns how many
// calls kept waiting (seqs past `forgotten_through`) were answered.
std::size_t check_frames(std::span<const std::byte> frames, std::uint64_t calls, std::uint64_t forgotten_through,
                         std::uint32_t limit) {
  std::map<std::uint64_t, int> answers;
  while (!frames.empty()) {
    const geerpc::wire::frame_scan scan = geerpc::wire::scan_frame(frames, limit);
    if (scan.what != geerpc::wire::frame_scan::state::complete) fail("a frame cut short, or past the limit");
    geerpc::wire::frame_view frame;
    if (geerpc::wire::parse_frame(frames.first(scan.size), frame) != nullptr) fail("a frame that does not parse");
    if (frame.header.kind != geerpc::wire::frame_kind::response) fail("a frame that is no response");
    if (frame.header.seq == 0 || frame.header.seq > calls) fail("a response to a seq never sent");
    if (++answers[frame.header.seq] > 1 && frame.header.seq > forgotten_through)
      fail("a call kept waiting answered twice");
    if (frame.header.status == 0) {
      geerpc::json::tape parsed(frame.body);
      if (!parsed.parse()) fail("a result that is no JSON");
    } else if (!frame.body.empty()) {
      fail("a failure with a body");
    }
    const auto status = static_cast<geerpc::errc>(frame.header.status);
    if (frame.header.status != 0 && status != geerpc::errc::protocol_error && status != geerpc::errc::remote_error &&
        status != geerpc::errc::unknown_service && status != geerpc::errc::unknown_method &&
        status != geerpc::errc::bad_request)
      fail("a status Go's answers do not map to");
    frames = frames.subspan(scan.size);
  }
  std::size_t kept_answered = 0;
  for (const auto& [seq, count] : answers) kept_answered += seq > forgotten_through ? 1 : 0;
  return kept_answered;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto limit = static_cast<std::uint32_t>(geerpc::wire::header_size + 16 + std::size_t{data[0]} * 8);
  const std::uint64_t calls = 1 + (data[1] & 7);
  const std::size_t max_waiting = 1 + ((data[1] >> 3) & 7);
  std::vector<std::size_t> cuts;
  for (unsigned seed = data[1] | 1u; cuts.size() < 8; seed = seed * 1103515245u + 12345u)
    cuts.push_back(1 + (seed >> 16) % 40);
  const auto stream = std::as_bytes(std::span(data + 2, size - 2));

  const std::vector<std::byte> sent = client_bytes(limit, calls);
  jsonrpc_client_translator whole("w", max_waiting);
  std::vector<std::byte> text, to_client;
  if (!whole.from_client(sent, text, to_client).empty()) fail("the client's own bytes refused");
  if (whole.waiting() > max_waiting) fail("more calls kept than the bound");
  if (whole.waiting() + whole.forgotten() != calls) fail("calls neither kept nor forgotten");
  const std::uint64_t forgotten_through = whole.forgotten();  // seqs 1 to this were forgotten
  jsonrpc_client_translator cut = whole;

  const outcome once = feed(whole, stream, {});
  const outcome pieces = feed(cut, stream, cuts);
  if (once.frames != pieces.frames || once.ok != pieces.ok || whole.why() != cut.why())
    fail("the outcome depends on where the reads were cut");
  if (once.ok == whole.broken()) fail("the verdict and broken() disagree");
  if (whole.broken() && whole.waiting() != 0) fail("calls kept after the stream broke");
  // Every call kept is answered, or still waiting; once the stream broke, none waits.
  const std::size_t answered = check_frames(once.frames, calls, forgotten_through, limit);
  if (answered + whole.waiting() != calls - forgotten_through) fail("a call kept neither answered nor waiting");
  return 0;
}

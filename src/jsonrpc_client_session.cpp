// geerpc: the stream session of a client calling Go's net/rpc/jsonrpc server
// (include/geerpc/json/jsonrpc_client.hpp): the translator between the engine and the socket, and
// json_codec's maker of it.
#include <geerpc/json/codec.hpp>
#include <geerpc/json/jsonrpc_client.hpp>
#include <geerpc/net/socket.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

GEERPC_BEGIN_NAMESPACE

std::unique_ptr<net::stream_session> json_codec::make_jsonrpc_client_session(int fd, std::string_view where) {
  return std::make_unique<json::detail::jsonrpc_client_session>(fd, std::string(where));
}

namespace json {
namespace detail {
namespace {

// A read takes at most this many recv()s of the server's bytes, so that a server sending only
// whitespace, or a response in small pieces, gives the engine back its thread now and then.
constexpr int reads_per_call = 16;
constexpr std::size_t read_chunk = std::size_t{16} << 10;
constexpr std::size_t kept_capacity = std::size_t{64} << 10;  // a larger emptied buffer is given back

void drop_taken(std::vector<std::byte>& buffer, std::size_t& taken) noexcept {
  if (taken < buffer.size()) return;
  buffer.clear();
  taken = 0;
  if (buffer.capacity() > kept_capacity) std::vector<std::byte>().swap(buffer);
}

}  // namespace

net::io_result jsonrpc_client_session::give(std::span<std::byte> out) noexcept {
  const std::size_t n = std::min(out.size(), to_engine_.size() - given_);
  std::memcpy(out.data(), to_engine_.data() + given_, n);
  given_ += n;
  drop_taken(to_engine_, given_);
  return {net::io_status::data, n};
}

net::io_result jsonrpc_client_session::read(std::span<std::byte> out) noexcept {
  std::lock_guard lock(mutex_);
  try {
    for (int round = 0; round < reads_per_call; ++round) {
      if (given_ < to_engine_.size()) return give(out);
      if (ended_) return {net::io_status::closed, 0};
      std::byte chunk[read_chunk];
      std::size_t got = 0;
      switch (net::recv_some(fd_, chunk, sizeof chunk, got)) {
        case net::recv_status::data:
          if (!translator_.from_server(std::span<const std::byte>(chunk, got), to_engine_)) {
            ended_ = true;
            why_ = translator_.why();
          }
          continue;
        case net::recv_status::would_block:
          return {net::io_status::would_block, 0};
        case net::recv_status::closed:
          ended_ = true;
          continue;
      }
    }
    // The last round may have completed a response, or ended the stream: would_block must mean
    // nothing is buffered (stream_session.hpp), or the blocking engine would wait on an empty socket.
    if (given_ < to_engine_.size()) return give(out);
    return {ended_ ? net::io_status::closed : net::io_status::would_block, 0};
  } catch (const std::bad_alloc&) {
    ended_ = true;
    why_ = "out of memory translating the server's responses";
    return {net::io_status::closed, 0};
  }
}

bool jsonrpc_client_session::flush() noexcept {
  while (sent_ < to_socket_.size()) {
    const long n = net::send_some(fd_, to_socket_.data() + sent_, to_socket_.size() - sent_);
    if (n < 0) return false;
    if (n == 0) break;
    sent_ += static_cast<std::size_t>(n);
  }
  drop_taken(to_socket_, sent_);
  return true;
}

net::io_result jsonrpc_client_session::write(std::span<const std::byte> data) noexcept {
  std::lock_guard lock(mutex_);
  if (write_over_ || !flush()) {
    write_over_ = true;
    return {net::io_status::closed, 0};
  }
  if (sent_ < to_socket_.size()) return {net::io_status::would_block, 0};
  if (translator_.broken()) return {net::io_status::closed, 0};  // the calls it failed are over
  if (owed_) {  // the byte taken in before, offered again now that its text is out
    owed_ = false;
    return {net::io_status::data, 1};
  }
  try {
    if (std::string bad = translator_.from_client(data, to_socket_, to_engine_); !bad.empty()) {
      why_ = std::move(bad);
      write_over_ = true;
      return {net::io_status::closed, 0};
    }
  } catch (const std::bad_alloc&) {
    write_over_ = true;
    return {net::io_status::closed, 0};
  }
  if (!flush()) {
    write_over_ = true;
    return {net::io_status::closed, 0};
  }
  if (sent_ == to_socket_.size()) return {net::io_status::data, data.size()};
  owed_ = true;
  if (data.size() == 1) return {net::io_status::would_block, 0};
  return {net::io_status::data, data.size() - 1};
}

bool jsonrpc_client_session::buffered() const noexcept {
  std::lock_guard lock(mutex_);
  return given_ < to_engine_.size() || ended_;
}

std::string jsonrpc_client_session::why_closed() const {
  std::lock_guard lock(mutex_);
  return why_;
}

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE

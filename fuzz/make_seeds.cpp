// Writes the seed corpus (fuzz/corpus/) from valid messages built by the library itself:
//   c++ -std=c++20 -I include fuzz/make_seeds.cpp -o /tmp/make_seeds && /tmp/make_seeds fuzz/corpus
#include <filesystem>
#include <fstream>
#include <geerpc/geerpc.hpp>
#include <string>
#include <vector>

#include "fuzz_types.hpp"

namespace {
namespace fs = std::filesystem;

void write(const fs::path& dir, const std::string& name, const std::vector<std::byte>& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
std::vector<std::byte> encoded(const T& value) {
  std::vector<std::byte> out;
  geerpc::binary_codec::encode(value, out);
  return out;
}

template <class A>
std::vector<std::byte> request(std::uint64_t seq, std::string_view method, const A& argument,
                               std::uint64_t budget = 0) {
  std::vector<std::byte> out;
  const auto start = geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::request, 0, seq, budget}, method);
  geerpc::binary_codec::encode(argument, out);
  geerpc::wire::finish_frame(out, start);
  return out;
}

std::vector<std::byte> operator+(std::vector<std::byte> a, const std::vector<std::byte>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct Args {
  int num1;
  int num2;
};
}  // namespace

int main(int argc, char** argv) {
  const fs::path root = argc > 1 ? argv[1] : "fuzz/corpus";

  fuzz::leaf leaf{"leaf", {1, 2, 3}, fuzz::point{1.5, -2.25f}, fuzz::colour::blue, fuzz::toggle::on, true};
  fuzz::tree tree{42,
                  {leaf, leaf},
                  {{"a", {1, -1}}},
                  {{7, "note"}, {8, std::nullopt}},
                  {'x', {-3, 99}, {leaf, fuzz::leaf{}}},
                  {{true, false}, {}}};
  auto with_type = [](std::uint8_t type, std::vector<std::byte> bytes) {
    bytes.insert(bytes.begin(), std::byte{type});
    return bytes;
  };
  write(root / "codec", "tree", with_type(0, encoded(tree)));
  write(root / "codec", "leaf", with_type(1, encoded(leaf)));
  write(root / "codec", "trees", with_type(2, encoded(std::vector<fuzz::tree>{tree, fuzz::tree{}})));
  write(root / "codec", "map", with_type(3, encoded(std::map<std::string, fuzz::point>{{"p", {0, 1}}})));
  write(root / "codec", "optional_tuple",
        with_type(4, encoded(std::optional<std::tuple<std::string, std::vector<double>, fuzz::colour>>{
                         std::tuple{std::string("t"), std::vector<double>{0.5}, fuzz::colour::green}})));
  write(root / "codec", "string", with_type(5, encoded(std::string("hello"))));
  fuzz::pages pages(12);
  pages[3].emplace().fill('p');
  write(root / "codec", "pages", with_type(6, encoded(pages)));
  fuzz::sparse sparse{{{}, {1, 2}, {}},
                      {"", "word", ""},
                      {{1, ""}, {500, "name"}},
                      {{0, {}}, {7, {true, false, true}}},
                      {std::nullopt, std::optional<std::array<std::uint64_t, 16>>{}, std::array<std::uint64_t, 16>{9}}};
  write(root / "codec", "sparse", with_type(7, encoded(sparse)));
  write(root / "codec", "hashed_words",
        with_type(8, encoded(std::unordered_map<std::uint16_t, std::vector<std::string>>{{1, {"a", ""}}, {2, {}}})));
  fuzz::modern modern{std::chrono::milliseconds(250),
                      std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000)),
                      leaf,
                      {"a", "b"},
                      {1, 1, 2},
                      {7, 9},
                      {"q", ""},
                      {{1, 2}, {}},
                      std::make_unique<fuzz::leaf>(leaf),
                      std::bitset<13>(0x1abc)};
  write(root / "codec", "modern", with_type(9, encoded(modern)));
  fuzz::costly costly;
  std::get<0>(costly).push_back(nullptr);
  std::get<0>(costly).push_back(std::make_unique<std::optional<std::array<char, 512>>>());
  std::get<1>(costly) = {1, 2, 3};
  std::get<2>(costly) = {{}, {4, 5}};
  std::get<3>(costly) = {6, 6};
  std::get<4>(costly).emplace_back(std::uint8_t{7});
  std::get<4>(costly).emplace_back(std::deque<std::uint8_t>{8});
  write(root / "codec", "costly", with_type(10, encoded(costly)));

  const auto sum = request(1, "Arith.Sum", Args{1, 2}, 1000);
  const auto echo = request(2, "Arith.Echo", std::string(300, 'e'));
  const auto cancel_bytes = geerpc::detail::cancel_frame(1);
  const std::vector<std::byte> cancel(cancel_bytes.begin(), cancel_bytes.end());
  write(root / "frame", "one_request", std::vector<std::byte>{std::byte{7}, std::byte{3}} + sum);
  write(root / "frame", "three_frames", std::vector<std::byte>{std::byte{1}, std::byte{3}} + sum + echo + cancel);
  std::vector<std::byte> checked;  // a request with its type fingerprint (request flag 0x01)
  const auto checked_start = geerpc::wire::begin_frame(
      checked, {geerpc::wire::frame_kind::request, geerpc::wire::request_flag::fingerprint, 3, 0}, "Arith.Sum",
      geerpc::binary_codec::fingerprint<std::tuple<Args>, int>);
  geerpc::binary_codec::encode(Args{3, 4}, checked);
  geerpc::wire::finish_frame(checked, checked_start);
  write(root / "frame", "fingerprinted_request", std::vector<std::byte>{std::byte{5}, std::byte{3}} + checked);
  std::vector<std::byte> with_metadata;  // fingerprint and metadata (request flags 0x03)
  const auto with_metadata_start =
      geerpc::wire::begin_frame(with_metadata,
                                {geerpc::wire::frame_kind::request,
                                 geerpc::wire::request_flag::fingerprint | geerpc::wire::request_flag::metadata, 4, 0},
                                "Arith.Sum", geerpc::binary_codec::fingerprint<std::tuple<Args>, int>);
  geerpc::wire::append_metadata(with_metadata, std::vector<std::pair<std::string, std::string>>{
                                                   {"authorization", "Bearer abc"}, {"trace-id", "7f3a"}});
  geerpc::binary_codec::encode(Args{5, 6}, with_metadata);
  geerpc::wire::finish_frame(with_metadata, with_metadata_start);
  write(root / "frame", "request_with_metadata", std::vector<std::byte>{std::byte{9}, std::byte{3}} + with_metadata);

  std::array<std::byte, geerpc::wire::hello_size> hello{};
  geerpc::wire::encode_hello({geerpc::wire::protocol_version, geerpc::binary_codec::id, 500000, 1u << 20}, hello);
  const std::vector<std::byte> hello_bytes(hello.begin(), hello.end());
  write(root / "handshake", "hello_then_calls",
        hello_bytes + sum + echo + request(3, "Arith.Stop", Args{5, 6}, 1) + cancel + request(4, "Nope.X", Args{}));
  write(root / "handshake", "hello_only", hello_bytes);
  const auto text = [](std::string_view t) {
    const auto bytes = std::as_bytes(std::span(t.data(), t.size()));
    return std::vector<std::byte>(bytes.begin(), bytes.end());
  };
  write(root / "handshake", "http_connect_then_calls",
        text("CONNECT /_geerpc_ HTTP/1.0\r\n\r\n") + hello_bytes + sum + echo);
  write(root / "handshake", "http_get_debug_page", text("GET /debug/geerpc?x=1 HTTP/1.1\r\nHost: a\r\nX-Y: z\r\n\r\n"));
  write(root / "handshake", "http_bad_header", text("GET /debug/geerpc/stats.json HTTP/1.1\nHost x\n\n"));
  std::vector<std::byte> reject;
  geerpc::wire::encode_hello_reply({false, 0, "rpc server: unsupported codec 9"}, reject);
  write(root / "handshake", "reply_reject", reject);
  return 0;
}

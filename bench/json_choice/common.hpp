// Shared pieces of the JSON library comparison: the C++ types a geerpc JSON codec would fill, the
// inputs, and a hand-written reference writer. Not part of the geerpc build.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace jc {

struct args {
  std::int64_t A = 0, B = 0;
};
struct sum_request {
  std::string method;
  args params;
  std::int64_t id = 0;
};
struct echo_request {
  std::string method;
  std::string payload;
  std::int64_t id = 0;
};

inline std::string make_sum_request() { return R"({"method":"Arith.Sum","params":[{"A":1,"B":2}],"id":7})"; }

// 4 KiB of payload (decoded length 4096).
inline std::string payload_plain() {
  std::string s;
  for (int i = 0; s.size() < 4096; ++i) s += static_cast<char>('a' + i % 26);
  return s;
}
// Escape-heavy: every character class a writer must escape, plus 2- and 3-byte UTF-8.
inline std::string payload_escapes() {
  static const char* const piece = "q\"b\\n\nt\tc\x01 \xc3\xa9\xe2\x82\xac/";  // 17 bytes
  std::string s;
  while (s.size() + 17 <= 4096) s += piece;
  while (s.size() < 4096) s += 'x';
  return s;
}

inline void escape_into(std::string& out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  std::size_t run = 0;  // start of the pending run of characters that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default: {
        char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        out.append(u, 6);
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

inline std::string make_echo_request(std::string_view payload) {
  std::string r = R"({"method":"Arith.Echo","params":[)";
  escape_into(r, payload);
  r += R"(],"id":7})";
  return r;
}

inline std::vector<args> make_array_values() {
  std::vector<args> v;
  std::uint64_t x = 12345;
  std::size_t bytes = 2;
  while (bytes < 64 * 1024) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    args a{static_cast<std::int64_t>((x >> 33) % 100000), -static_cast<std::int64_t>((x >> 13) % 1000)};
    v.push_back(a);
    bytes += 14 + std::to_string(a.A).size() + std::to_string(a.B).size();
  }
  return v;
}
inline std::string make_array_json(const std::vector<args>& v) {
  std::string r = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) r += ',';
    r += "{\"A\":" + std::to_string(v[i].A) + ",\"B\":" + std::to_string(v[i].B) + "}";
  }
  r += ']';
  return r;
}

// Hand-written writers: the lower bound for writing (what a codec could do without a library).
inline void hand_write_sum_reply(std::string& out, std::int64_t id, std::int64_t c) {
  char buf[96];
  int n = std::snprintf(buf, sizeof buf, R"({"id":%lld,"result":{"C":%lld},"error":null})", static_cast<long long>(id),
                        static_cast<long long>(c));
  out.assign(buf, static_cast<std::size_t>(n));
}
inline void hand_write_echo_reply(std::string& out, std::int64_t id, std::string_view s) {
  out.clear();
  out += R"({"id":)";
  out += std::to_string(id);
  out += R"(,"result":)";
  escape_into(out, s);
  out += R"(,"error":null})";
}
inline void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
inline void hand_write_array(std::string& out, const std::vector<args>& v) {
  out.clear();
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    out += i ? ",{\"A\":" : "{\"A\":";
    append_int(out, v[i].A);
    out += ",\"B\":";
    append_int(out, v[i].B);
    out += '}';
  }
  out += ']';
}

}  // namespace jc

// Compile-cost TU: the hand-written writer and the standard headers every codec TU includes.
#include "../common.hpp"
namespace ct {
void write_sum(std::string& o, std::int64_t id, std::int64_t c) { jc::hand_write_sum_reply(o, id, c); }
void write_echo(std::string& o, std::int64_t id, std::string_view s) { jc::hand_write_echo_reply(o, id, s); }
void write_array(std::string& o, const std::vector<jc::args>& v) { jc::hand_write_array(o, v); }
}  // namespace ct

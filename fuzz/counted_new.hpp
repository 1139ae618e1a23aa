// The bytes the program asked of operator new while `counting` was set (counted_new.cpp replaces
// it): what a fuzzer compares with what a decode charged against its memory budget. One thread
// decodes, so plain variables do.
#pragma once

#include <cstddef>

namespace fuzz {
extern std::size_t allocated;
extern bool counting;
}  // namespace fuzz

using fuzz::allocated;
using fuzz::counting;

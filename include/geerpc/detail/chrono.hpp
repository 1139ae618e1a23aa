// geerpc: std::chrono's durations, clocks, time points and literals, without the rest of <chrono>.
// With libstdc++ and C++20, <chrono> also brings the calendar, time zones and their stream I/O, and
// with them <sstream> and <istream>: about a quarter of a second of every user's compile (g++ 12,
// -O0) for parts geerpc never uses. libstdc++ (GCC 11 and later) keeps what <thread> and
// <condition_variable> need in <bits/chrono.h>; elsewhere this is <chrono>. A user who wants the
// rest (the calendar, `std::cout << 1s`) includes <chrono>, as any user of std::chrono does.
#pragma once

#if __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif

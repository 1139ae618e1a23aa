// Catch2 v3 where it is installed, v2 (Debian 12's package) otherwise: the macros we use are the same.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif

// Compile-cost TU: Boost.JSON's sources alone (the one TU of a header-only build that includes them).
#include <boost/json/src.hpp>

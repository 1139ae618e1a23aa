// Boost.JSON's sources, compiled once for geerpc::json where Debian's libboost-json-dev (the
// compiled Boost::json) is not installed: <boost/json/src.hpp> may appear in one TU of a program.
#include <boost/json/src.hpp>

// geerpc: the transport policies (transport/fwd.hpp) with every engine they stand for: both
// transports and both tuning policies. docs/transports.md says when to pick which.
#pragma once

#include "../config.hpp"
#include "../tuning/automatic.hpp"
#include "../tuning/automatic_server.hpp"
#include "../tuning/none.hpp"
#include "blocking/client.hpp"
#include "blocking/server.hpp"
#include "fwd.hpp"
#include "threaded/client_receive.hpp"
#include "threaded/server.hpp"

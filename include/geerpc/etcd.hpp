// geerpc: service discovery on etcd v3 (the geerpc::etcd CMake target, which brings libcurl and
// nlohmann-json; the core needs neither). Servers register with etcd::registration; balanced
// clients find them with etcd::discovery. Not part of <geerpc/geerpc.hpp> or the single header.
#pragma once

#include "etcd/base64.hpp"
#include "etcd/discovery.hpp"
#include "etcd/gateway.hpp"
#include "etcd/registration.hpp"

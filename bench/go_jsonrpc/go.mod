module geerpc.local/bench/gojsonrpc

go 1.19

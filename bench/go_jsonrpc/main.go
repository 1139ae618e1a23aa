// Command gojsonrpc is the benchmark's JSON-RPC peer: Go's net/rpc with its net/rpc/jsonrpc codec,
// standard library only. It measures Go's JSON-RPC server against geerpc's JSON-RPC server (the
// same first-byte-'{' stream, docs/protocol.md section 9) with one client, Go's own.
//
//	-mode server -addrfile F  serve Arith.Sum and Arith.Echo on 127.0.0.1:0, write the bound
//	                          address to F, and exit after -lifetime
//	-mode client -addr A      run -workloads (W1..W4 of BENCHMARK.md) against A, one line each:
//	  bench <peer> <workload> calls_per_s=<int> p50_us=<float> p99_us=<float> [mb_per_s=<float>]
//
// Only loopback addresses are served or called; every loop is bounded by a call count, and both
// modes end by themselves after a deadline.
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/rpc"
	"net/rpc/jsonrpc"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// SumArgs is Arith.Sum's argument; geerpc's bench service names its fields a and b, which a JSON
// key matches whatever its ASCII case.
type SumArgs struct {
	A int32
	B int32
}

// Arith is the benchmark service.
type Arith struct{}

// Sum sets *reply to A+B (wrapping, as geerpc's does).
func (Arith) Sum(args *SumArgs, reply *int32) error {
	*reply = int32(uint32(args.A) + uint32(args.B))
	return nil
}

// Echo returns its argument.
func (Arith) Echo(text string, reply *string) error {
	*reply = text
	return nil
}

type workload struct {
	name    string
	conns   int
	callers int // per connection
	calls   int // timed, all callers together
	warmup  int
	echo    bool
}

var table = []workload{
	{"W1", 1, 1, 20000, 2000, false},
	{"W2", 1, 32, 200000, 2000, false},
	{"W3", 8, 4, 200000, 2000, false},
	{"W4", 1, 8, 50000, 2000, true},
}

const payloadSize = 4096

func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address", addr)
	}
	return nil
}

func serve(addrFile string) error {
	server := rpc.NewServer()
	if err := server.RegisterName("Arith", Arith{}); err != nil {
		return err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if err := os.WriteFile(addrFile, []byte(listener.Addr().String()+"\n"), 0o644); err != nil {
		return err
	}
	for {
		conn, err := listener.Accept()
		if err != nil {
			return err
		}
		go server.ServeCodec(jsonrpc.NewServerCodec(conn))
	}
}

// call makes one call of the workload's kind and checks its answer.
func call(client *rpc.Client, w workload, payload string) error {
	if w.echo {
		var back string
		if err := client.Call("Arith.Echo", payload, &back); err != nil {
			return err
		}
		if len(back) != len(payload) {
			return errors.New("Echo answered a different length")
		}
		return nil
	}
	var sum int32
	if err := client.Call("Arith.Sum", &SumArgs{A: 20, B: 22}, &sum); err != nil {
		return err
	}
	if sum != 42 {
		return fmt.Errorf("Sum answered %d, not 42", sum)
	}
	return nil
}

// share splits n calls over k callers, the first n%k taking one more.
func share(n, k, i int) int {
	if i < n%k {
		return n/k + 1
	}
	return n / k
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return float64(sorted[i].Nanoseconds()) / 1000
}

func run(addr, peer string, w workload, scale float64) error {
	calls := int(float64(w.calls) * scale)
	if calls < w.conns*w.callers {
		calls = w.conns * w.callers
	}
	clients := make([]*rpc.Client, w.conns)
	for i := range clients {
		c, err := jsonrpc.Dial("tcp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		clients[i] = c
	}
	payload := strings.Repeat("x", payloadSize)
	callers := w.conns * w.callers
	for i := 0; i < w.warmup; i++ {
		if err := call(clients[i%w.conns], w, payload); err != nil {
			return err
		}
	}
	latencies := make([][]time.Duration, callers)
	failures := make(chan error, callers)
	var wg sync.WaitGroup
	began := time.Now()
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			mine := make([]time.Duration, 0, share(calls, callers, i))
			for n := share(calls, callers, i); n > 0; n-- {
				start := time.Now()
				if err := call(clients[i%w.conns], w, payload); err != nil {
					failures <- err
					return
				}
				mine = append(mine, time.Since(start))
			}
			latencies[i] = mine
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(began)
	close(failures)
	if err := <-failures; err != nil {
		return err
	}
	all := make([]time.Duration, 0, calls)
	for _, l := range latencies {
		all = append(all, l...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	rate := float64(len(all)) / elapsed.Seconds()
	line := fmt.Sprintf("bench %s %s calls_per_s=%d p50_us=%.1f p99_us=%.1f", peer, w.name, int64(rate),
		percentile(all, 0.50), percentile(all, 0.99))
	if w.echo {
		line += fmt.Sprintf(" mb_per_s=%.1f", rate*payloadSize*2/1e6)
	}
	fmt.Println(line)
	return nil
}

func main() {
	mode := flag.String("mode", "", "server or client")
	addrFile := flag.String("addrfile", "", "server: where to write the bound address")
	addr := flag.String("addr", "", "client: the server's loopback host:port")
	peer := flag.String("peer", "go-jsonrpc", "client: the peer name printed")
	workloads := flag.String("workloads", "W1,W2,W3,W4", "client: comma-separated")
	scale := flag.Float64("scale", 1, "client: multiplies the call counts")
	lifetime := flag.Duration("lifetime", 30*time.Minute, "either: exit after this long, whatever is left")
	flag.Parse()
	time.AfterFunc(*lifetime, func() {
		fmt.Fprintln(os.Stderr, "gojsonrpc: lifetime over")
		os.Exit(3)
	})
	var err error
	switch *mode {
	case "server":
		err = serve(*addrFile)
	case "client":
		if err = loopback(*addr); err != nil {
			break
		}
		for _, w := range table {
			if !strings.Contains(","+*workloads+",", ","+w.name+",") {
				continue
			}
			if err = run(*addr, *peer, w, *scale); err != nil {
				err = fmt.Errorf("%s: %w", w.name, err)
				break
			}
		}
	default:
		err = errors.New("-mode server or -mode client")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gojsonrpc:", err)
		os.Exit(1)
	}
}

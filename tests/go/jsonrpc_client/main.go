// A Go client of a geerpc server, through Go's own net/rpc/jsonrpc (docs/protocol.md section 9):
// the standard library only. It dials the server -addr names, makes the calls below, each within a
// few seconds, prints what it got, and exits 1 on any result it did not expect (2 on bad usage).
// tests/go/jsonrpc_client/run.sh builds it and runs it against the server of tests/json/jsonrpc_test.cpp.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/rpc"
	"net/rpc/jsonrpc"
	"os"
	"strings"
	"sync"
	"time"
)

// Args is the server's struct Pair { int a; int b; }: Go's names match geerpc's regardless of case.
type Args struct {
	A, B int
}

const callLimit = 5 * time.Second

// call makes one call, giving up after callLimit (Go's client has no deadline of its own).
func call(client *rpc.Client, method string, args any, reply any) error {
	done := client.Go(method, args, reply, make(chan *rpc.Call, 1))
	select {
	case c := <-done.Done:
		return c.Error
	case <-time.After(callLimit):
		return fmt.Errorf("%s: no answer within %v", method, callLimit)
	}
}

type checker struct {
	mutex    sync.Mutex
	failures int
}

func (c *checker) expect(ok bool, format string, a ...any) {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	if !ok {
		c.failures++
		fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", a...)
	}
}

func main() {
	addr := flag.String("addr", "", "the geerpc server, host:port")
	flag.Parse()
	if *addr == "" {
		fmt.Fprintln(os.Stderr, "usage: jsonrpc_client -addr host:port")
		os.Exit(2)
	}
	conn, err := net.DialTimeout("tcp", *addr, callLimit)
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: dial:", err)
		os.Exit(1)
	}
	client := jsonrpc.NewClient(conn)
	defer client.Close()
	var c checker

	var sum int
	err = call(client, "Arith.Sum", Args{1, 2}, &sum)
	c.expect(err == nil && sum == 3, "Arith.Sum {1, 2}: %d, %v", sum, err)
	fmt.Println("Arith.Sum {1, 2}:", sum)

	// 50 calls in flight at once on the one connection; their answers come in any order.
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var r int
			err := call(client, "Arith.Sum", Args{i, 1000}, &r)
			c.expect(err == nil && r == i+1000, "Arith.Sum {%d, 1000}: %d, %v", i, r, err)
		}(i)
	}
	wg.Wait()
	fmt.Println("50 concurrent calls: done")

	text := strings.Repeat("geerpc \"jsonrpc\" <&> caf\u00e9 1234\n", 4096/32) // 32 bytes a time: 4 KiB
	var echoed string
	err = call(client, "Arith.Echo", text, &echoed)
	c.expect(err == nil && echoed == text, "Arith.Echo of %d bytes: %d bytes back, %v", len(text), len(echoed), err)
	fmt.Printf("Arith.Echo: %d bytes back\n", len(echoed))

	err = call(client, "Arith.Nope", Args{}, &sum)
	_, isServerError := err.(rpc.ServerError)
	c.expect(isServerError && strings.HasPrefix(err.Error(), "rpc server: can't find method Nope"),
		"Arith.Nope: %v", err)
	fmt.Println("Arith.Nope:", err)

	err = call(client, "Arith.Fail", Args{}, &sum)
	c.expect(err != nil && err.Error() == "boom: \"quoted\"\n\ufffd", "Arith.Fail: %q", err)
	fmt.Printf("Arith.Fail: %q\n", err)

	// A void method: its empty result reads into any struct.
	var nothing struct{}
	err = call(client, "Arith.Nothing", Args{1, 1}, &nothing)
	c.expect(err == nil, "Arith.Nothing: %v", err)

	// The connection still serves after the errors.
	err = call(client, "Arith.Sum", Args{40, 2}, &sum)
	c.expect(err == nil && sum == 42, "Arith.Sum {40, 2} after the errors: %d, %v", sum, err)

	if c.failures > 0 {
		fmt.Fprintf(os.Stderr, "%d unexpected results\n", c.failures)
		os.Exit(1)
	}
	fmt.Println("ok")
}

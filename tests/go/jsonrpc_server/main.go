// A Go net/rpc server served with jsonrpc.ServeConn, for geerpc's jsonrpc@ client
// (docs/protocol.md 9.6): the standard library only. It listens on a loopback port, writes its
// address to the file -address_file names (whole, by a rename), serves every connection until the
// run script stops it by its PID, and exits by itself after -limit in any case.
// tests/go/jsonrpc_server/run.sh builds and runs it against the hidden case "[.go_jsonrpc_server]"
// of geerpc_json_tests (tests/json/jsonrpc_go_server_test.cpp).
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/rpc"
	"net/rpc/jsonrpc"
	"os"
	"sync"
	"time"
)

// Args is the client's struct Pair { int a; int b; }: Go matches its field names ignoring case.
type Args struct {
	A, B int
}

// Quotient comes back as {"Quo":..,"Rem":..}, which geerpc's decoder matches ignoring case too.
type Quotient struct {
	Quo, Rem int
}

type Arith struct {
	released chan struct{}
	once     sync.Once
}

func (t *Arith) Sum(args *Args, reply *int) error {
	*reply = args.A + args.B
	return nil
}

func (t *Arith) Divide(args *Args, quo *Quotient) error {
	if args.B == 0 {
		return errors.New("divide by zero")
	}
	quo.Quo = args.A / args.B
	quo.Rem = args.A % args.B
	return nil
}

// Slow answers when Release is called (the client's deadline passes first), or after 30 s.
func (t *Arith) Slow(args *Args, reply *int) error {
	select {
	case <-t.released:
	case <-time.After(30 * time.Second):
	}
	*reply = args.A
	return nil
}

func (t *Arith) Release(args *Args, reply *int) error {
	t.once.Do(func() { close(t.released) })
	*reply = 0
	return nil
}

func main() {
	addressFile := flag.String("address_file", "", "where to write the server's address")
	limit := flag.Duration("limit", 120*time.Second, "exit after this long")
	flag.Parse()
	if *addressFile == "" {
		fmt.Fprintln(os.Stderr, "usage: jsonrpc_server -address_file FILE")
		os.Exit(2)
	}
	if err := rpc.Register(&Arith{released: make(chan struct{})}); err != nil {
		fmt.Fprintln(os.Stderr, "register:", err)
		os.Exit(1)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	temporary := *addressFile + ".tmp"
	if err := os.WriteFile(temporary, []byte(listener.Addr().String()+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "write:", err)
		os.Exit(1)
	}
	if err := os.Rename(temporary, *addressFile); err != nil {
		fmt.Fprintln(os.Stderr, "rename:", err)
		os.Exit(1)
	}
	fmt.Println("listening on", listener.Addr())
	time.AfterFunc(*limit, func() { os.Exit(3) })
	for {
		conn, err := listener.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "accept:", err)
			os.Exit(1)
		}
		go jsonrpc.ServeConn(conn)
	}
}

// The Go side of the go_interop example (run.sh): the standard library only, net/rpc over
// net/rpc/jsonrpc.
//
//	arith -serve ADDRESS_FILE   serves Arith on a free loopback port, writes its address to the file
//	arith -call HOST:PORT       calls Arith on a geerpc server, exits 1 on a wrong answer
//
// geerpc's JSON codec names struct members as C++ does (a, b); Go's encoding/json matches them to
// A and B ignoring case, both ways.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/rpc"
	"net/rpc/jsonrpc"
	"os"
	"time"
)

type Args struct {
	A, B int
}

type Quotient struct {
	Quo, Rem int
}

type Arith struct{}

func (Arith) Sum(args *Args, reply *int) error {
	*reply = args.A + args.B
	return nil
}

func (Arith) Divide(args *Args, quo *Quotient) error {
	if args.B == 0 {
		return errors.New("divide by zero")
	}
	quo.Quo, quo.Rem = args.A/args.B, args.A%args.B
	return nil
}

// serve writes the address whole (by a rename), then serves until run.sh stops it, or one minute.
func serve(addressFile string) error {
	if err := rpc.Register(Arith{}); err != nil {
		return err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if err := os.WriteFile(addressFile+".tmp", []byte(listener.Addr().String()), 0o644); err != nil {
		return err
	}
	if err := os.Rename(addressFile+".tmp", addressFile); err != nil {
		return err
	}
	time.AfterFunc(time.Minute, func() { os.Exit(3) })
	for {
		conn, err := listener.Accept()
		if err != nil {
			return err
		}
		go jsonrpc.ServeConn(conn)
	}
}

func call(address string) error {
	conn, err := net.DialTimeout("tcp", address, 5*time.Second)
	if err != nil {
		return err
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second)) // Go's client has no deadline of its own
	client := jsonrpc.NewClient(conn)
	defer client.Close()

	var sum int
	if err := client.Call("Arith.Sum", Args{A: 2, B: 3}, &sum); err != nil || sum != 5 {
		return fmt.Errorf("Arith.Sum(2, 3) = %d, %v; want 5", sum, err)
	}
	fmt.Println("Go called C++: Arith.Sum(2, 3) =", sum)
	var quo Quotient
	if err := client.Call("Arith.Divide", Args{A: 7, B: 2}, &quo); err != nil || quo != (Quotient{3, 1}) {
		return fmt.Errorf("Arith.Divide(7, 2) = %+v, %v; want {Quo:3 Rem:1}", quo, err)
	}
	fmt.Printf("Go called C++: Arith.Divide(7, 2) = %+v\n", quo)
	err = client.Call("Arith.Divide", Args{A: 1, B: 0}, &quo)
	if err == nil || err.Error() != "divide by zero" {
		return fmt.Errorf("Arith.Divide(1, 0): error %v; want divide by zero", err)
	}
	fmt.Println("Go called C++: Arith.Divide(1, 0) failed:", err)
	return nil
}

func main() {
	addressFile := flag.String("serve", "", "serve Arith; write the address to this file")
	address := flag.String("call", "", "call Arith at this host:port")
	flag.Parse()
	var err error
	switch {
	case *addressFile != "":
		err = serve(*addressFile)
	case *address != "":
		err = call(*address)
	default:
		fmt.Fprintln(os.Stderr, "usage: arith -serve ADDRESS_FILE | -call HOST:PORT")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

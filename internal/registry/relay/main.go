// Command nuv-registry-relay is the door of nuv's loopback registry on a container network: run in
// a container on kind's network, it accepts TCP connections (the nodes' containerd pulling through
// the mirror nuv configures, pods using the cluster-network host) and relays each, byte for byte,
// to the registry's unix socket, whose directory the container bind-mounts. The registry itself
// stays one process on the host, listening on 127.0.0.1 and on that socket.
//
//	nuv-registry-relay serve --listen :5000 --socket /run/nuv-registry/registry.sock
//	nuv-registry-relay probe http://HOST:5000/v2/
//
// probe exits 0 when the URL answers 200 (a health check from inside the network).
//
// It uses the standard library only: nuv builds it from this one file, offline.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		listen := fs.String("listen", ":5000", "TCP address to accept connections on")
		socket := fs.String("socket", "/run/nuv-registry/registry.sock", "the registry's unix socket")
		fs.Parse(os.Args[2:])
		if err := serve(*listen, *socket); err != nil {
			fmt.Fprintln(os.Stderr, "nuv-registry-relay:", err)
			os.Exit(1)
		}
	case "probe":
		if len(os.Args) != 3 {
			usage()
		}
		if err := probe(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "nuv-registry-relay probe:", err)
			os.Exit(1)
		}
		fmt.Println("OK", os.Args[2])
	case "-v", "--version":
		fmt.Println("nuv-registry-relay")
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: nuv-registry-relay serve [--listen ADDR] [--socket PATH] | probe URL")
	os.Exit(2)
}

func serve(listen, socket string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "nuv-registry-relay: %s -> unix:%s\n", ln.Addr(), socket)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigs
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return err
		}
		go relay(c, socket)
	}
}

// relay copies both ways between the client and a new connection to the registry's socket; each
// direction's end is passed on as a half-close, so a client that finished sending still gets the
// whole answer.
func relay(client net.Conn, socket string) {
	defer client.Close()
	up, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		// The registry is not running (nuv registry up starts it): the client sees the connection close.
		fmt.Fprintf(os.Stderr, "nuv-registry-relay: %s: registry not reachable: %v\n", client.RemoteAddr(), err)
		return
	}
	defer up.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); pipe(up, client) }()
	go func() { defer wg.Done(); pipe(client, up) }()
	wg.Wait()
}

type halfCloser interface{ CloseWrite() error }

func pipe(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if hc, ok := dst.(halfCloser); ok {
		hc.CloseWrite()
	} else {
		dst.Close()
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		// a reset by either side ends both directions
		src.Close()
		dst.Close()
	}
}

func probe(url string) error {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered HTTP %d", url, resp.StatusCode)
	}
	return nil
}

package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// runLB is the small TCP load balancer that stands in front of the apiservers of an HA cluster (the
// local stand-in for an HAProxy machine): round robin over the backends that accept connections,
// failing over to the next one when a dial fails, with a background health check.
func runLB(args []string) int {
	fs := flag.NewFlagSet("lb", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	var backends multiFlag
	fs.Var(&backends, "backend", "backend address host:port (repeatable)")
	fs.String("state-dir", "", "cluster state directory (recorded for process identification)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(backends) == 0 {
		fmt.Fprintln(os.Stderr, "nuv-kube lb: at least one --backend is required")
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nuv-kube lb: %v\n", err)
		return 1
	}
	b := newBalancer(backends)
	go b.healthLoop()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sig; ln.Close() }()
	fmt.Fprintf(os.Stderr, "nuv-kube lb: listening on %s, backends %s\n", ln.Addr(), strings.Join(backends, ","))
	for {
		c, err := ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return 0
		}
		go b.serve(c)
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type balancer struct {
	backends []string
	next     atomic.Uint64
	mu       sync.Mutex
	down     map[string]bool
}

func newBalancer(backends []string) *balancer {
	return &balancer{backends: backends, down: map[string]bool{}}
}

// order returns the backends to try for one connection: healthy ones first, round robin.
func (b *balancer) order() []string {
	n := len(b.backends)
	start := int(b.next.Add(1) % uint64(n))
	var up, down []string
	b.mu.Lock()
	for i := 0; i < n; i++ {
		be := b.backends[(start+i)%n]
		if b.down[be] {
			down = append(down, be)
		} else {
			up = append(up, be)
		}
	}
	b.mu.Unlock()
	return append(up, down...)
}

func (b *balancer) mark(be string, isDown bool) {
	b.mu.Lock()
	if b.down[be] != isDown {
		state := "up"
		if isDown {
			state = "down"
		}
		fmt.Fprintf(os.Stderr, "nuv-kube lb: backend %s %s\n", be, state)
	}
	b.down[be] = isDown
	b.mu.Unlock()
}

func (b *balancer) healthLoop() {
	for {
		for _, be := range b.backends {
			c, err := net.DialTimeout("tcp", be, 500*time.Millisecond)
			if err == nil {
				c.Close()
			}
			b.mark(be, err != nil)
		}
		time.Sleep(time.Second)
	}
}

func (b *balancer) serve(c net.Conn) {
	defer c.Close()
	var up net.Conn
	for _, be := range b.order() {
		var err error
		up, err = net.DialTimeout("tcp", be, 2*time.Second)
		if err == nil {
			break
		}
		b.mark(be, true)
	}
	if up == nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
}

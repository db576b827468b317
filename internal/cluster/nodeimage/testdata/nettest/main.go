// Command nettest is the workload of the node image's network tests: `nettest serve ADDR` answers
// every HTTP request with its pod's name; `nettest get URL...` fetches each URL (resolving names
// through the pod's DNS), prints the answers and exits 1 on the first failure.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: nettest serve ADDR | nettest get URL...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		name, _ := os.Hostname()
		err := http.ListenAndServe(os.Args[2], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s\n", name)
		}))
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	case "get":
		client := &http.Client{Timeout: 10 * time.Second}
		for _, u := range os.Args[2:] {
			if err := get(client, u); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", u, err)
				os.Exit(1)
			}
		}
	}
}

func get(client *http.Client, u string) error {
	pu, err := url.Parse(u)
	if err != nil {
		return err
	}
	var last error
	for attempt := 0; attempt < 20; attempt++ {
		addrs, err := net.DefaultResolver.LookupHost(context.Background(), pu.Hostname())
		if err != nil {
			last = err
			time.Sleep(time.Second)
			continue
		}
		resp, err := client.Get(u)
		if err != nil {
			last = err
			time.Sleep(time.Second)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s (%v) -> %d %s", u, addrs, resp.StatusCode, body)
		return nil
	}
	return last
}

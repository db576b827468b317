// Command netcheck is the workload of nuv's kind tests: it answers every HTTP request on :8080
// with the name of its node (NODE_NAME) and, when PEER names a Service, resolves that name through
// the cluster's DNS and fetches it until it answers, printing
//
//	REACHED <peer> <resolved addresses> -> <the answering pod's node>
//
// so a test reading the pod's log sees DNS and pod-to-pod traffic work from this node.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	node := os.Getenv("NODE_NAME")
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, node) })
	go func() {
		if err := http.ListenAndServe(":8080", nil); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
	}()
	peer := os.Getenv("PEER")
	if peer == "" {
		select {}
	}
	client := &http.Client{Timeout: 3 * time.Second}
	for {
		if msg, err := check(client, peer); err != nil {
			fmt.Println("waiting:", err)
		} else {
			fmt.Println(msg)
			select {}
		}
		time.Sleep(time.Second)
	}
}

func check(client *http.Client, peer string) (string, error) {
	addrs, err := net.LookupHost(peer)
	if err != nil {
		return "", err
	}
	resp, err := client.Get("http://" + peer + ":8080/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("REACHED %s %s -> %s", peer, strings.Join(addrs, ","), b), nil
}

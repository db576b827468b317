package upgrade

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/nuv-dev/nuv/internal/kube"
)

// ProbeAction is the name of the action the data probe writes (in the key's own namespace).
const ProbeAction = "nuv-upgrade-probe"

// controllerPort is the whisk-controller's API port in its pods.
const controllerPort = 8080

// Probe is a document written to the instance's store before the upgrade: an action created
// through the reference workload's controller API (which keeps actions in CouchDB), carrying a
// random token that must be read back after the upgrade.
type Probe struct {
	Namespace, Whisk string
	token            string
	auth             string // "<uuid>:<key>", never printed
}

// ErrNotCheckable is wrapped by Seed when the data cannot be checked on this cluster (no
// controller, or its pods run on simulated nodes where no container runs); the message says why.
var ErrNotCheckable = errors.New("data not checkable")

// Seed writes the probe action through a Running and Ready controller pod of Whisk ns/whisk.
func Seed(ctx context.Context, cfg *rest.Config, dyn dynamic.Interface, ns, whisk string, timeout time.Duration) (*Probe, error) {
	w, err := dyn.Resource(WhiskGVR).Namespace(ns).Get(ctx, whisk, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("Whisk %s/%s: %w", ns, whisk, err)
	}
	for _, c := range []string{"controller", "couchdb"} {
		if on, _, _ := unstructured.NestedBool(w.Object, "spec", c, "enabled"); !on {
			return nil, fmt.Errorf("%w: Whisk %s/%s has no %s", ErrNotCheckable, ns, whisk, c)
		}
	}
	secret, _, _ := unstructured.NestedString(w.Object, "spec", "controller", "authSecret")
	if secret == "" {
		secret = whisk + "-controller-auth"
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, secret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the controller's API key (Secret %s/%s): %w", ns, secret, err)
	}
	auth := string(sec.Data["auth"])
	if !strings.Contains(auth, ":") {
		return nil, fmt.Errorf("the controller's API key (Secret %s/%s, key auth) is not <uuid>:<key>", ns, secret)
	}
	tok := make([]byte, 12)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	p := &Probe{Namespace: ns, Whisk: whisk, token: hex.EncodeToString(tok), auth: auth}
	body, _ := json.Marshal(map[string]any{"exec": map[string]string{"kind": "nodejs:20",
		"code": "function main() { return {probe: '" + p.token + "'} } // written by nuv before an operator upgrade"}})
	err = p.retry(ctx, cfg, cs, timeout, func(base string) (bool, error) {
		code, resp, err := p.call(ctx, http.MethodPut, base+"?overwrite=true", body)
		if err != nil {
			return false, err
		}
		if code != http.StatusOK {
			return false, fmt.Errorf("PUT action %s: HTTP %d %s", ProbeAction, code, firstLine(resp))
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Check reads the probe action back; kept is false when the controller answers that it does not
// exist (the store lost it). Transient failures (a pod rolling, the store starting) are retried
// within timeout.
func (p *Probe) Check(ctx context.Context, cfg *rest.Config, timeout time.Duration) (kept bool, err error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	err = p.retry(ctx, cfg, cs, timeout, func(base string) (bool, error) {
		code, resp, err := p.call(ctx, http.MethodGet, base, nil)
		switch {
		case err != nil:
			return false, err
		case code == http.StatusNotFound:
			kept = false
			return true, nil
		case code != http.StatusOK:
			return false, fmt.Errorf("GET action %s: HTTP %d %s", ProbeAction, code, firstLine(resp))
		}
		kept = bytes.Contains(resp, []byte(p.token))
		return true, nil
	})
	return kept, err
}

// retry runs fn against a port-forward to a ready controller pod until it is done or timeout ends.
func (p *Probe) retry(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, timeout time.Duration, fn func(base string) (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		pod, err := readyController(ctx, cs, p.Namespace, p.Whisk)
		if errors.Is(err, ErrNotCheckable) {
			return err
		}
		if err == nil {
			var done bool
			err = withForward(ctx, cfg, cs, p.Namespace, pod, controllerPort, func(port int) error {
				var ferr error
				done, ferr = fn(fmt.Sprintf("http://127.0.0.1:%d/api/v1/namespaces/_/actions/%s", port, ProbeAction))
				return ferr
			})
			if err == nil && done {
				return nil
			}
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("the controller of Whisk %s/%s did not answer within %s: %w", p.Namespace, p.Whisk, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// call makes one request to the controller API with the key (basic auth).
func (p *Probe) call(ctx context.Context, method, url string, body []byte) (int, []byte, error) {
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	user, key, _ := strings.Cut(p.auth, ":")
	req.SetBasicAuth(user, key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, ProbeAction, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, data, err
}

// readyController is a Running and Ready controller pod of the Whisk on a node that runs
// containers; ErrNotCheckable when all its pods are on simulated nodes.
func readyController(ctx context.Context, cs kubernetes.Interface, ns, whisk string) (string, error) {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + whisk + ",app.kubernetes.io/component=controller"})
	if err != nil {
		return "", fmt.Errorf("controller pods of Whisk %s/%s: %w", ns, whisk, err)
	}
	simulated := 0
	for _, pod := range pods.Items {
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			continue
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("node %s: %w", pod.Spec.NodeName, err)
		}
		if kube.Simulated(node) {
			simulated++
			continue
		}
		if pod.Status.Phase == corev1.PodRunning && podReady(&pod) {
			return pod.Name, nil
		}
	}
	if simulated > 0 && simulated == len(pods.Items) {
		return "", fmt.Errorf("%w: the Whisk's pods run on simulated nodes (no container runs there)", ErrNotCheckable)
	}
	return "", fmt.Errorf("no Running and Ready controller pod of Whisk %s/%s yet", ns, whisk)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// withForward forwards a loopback port to port of pod for the duration of fn (port-forward over
// WebSockets, falling back to SPDY for an API server that lacks it, as kubectl does).
func withForward(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod string, port int, fn func(local int) error) error {
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, u)
	if ws, err := portforward.NewSPDYOverWebsocketDialer(u, cfg); err == nil {
		dialer = portforward.NewFallbackDialer(ws, dialer, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
	}
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	defer func() { close(stop); <-errc }()
	select {
	case <-ready:
	case err := <-errc:
		errc <- err // for the deferred receive
		return fmt.Errorf("port-forward to pod %s/%s: %w", ns, pod, err)
	case <-ctx.Done():
		return ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		return fmt.Errorf("port-forward to pod %s/%s: no local port: %v", ns, pod, err)
	}
	return fn(int(ports[0].Local))
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

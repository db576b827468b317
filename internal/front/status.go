package front

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy/rendercache"
	"github.com/nuv-dev/nuv/internal/deploy/statusview"
	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

// `nuv status` is answered here when what the full program (package deploy) would need kustomize,
// a clientset and API discovery for is at hand:
//
//   - the cluster, its type and where it came from: package kube, as the full program resolves it
//     (a type not known yet is detected and remembered the same way, with one GET of the nodes);
//   - which local cluster it is: one GET of the nodes labelled nuv.dev/provider=local;
//   - the operator's Deployments: the record the full program left of its last render of the same
//     operator/config with the same image choice (package rendercache), each read with one GET;
//   - the host-run operator of a local cluster: its pid file;
//   - the Whisks: one GET of the list.
//
// The report is built and printed by package statusview, as in the full program. Anything else is
// a miss and the command goes to the full program, nothing printed: no record for this render
// (never rendered here, operator/config or the image choice changed since), a Deployment that is
// not apps/v1, a cluster that cannot be resolved or does not answer within statusBudget, any API
// answer other than the object, the list or a plain "not found", a .env that does not parse, -h,
// --json, --timeout or any other flag or argument than -o table|wide|json|yaml and --kubeconfig.
// A failure is the full program's to word.

// statusBudget bounds the front's API calls for `nuv status`; past it the full program asks again
// (with its own, longer, bounds) and words the failure.
const statusBudget = 3 * time.Second

// answerStatus answers `nuv status ARGS` when it can; ok false: hand the command to the full
// program, nothing printed.
func answerStatus(ctx context.Context, env *cli.Env, args []string) (a answer, ok bool) {
	fs := pflag.NewFlagSet("nuv status", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var output cli.OutputOption
	output.AddFlags(fs)
	var sel cli.ClusterOption
	sel.AddFlags(fs)
	if fs.Parse(args) != nil || fs.Changed("json") || fs.NArg() > 0 {
		return answer{}, false
	}
	r, ok := statusReport(ctx, env, sel.Kubeconfig)
	if !ok {
		return answer{}, false
	}
	var b bytes.Buffer
	if err := statusview.Write(&b, &output, r); err != nil {
		return answer{}, false
	}
	return answer{out: b.Bytes()}, true
}

// statusReport reads the report of `nuv status` as deploy.StatusOf does; ok false on any miss.
func statusReport(ctx context.Context, env *cli.Env, kubeconfig string) (*statusview.Report, bool) {
	getenv := env.Getenv
	project := paths.Project(getenv, env.Dir)
	home, err := paths.Home(getenv)
	if err != nil || project == "" {
		return nil, false
	}
	t, err := kube.Resolve(project, kubeconfig, getenv)
	if err != nil {
		return nil, false
	}
	if _, err := dotenv.Dir(project); err != nil { // the full program reads it to mask secrets
		return nil, false
	}
	cfg, err := kube.RESTConfig(t.Kubeconfig)
	if err != nil {
		return nil, false
	}
	// The render's record first: without it there is nothing to ask the API.
	cfgDir := rendercache.ConfigDir(project, getenv)
	key, err := rendercache.Key(cfgDir, project, t.Name, getenv)
	if err != nil {
		return nil, false
	}
	deployments, ok := rendercache.Load(rendercache.Dir(getenv), key)
	if !ok {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, statusBudget)
	defer cancel()
	if t.Type == "" {
		if err := t.Detect(ctx, cfg); err != nil {
			return nil, false
		}
	}
	localName, ok := localClusterName(ctx, cfg)
	if !ok {
		return nil, false
	}
	if localName == "" && t.Type == kube.TypeLocal {
		localName = t.Name
	}
	r := statusview.New(statusview.Cluster{Name: t.Name, Type: t.Type, Server: cfg.Host, Source: t.Origin()})
	for _, d := range deployments {
		if d.APIVersion != "apps/v1" || d.Kind != "Deployment" {
			return nil, false
		}
		ns := d.Namespace
		if ns == "" {
			ns = "default" // as the full program sets it on a namespaced kind
		}
		var cur unstructured.Unstructured
		found, ok := getObject(ctx, cfg, "/apis/apps/v1/namespaces/"+url.PathEscape(ns)+"/deployments/"+url.PathEscape(d.Name), d.Name, "deployments", &cur)
		if !ok {
			return nil, false
		}
		ref := "deployment " + ns + "/" + d.Name
		if found {
			r.Operator = append(r.Operator, statusview.OperatorOf(ref, &cur))
		} else {
			r.Operator = append(r.Operator, statusview.OperatorOf(ref, nil))
		}
	}
	r.OperatorRead = true
	if localName != "" {
		r.Host = statusview.HostOf(home, localName)
	}
	var whisks unstructured.UnstructuredList
	found, ok := getObject(ctx, cfg, "/apis/nuv.dev/v1alpha1/whisks", "", "", &whisks)
	if !ok {
		return nil, false
	}
	if found {
		for i := range whisks.Items {
			r.Whisks = append(r.Whisks, statusview.WhiskOf(&whisks.Items[i]))
		}
	}
	r.WhisksRead = true
	return r, true
}

// localClusterName is the nuv local cluster cfg talks to (the nuv.dev/cluster label of a node
// labelled nuv.dev/provider=local, "local" when that label is empty), "" when none is; as
// kubeclient.LocalClusterName reads it.
func localClusterName(ctx context.Context, cfg *rest.Config) (string, bool) {
	code, body, err := kube.Get(ctx, cfg, "/api/v1/nodes", url.Values{"labelSelector": {kube.LabelProvider + "=local"}, "limit": {"1"}})
	if err != nil || code != http.StatusOK {
		return "", false
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if json.Unmarshal(body, &list) != nil || list.Kind != "NodeList" {
		return "", false
	}
	if len(list.Items) == 0 {
		return "", true
	}
	if name := list.Items[0].Metadata.Labels[kube.LabelCluster]; name != "" {
		return name, true
	}
	return kube.TypeLocal, true
}

// getObject GETs path into into (decoded as client-go's dynamic client decodes it); found false on
// the API's "not found" of the object name of resource, or (name "") on any 404 of a list (a kind
// the cluster does not serve, which the full program reads as an empty Whisk list). ok false on
// anything else.
func getObject(ctx context.Context, cfg *rest.Config, path, name, resource string, into interface{ UnmarshalJSON([]byte) error }) (found, ok bool) {
	code, body, err := kube.Get(ctx, cfg, path, nil)
	if err != nil {
		return false, false
	}
	switch code {
	case http.StatusOK:
		return true, into.UnmarshalJSON(body) == nil
	case http.StatusNotFound:
		if name == "" {
			// A list: the API answers a kind it does not serve with a bare 404 ("404 page not
			// found"), which the dynamic client reports as NotFound, and the full program as none.
			return false, true
		}
		var st struct {
			Kind    string `json:"kind"`
			Reason  string `json:"reason"`
			Details struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			} `json:"details"`
		}
		if json.Unmarshal(body, &st) != nil || st.Kind != "Status" || st.Reason != "NotFound" {
			return false, false
		}
		if name != "" && (st.Details.Name != name || st.Details.Kind != resource) {
			return false, false // the kind is not served: the full program says so
		}
		return false, true
	}
	return false, false
}

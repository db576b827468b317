package testverbs

import (
	"encoding/json"
	"os"

	"github.com/nuv-dev/nuv/internal/report"
)

// touch appends objects to the touched-objects file all-kubes names ($NUV_TOUCHED), so a failed
// cluster's artifacts hold their YAML. Outside all-kubes it does nothing.
func touch(getenv func(string) string, objs ...report.TouchedObject) {
	path := getenv(report.EnvTouched)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	for _, o := range objs {
		line, _ := json.Marshal(o)
		f.Write(append(line, '\n'))
	}
}

// operatorObjects are the operator's own objects dtest deploys.
var operatorObjects = []report.TouchedObject{
	{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "nuv-system", Name: "whisk-operator"},
	{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "whisks.nuv.dev"},
}

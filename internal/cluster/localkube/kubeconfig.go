package localkube

import (
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nuv-dev/nuv/internal/cluster/kit"
)

// kubeconfigFor renders a kubeconfig for server authenticated with the client certificate user
// (a base name in the PKI directory), with every credential embedded.
func kubeconfigFor(pkiDir, contextName, server, user string) ([]byte, error) {
	ca, err := readPEM(pkiDir, "ca.crt")
	if err != nil {
		return nil, err
	}
	crt, err := readPEM(pkiDir, user+".crt")
	if err != nil {
		return nil, err
	}
	key, err := readPEM(pkiDir, user+".key")
	if err != nil {
		return nil, err
	}
	return kit.Kubeconfig{Context: contextName, Server: server, CA: ca,
		User: clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}}.Render()
}

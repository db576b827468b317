package local

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("render kubeconfig: %w", err)
	}
	return b, nil
}

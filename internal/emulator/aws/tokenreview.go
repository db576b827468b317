package aws

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	authv1 "k8s.io/api/authentication/v1"

	"github.com/nuv-dev/nuv/internal/eksauth"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// tokenReview is the TokenReview webhook (authentication.k8s.io/v1) the control plane of EKS
// cluster `cluster` calls, as EKS's API servers call aws-iam-authenticator: it accepts tokens
// made by eksauth.NewToken with the emulator's credentials for this cluster, signed less than 15
// minutes ago, and maps the caller to a user in system:masters (the cluster creator's access).
func (s *Server) tokenReview(w http.ResponseWriter, r *http.Request, cluster string) {
	emucore.ServeTokenReview(w, r, "nuv emulator", func(token string) authv1.TokenReviewStatus {
		status, err := s.review(token, cluster, r.Host)
		if err != nil {
			s.Log.V(1).Infof("emulator: token for EKS cluster %s refused: %v", cluster, err)
			status = authv1.TokenReviewStatus{Authenticated: false, Error: err.Error()}
		}
		return status
	}, writeJSON)
}

// review validates an EKS token for cluster.
func (s *Server) review(token, cluster, emulatorHost string) (authv1.TokenReviewStatus, error) {
	s.Mu.Lock()
	c := s.St.EKS.Clusters[cluster]
	key, secret, account, userID, arn := s.St.AccessKeyID, s.St.SecretAccessKey, s.St.Account, s.St.UserID, s.St.callerARN()
	s.Mu.Unlock()
	if c == nil {
		return authv1.TokenReviewStatus{}, fmt.Errorf("no EKS cluster %s in the emulator", cluster)
	}
	u, err := eksauth.ParseToken(token)
	if err != nil {
		return authv1.TokenReviewStatus{}, err
	}
	if u.Host != emulatorHost {
		return authv1.TokenReviewStatus{}, fmt.Errorf("the token is presigned for STS at %s, not this emulator (%s)", u.Host, emulatorHost)
	}
	req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	req.Host = u.Host
	req.Header.Set(eksauth.ClusterIDHeader, cluster)
	sig, err := parseSigV4(req)
	if err != nil {
		return authv1.TokenReviewStatus{}, err
	}
	if sig.Service != "sts" {
		return authv1.TokenReviewStatus{}, fmt.Errorf("the token is signed for service %q, not sts", sig.Service)
	}
	if sig.AccessKey != key {
		return authv1.TokenReviewStatus{}, fmt.Errorf("the token is signed with an access key the emulator did not issue")
	}
	// The authenticator's rule: a token is good for 15 minutes after signing, whatever X-Amz-Expires says.
	sig.Expires = eksauth.Lifetime
	if err := sig.verify(req, nil, secret, time.Now()); err != nil {
		if strings.Contains(err.Error(), "SignatureDoesNotMatch") {
			return authv1.TokenReviewStatus{}, fmt.Errorf("the token's signature does not match (made for another cluster than %s, or with other credentials)", cluster)
		}
		return authv1.TokenReviewStatus{}, err
	}
	return authv1.TokenReviewStatus{
		Authenticated: true,
		User: authv1.UserInfo{
			Username: arn,
			UID:      "aws-iam-authenticator:" + account + ":" + userID,
			Groups:   []string{"system:masters", "system:authenticated"},
			Extra: map[string]authv1.ExtraValue{
				"arn":          {arn},
				"canonicalArn": {arn},
				"accessKeyId":  {key},
				"principalId":  {userID},
			},
		},
	}, nil
}

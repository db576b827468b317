package gcp

import (
	"net/http"
	"time"

	authv1 "k8s.io/api/authentication/v1"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

const tokenReviewPath = "gke/token-review/"

// tokenReview is the TokenReview webhook (authentication.k8s.io/v1) the control plane of a GKE
// cluster calls about bearer tokens: it accepts the access tokens the emulator's token endpoint
// issued and not yet expired (what `nuv -gke-token` gets through ADC, as gke-gcloud-auth-plugin
// does), and maps their service account to a user in system:masters (the project owner's access).
func (s *Server) tokenReview(w http.ResponseWriter, r *http.Request, local string) {
	emucore.ServeTokenReview(w, r, "nuv GKE emulator", func(token string) authv1.TokenReviewStatus {
		st := authv1.TokenReviewStatus{}
		s.Mu.Lock()
		known := false
		for _, c := range s.St.Clusters {
			known = known || LocalName(c.C.Location, c.C.Name) == local
		}
		sub, terr := s.checkToken(token, time.Now())
		s.Mu.Unlock()
		switch {
		case !known:
			st.Error = "no GKE cluster behind control plane " + local + " in the emulator"
		case terr != nil:
			st.Error = terr.Error()
		default:
			st = authv1.TokenReviewStatus{Authenticated: true, User: authv1.UserInfo{Username: sub, UID: sub,
				Groups: []string{"system:masters", "system:authenticated"}}}
		}
		if st.Error != "" {
			s.Log.V(1).Infof("GKE emulator: token for control plane %s refused: %s", local, st.Error)
		}
		return st
	}, writeJSON)
}

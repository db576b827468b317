package emucore

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServeTokenReview is the TokenReview webhook (authentication.k8s.io/v1) that an emulated
// cluster's API server calls about a bearer token: it takes the POSTed review, asks review about
// its token, and answers the status (Error set when review refuses it). name starts the error
// answers ("nuv emulator"); writeJSON writes the emulator's JSON.
func ServeTokenReview(w http.ResponseWriter, r *http.Request, name string, review func(token string) authv1.TokenReviewStatus, writeJSON func(http.ResponseWriter, int, any)) {
	if r.Method != http.MethodPost {
		http.Error(w, name+": the token webhook takes POST", http.StatusMethodNotAllowed)
		return
	}
	if !JSONBody(w, r, name) {
		return
	}
	var in authv1.TokenReview
	b, err := ReadBody(r, 1<<20)
	var tooLarge *BodyTooLargeError
	if errors.As(err, &tooLarge) {
		http.Error(w, name+": token webhook: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		http.Error(w, name+": token webhook: not a TokenReview: "+fmt.Sprint(err), http.StatusBadRequest)
		return
	}
	out := authv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"}, Status: review(in.Spec.Token)}
	writeJSON(w, http.StatusOK, out)
}

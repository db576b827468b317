package aks

import (
	"errors"
	"testing"
)

func TestVersionAs(t *testing.T) {
	for _, tc := range []struct{ asked, current, want, out string }{
		{"1.35", "1.35.5", "1.35", "1.35"},     // the spec's minor, the cluster on its latest patch
		{"1.35", "1.35.5", "1.35.5", "1.35.5"}, // the spec pins the patch the cluster runs
		{"1.35", "1.35.5", "1.36", "1.35"},     // an upgrade: shown as the spec wrote the old one
		{"1.35.3", "1.35.3", "1.35", "1.35"},
		{"1.35", "1.35.5", "", "1.35"},
		{"", "1.36.3", "1.36", "1.36"},
		{"", "1.36.3", "1.35", "1.36.3"},
	} {
		if got := versionAs(tc.asked, tc.current, tc.want); got != tc.out {
			t.Errorf("versionAs(%q, %q, %q) = %q, want %q", tc.asked, tc.current, tc.want, got, tc.out)
		}
	}
}

func TestFirstLine(t *testing.T) {
	err := errors.New("ClientSecretCredential authentication failed. \nPOST https://x/t/oauth2/v2.0/token\n--------\nRESPONSE 401: 401 Unauthorized\n{\n  \"error\": \"invalid_client\",\n  \"error_description\": \"AADSTS7000215: Invalid client secret provided. Ensure...\"\n}\n")
	if got, want := firstLine(err), "ClientSecretCredential authentication failed. AADSTS7000215: Invalid client secret provided. Ensure..."; got != want {
		t.Errorf("firstLine = %q, want %q", got, want)
	}
	if got := firstLine(errors.New("az is not installed")); got != "az is not installed" {
		t.Errorf("firstLine = %q", got)
	}
}

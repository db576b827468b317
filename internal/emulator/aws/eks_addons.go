package aws

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// addonVersion is one version of an EKS add-on: the Kubernetes minors it runs on and those it is
// the default for.
type addonVersion struct {
	Version    string
	From, To   int // minor versions, inclusive
	DefaultFor []int
}

// addonCatalog is the emulated EKS add-on catalogue (the emulator's own table, shaped like what
// DescribeAddonVersions reports: several versions per add-on, one default per Kubernetes version).
var addonCatalog = lazy.Value[map[string][]addonVersion]{New: func() map[string][]addonVersion {
	return map[string][]addonVersion{
		"vpc-cni": {
			{"v1.18.6-eksbuild.1", 30, 33, nil},
			{"v1.19.6-eksbuild.7", 30, 36, []int{30, 31, 32}},
			{"v1.20.4-eksbuild.2", 31, 36, []int{33, 34, 35, 36}},
		},
		"coredns": {
			{"v1.11.3-eksbuild.2", 30, 31, []int{30, 31}},
			{"v1.11.4-eksbuild.14", 32, 32, []int{32}},
			{"v1.12.1-eksbuild.2", 33, 34, []int{33}},
			{"v1.12.3-eksbuild.1", 34, 35, []int{34}},
			{"v1.12.4-eksbuild.1", 35, 36, []int{35, 36}},
		},
		"kube-proxy": {
			{"v1.30.14-eksbuild.8", 30, 30, []int{30}},
			{"v1.31.13-eksbuild.2", 31, 31, []int{31}},
			{"v1.32.9-eksbuild.2", 32, 32, []int{32}},
			{"v1.33.5-eksbuild.2", 33, 33, []int{33}},
			{"v1.34.1-eksbuild.2", 34, 34, []int{34}},
			{"v1.35.0-eksbuild.3", 35, 35, []int{35}},
			{"v1.36.0-eksbuild.1", 36, 36, []int{36}},
		},
		"eks-pod-identity-agent": {
			{"v1.3.8-eksbuild.2", 30, 36, []int{30, 31, 32, 33, 34, 35, 36}},
		},
		"aws-ebs-csi-driver": {
			{"v1.48.0-eksbuild.2", 30, 36, nil},
			{"v1.50.1-eksbuild.1", 30, 36, []int{30, 31, 32, 33, 34, 35, 36}},
		},
	}
}}

var addonTypes = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{"vpc-cni": "networking", "coredns": "networking", "kube-proxy": "networking",
		"eks-pod-identity-agent": "security", "aws-ebs-csi-driver": "storage"}
}}

// checkAddonVersion returns the version to install (the default when v is empty) of add-on name on
// a cluster at Kubernetes version k, or EKS's InvalidParameterException.
func checkAddonVersion(name, v, k string) (string, error) {
	versions, ok := addonCatalog.Get()[name]
	if !ok {
		return "", errf(400, "InvalidParameterException", "Addon %s specified is not supported in %s kubernetes version (available: %s)", name, k, strings.Join(sortedKeys(addonCatalog.Get()), ", "))
	}
	m := minorOf(k)
	var valid []string
	for _, av := range versions {
		if m < av.From || m > av.To {
			continue
		}
		valid = append(valid, av.Version)
		if v == "" {
			for _, d := range av.DefaultFor {
				if d == m {
					return av.Version, nil
				}
			}
		} else if v == av.Version {
			return v, nil
		}
	}
	if v == "" {
		return "", errf(400, "InvalidParameterException", "Addon %s has no version for Kubernetes %s", name, k)
	}
	return "", errf(400, "InvalidParameterException", "Addon version %s specified is not supported in %s kubernetes version (valid: %s)", v, k, strings.Join(valid, ", "))
}

func (s *Server) eksDescribeAddonVersions(r *eksRequest) (any, error) {
	k := r.query("kubernetesVersion")
	if k != "" && !supportedVersion(k) {
		return nil, errf(400, "InvalidParameterException", "unsupported Kubernetes version %s (this EKS offers %s)", k, strings.Join(EKSVersions, ", "))
	}
	names := sortedKeys(addonCatalog.Get())
	if n := r.query("addonName"); n != "" {
		if _, ok := addonCatalog.Get()[n]; !ok {
			return nil, errf(404, "ResourceNotFoundException", "Addon %s not found", n).with("addonName", n)
		}
		names = []string{n}
	}
	page, next, err := paginate(names, r.query("maxResults"), r.query("nextToken"))
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, n := range page {
		var versions []map[string]any
		// Newest first, as EKS lists them.
		vs := addonCatalog.Get()[n]
		for i := len(vs) - 1; i >= 0; i-- {
			av := vs[i]
			var compat []map[string]any
			for m := av.To; m >= av.From; m-- {
				cv := fmt.Sprintf("1.%d", m)
				if k != "" && cv != k {
					continue
				}
				def := false
				for _, d := range av.DefaultFor {
					def = def || d == m
				}
				compat = append(compat, map[string]any{"clusterVersion": cv, "platformVersions": []string{"*"}, "defaultVersion": def})
			}
			if len(compat) == 0 {
				continue
			}
			versions = append(versions, map[string]any{"addonVersion": av.Version, "architecture": []string{"amd64", "arm64"},
				"compatibilities": compat, "requiresConfiguration": false})
		}
		out = append(out, map[string]any{"addonName": n, "type": addonTypes.Get()[n], "addonVersions": versions, "publisher": "eks", "owner": "aws"})
	}
	return map[string]any{"addons": out, "nextToken": next}, nil
}

func (s *Server) addon(r *eksRequest) (*eksCluster, *eksAddon, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, nil, err
	}
	a := c.Addons[r.segs[3]]
	if a == nil {
		return nil, nil, errf(404, "ResourceNotFoundException", "No addon: %s found in cluster: %s", r.segs[3], c.Name).with("clusterName", c.Name).with("addonName", r.segs[3])
	}
	return c, a, nil
}

func (s *Server) eksCreateAddon(r *eksRequest) (any, error) {
	c, err := s.activeCluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	var in struct {
		AddonName             string            `json:"addonName"`
		AddonVersion          string            `json:"addonVersion"`
		ServiceAccountRoleArn string            `json:"serviceAccountRoleArn"`
		ConfigurationValues   string            `json:"configurationValues"`
		Tags                  map[string]string `json:"tags"`
	}
	if err := r.decode(&in); err != nil {
		return nil, err
	}
	name := c.Name
	if c.Addons[in.AddonName] != nil {
		return nil, errf(409, "ResourceInUseException", "Addon already exists.").with("clusterName", name).with("addonName", in.AddonName)
	}
	v, err := checkAddonVersion(in.AddonName, in.AddonVersion, c.Version)
	if err != nil {
		return nil, err.(*apiError).with("clusterName", name).with("addonName", in.AddonName)
	}
	if in.ConfigurationValues != "" && !json.Valid([]byte(in.ConfigurationValues)) && !strings.Contains(in.ConfigurationValues, ":") {
		return nil, errf(400, "InvalidParameterException", "ConfigurationValue provided in request is not supported: not JSON or YAML").with("clusterName", name).with("addonName", in.AddonName)
	}
	if in.Tags == nil {
		in.Tags = map[string]string{}
	}
	a := &eksAddon{Name: in.AddonName, Cluster: name, Status: "CREATING", Version: v,
		ARN: s.eksARN("addon", name+"/"+in.AddonName+"/"+uuid()), CreatedAt: now(), ModifiedAt: now(),
		ServiceAccountRoleARN: in.ServiceAccountRoleArn, ConfigurationValues: in.ConfigurationValues, Publisher: "eks", Owner: "aws", Tags: in.Tags,
		Due: s.due()}
	c.Addons[in.AddonName] = a
	return map[string]any{"addon": a.wire()}, nil
}

func (s *Server) eksListAddons(r *eksRequest) (any, error) {
	c, err := s.cluster(r.segs[1])
	if err != nil {
		return nil, err
	}
	return r.page(sortedKeys(c.Addons), "addons")
}

func (s *Server) eksDescribeAddon(r *eksRequest) (any, error) {
	_, a, err := s.addon(r)
	if err != nil {
		return nil, err
	}
	return map[string]any{"addon": a.wire()}, nil
}

func (s *Server) eksUpdateAddon(r *eksRequest) (any, error) {
	c, a, err := s.addon(r)
	if err != nil {
		return nil, err
	}
	if a.Status != "ACTIVE" && a.Status != "DEGRADED" {
		return nil, errf(409, "ResourceInUseException", "Addon %s is in %s status; it can be updated when ACTIVE", a.Name, a.Status).with("clusterName", c.Name).with("addonName", a.Name)
	}
	var in struct {
		AddonVersion string `json:"addonVersion"`
	}
	if err := r.decode(&in); err != nil {
		return nil, err
	}
	var p []eksParam
	if in.AddonVersion != "" {
		if _, err := checkAddonVersion(a.Name, in.AddonVersion, c.Version); err != nil {
			return nil, err.(*apiError).with("clusterName", c.Name).with("addonName", a.Name)
		}
		p = append(p, eksParam{"AddonVersion", in.AddonVersion})
	}
	a.Status, a.ModifiedAt = "UPDATING", now()
	u := s.newUpdate(c, "AddonUpdate", p, r.body, "", a.Name)
	a.Due = u.Due
	return map[string]any{"update": u.wire()}, nil
}

func (s *Server) eksDeleteAddon(r *eksRequest) (any, error) {
	_, a, err := s.addon(r)
	if err != nil {
		return nil, err
	}
	if a.Status != "DELETING" {
		a.Status, a.ModifiedAt, a.Due = "DELETING", now(), s.due()
	}
	return map[string]any{"addon": a.wire()}, nil
}

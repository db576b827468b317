package aks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	acs "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/lazy"
)

func normalizeLocation(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }

// checkOffer asks the service whether it offers what the spec names: the region (the resource
// provider's locations of managedClusters), the Kubernetes version (ListKubernetesVersions in that
// region, checked when it differs from the cluster's), and each group's VM size and the zones
// (Microsoft.Compute/skus of that region). What it does not offer is a field error.
func (p *Provider) checkOffer(ctx context.Context, cl *clients, c *spec.Cluster, mc *acs.ManagedCluster) ([]spec.FieldError, error) {
	var errs []spec.FieldError
	loc := normalizeLocation(c.Spec.Region)
	prov, err := cl.providers.Get(ctx, "Microsoft.ContainerService", nil)
	if err != nil {
		return nil, fmt.Errorf("Providers_Get Microsoft.ContainerService (the regions AKS is offered in): %s", firstLineARM(err))
	}
	var regions []string
	for _, rt := range prov.ResourceTypes {
		if strings.EqualFold(deref(rt.ResourceType), "managedClusters") {
			for _, l := range rt.Locations {
				regions = append(regions, normalizeLocation(deref(l)))
			}
		}
	}
	if !slices.Contains(regions, loc) {
		sort.Strings(regions)
		return []spec.FieldError{spec.Errorf("spec.region", "%q: AKS is not offered in this region (offered: %s)", c.Spec.Region, strings.Join(regions, ", "))}, nil
	}
	if v := strings.TrimPrefix(c.Spec.KubernetesVersion, "v"); v != "" {
		current := ""
		if mc != nil && mc.Properties != nil {
			current = versionAs(deref(mc.Properties.KubernetesVersion), deref(mc.Properties.CurrentKubernetesVersion), v)
		}
		if current != v {
			res, err := cl.clusters.ListKubernetesVersions(ctx, loc, nil)
			if err != nil {
				return nil, fmt.Errorf("ManagedClusters_ListKubernetesVersions in %s: %s", loc, firstLineARM(err))
			}
			var offered []string
			ok := false
			for _, kv := range res.Values {
				offered = append(offered, deref(kv.Version))
				ok = ok || deref(kv.Version) == v
				for pv := range kv.PatchVersions {
					ok = ok || pv == v
				}
			}
			if !ok {
				errs = append(errs, spec.Errorf("spec.kubernetesVersion", "%q: AKS does not offer this version in %s (offered: %s)", c.Spec.KubernetesVersion, loc, strings.Join(offered, ", ")))
			}
		}
	}
	skus, err := p.vmSkus(ctx, cl, c, loc)
	if err != nil {
		return nil, err
	}
	zoneSeen := map[int]bool{}
	for i, g := range c.Spec.NodeGroups {
		size := vmSize(g)
		zones, ok := skus[strings.ToLower(size)]
		if !ok {
			errs = append(errs, spec.Errorf(groupPath(i, "instanceType"), "%q: this VM size is not offered in %s", size, loc))
			continue
		}
		for j, z := range c.Spec.Zones {
			if !slices.Contains(zones, z) && !zoneSeen[j] {
				zoneSeen[j] = true
				errs = append(errs, spec.Errorf("spec.zones["+strconv.Itoa(j)+"]", "zone %q: %s is not offered in that zone of %s (zones: %s)", z, size, loc, strings.Join(zones, ", ")))
			}
		}
	}
	return errs, nil
}

// vmSkus reads the VM sizes of a region and their zones (lower-case names), through the SDK's
// pipeline (Microsoft.Compute/skus, api-version 2021-07-01).
func (p *Provider) vmSkus(ctx context.Context, cl *clients, c *spec.Cluster, loc string) (map[string][]string, error) {
	s, _ := section(c, p.getenv())
	u := fmt.Sprintf("%s/subscriptions/%s/providers/Microsoft.Compute/skus?api-version=2021-07-01&$filter=%s",
		strings.TrimSuffix(cl.endpoint, "/"), url.PathEscape(s.Subscription), url.QueryEscape("location eq '"+loc+"'"))
	req, err := runtime.NewRequest(ctx, http.MethodGet, u)
	if err != nil {
		return nil, err
	}
	resp, err := cl.raw.Pipeline().Do(req)
	if err != nil {
		return nil, fmt.Errorf("ResourceSkus_List in %s: %w", loc, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("ResourceSkus_List in %s: %s", loc, firstLineARM(runtime.NewResponseError(resp)))
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var body struct {
		Value []struct {
			ResourceType string `json:"resourceType"`
			Name         string `json:"name"`
			LocationInfo []struct {
				Location string   `json:"location"`
				Zones    []string `json:"zones"`
			} `json:"locationInfo"`
		} `json:"value"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("ResourceSkus_List in %s: %w", loc, err)
	}
	out := map[string][]string{}
	for _, v := range body.Value {
		if v.ResourceType != "virtualMachines" {
			continue
		}
		for _, li := range v.LocationInfo {
			if normalizeLocation(li.Location) == loc {
				z := slices.Clone(li.Zones)
				sort.Strings(z)
				out[strings.ToLower(v.Name)] = z
			}
		}
	}
	return out, nil
}

var messageRE = lazy.MustCompile(`"message"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// firstLineARM is an ARM error as "CODE: message" (the SDK's error text runs over many lines).
func firstLineARM(err error) string {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return err.Error()
	}
	msg := ""
	if m := messageRE.FindStringSubmatch(re.Error()); m != nil {
		var s string
		if json.Unmarshal([]byte(`"`+m[1]+`"`), &s) == nil {
			msg = s
		}
	}
	code := re.ErrorCode
	if code == "" {
		code = fmt.Sprintf("HTTP %d", re.StatusCode)
	}
	if msg == "" {
		return code
	}
	return code + ": " + msg
}

// operationStatus reads the status a poll answered (the Azure-AsyncOperation status, or the
// resource's provisioningState).
func operationStatus(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	b, err := runtime.Payload(resp)
	if err == nil && len(b) > 0 {
		var v struct {
			Status     string `json:"status"`
			Properties struct {
				ProvisioningState string `json:"provisioningState"`
			} `json:"properties"`
		}
		if json.Unmarshal(b, &v) == nil {
			if v.Status != "" {
				return v.Status
			}
			if v.Properties.ProvisioningState != "" {
				return v.Properties.ProvisioningState
			}
		}
	}
	switch resp.StatusCode {
	case http.StatusAccepted:
		return "InProgress"
	case http.StatusOK, http.StatusCreated, http.StatusNoContent:
		return "Succeeded"
	}
	return fmt.Sprintf("HTTP %d", resp.StatusCode)
}

package eks

import (
	"fmt"
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// Section is the typed form of a spec's `eks:` section.
type Section struct {
	// Endpoint is the AWS API endpoint (nuv's emulator: `nuv emulator env` prints it); default
	// AWS_ENDPOINT_URL, else AWS itself.
	Endpoint string
	// Profile is the shared-config profile the credentials and region come from (default
	// AWS_PROFILE, else "default").
	Profile string
	// VPCID and SubnetIDs name an existing network: nuv then makes no VPC, subnets, gateways or
	// route tables, and puts the cluster and its node groups in those subnets.
	VPCID     string
	SubnetIDs []string
	// NAT is how private subnets reach the internet: none, single (one NAT gateway, the default) or
	// perAZ (one per zone).
	NAT string
	// PublicSubnetCIDRs and PrivateSubnetCIDRs set the subnets' networks (one per zone); by default
	// they are carved from spec.networking.vpcCIDR.
	PublicSubnetCIDRs, PrivateSubnetCIDRs []string
	// EndpointPublic and EndpointPrivate are the API endpoint's access (public on, private off by
	// default); PublicAccessCIDRs restricts the public endpoint.
	EndpointPublic    bool
	EndpointPrivate   bool
	PublicAccessCIDRs []string
	// Logging lists the control plane log types sent to CloudWatch.
	Logging []string
	// Addons are the EKS add-ons by name with their version: "" or "default" is the version EKS
	// reports as default for the cluster's Kubernetes version, "none" leaves a default add-on out.
	// vpc-cni, coredns and kube-proxy are there unless set to none.
	Addons map[string]string
	// AMIType is the node groups' AMI type (default AL2023_x86_64_STANDARD).
	AMIType string
}

// LogTypes are EKS's control plane log types.
var LogTypes = []string{"api", "audit", "authenticator", "controllerManager", "scheduler"}

// DefaultAddons are the add-ons every EKS cluster gets unless the spec sets them to none.
var DefaultAddons = []string{"vpc-cni", "coredns", "kube-proxy"}

var sectionFields = []string{"endpoint", "profile", "vpcId", "subnetIds", "nat", "publicSubnetCIDRs", "privateSubnetCIDRs",
	"endpointAccess", "logging", "addons", "amiType"}

// DecodeSection reads a spec's free-form `eks:` section strictly: an unknown field, a wrong type
// or an invalid value is an error naming its field path (spec.eks.nat, spec.eks.addons.coredns).
func DecodeSection(raw spec.ProviderSpec) (Section, []spec.FieldError) {
	s := Section{NAT: awsnet.NATSingle, EndpointPublic: true, Addons: map[string]string{}}
	var errs []spec.FieldError
	fail := func(path, f string, a ...any) { errs = append(errs, spec.Errorf(path, f, a...)) }
	const base = "spec.eks"
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v, p := normalize(raw[k]), base+"."+k
		switch k {
		case "endpoint":
			s.Endpoint = str(v, p, fail)
			if s.Endpoint != "" && !strings.HasPrefix(s.Endpoint, "http://") && !strings.HasPrefix(s.Endpoint, "https://") {
				fail(p, "%q: want an http:// or https:// URL (the emulator's: `nuv emulator env`)", s.Endpoint)
			}
		case "profile":
			s.Profile = str(v, p, fail)
		case "vpcId":
			s.VPCID = str(v, p, fail)
			if s.VPCID != "" && !strings.HasPrefix(s.VPCID, "vpc-") {
				fail(p, "%q is not a VPC id (vpc-...)", s.VPCID)
			}
		case "subnetIds":
			s.SubnetIDs = strs(v, p, fail)
			for i, id := range s.SubnetIDs {
				if !strings.HasPrefix(id, "subnet-") {
					fail(fmt.Sprintf("%s[%d]", p, i), "%q is not a subnet id (subnet-...)", id)
				}
			}
		case "nat":
			s.NAT = oneOf(v, p, s.NAT, []string{awsnet.NATNone, awsnet.NATSingle, awsnet.NATPerAZ}, fail)
		case "publicSubnetCIDRs":
			s.PublicSubnetCIDRs = strs(v, p, fail)
		case "privateSubnetCIDRs":
			s.PrivateSubnetCIDRs = strs(v, p, fail)
		case "endpointAccess":
			s.decodeEndpointAccess(v, p, fail)
		case "logging":
			s.Logging = strs(v, p, fail)
			for i, t := range s.Logging {
				if !slices.Contains(LogTypes, t) {
					fail(fmt.Sprintf("%s[%d]", p, i), "%q is not an EKS log type (valid: %s)", t, strings.Join(LogTypes, ", "))
				}
			}
			sort.Strings(s.Logging)
			s.Logging = slices.Compact(s.Logging)
		case "addons":
			m, ok := v.(map[string]any)
			if !ok {
				fail(p, "want a mapping of add-on name to version (or default, none), got %s", kindOf(v))
				continue
			}
			for _, n := range slices.Sorted(maps.Keys(m)) {
				s.Addons[n] = str(m[n], p+"."+n, fail)
			}
		case "amiType":
			s.AMIType = str(v, p, fail)
		default:
			fail(p, "unknown field (valid: %s)", strings.Join(sectionFields, ", "))
		}
	}
	s.check(base, fail)
	if s.AMIType == "" {
		s.AMIType = "AL2023_x86_64_STANDARD"
	}
	return s, errs
}

// decodeEndpointAccess reads spec.eks.endpointAccess (at path p): {public, private, publicCIDRs}.
func (s *Section) decodeEndpointAccess(v any, p string, fail func(path, f string, a ...any)) {
	m, ok := v.(map[string]any)
	if !ok {
		fail(p, "want a mapping {public, private, publicCIDRs}, got %s", kindOf(v))
		return
	}
	for _, ek := range slices.Sorted(maps.Keys(m)) {
		ep := p + "." + ek
		switch ek {
		case "public":
			s.EndpointPublic = boolean(m[ek], ep, s.EndpointPublic, fail)
		case "private":
			s.EndpointPrivate = boolean(m[ek], ep, s.EndpointPrivate, fail)
		case "publicCIDRs":
			s.PublicAccessCIDRs = strs(m[ek], ep, fail)
			for i, c := range s.PublicAccessCIDRs {
				if _, err := netip.ParsePrefix(c); err != nil {
					fail(fmt.Sprintf("%s[%d]", ep, i), "invalid CIDR %q", c)
				}
			}
		default:
			fail(ep, "unknown field (valid: public, private, publicCIDRs)")
		}
	}
}

// oneOf reads a string field (at path p) that must be one of valid; a wrong type or value is
// reported and keeps def.
func oneOf(v any, p, def string, valid []string, fail func(path, f string, a ...any)) string {
	str, ok := v.(string)
	if !ok {
		fail(p, "want %s, got %s", choices(valid), kindOf(v))
		return def
	}
	if !slices.Contains(valid, str) {
		fail(p, "%q: want %s", str, choices(valid))
	}
	return str
}

// choices is "a, b or c".
func choices(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// check reports the section's fields that do not go together (under base, spec.eks).
func (s *Section) check(base string, fail func(path, f string, a ...any)) {
	if (s.VPCID == "") != (len(s.SubnetIDs) == 0) {
		fail(base+".subnetIds", "vpcId and subnetIds go together: an existing VPC and the subnets (at least two zones) the cluster uses")
	} else if s.VPCID != "" && len(s.SubnetIDs) < 2 {
		fail(base+".subnetIds", "EKS needs subnets in at least two zones; %d given", len(s.SubnetIDs))
	}
	if s.VPCID != "" && (len(s.PublicSubnetCIDRs) > 0 || len(s.PrivateSubnetCIDRs) > 0) {
		fail(base+".vpcId", "an existing VPC keeps its subnets: leave publicSubnetCIDRs and privateSubnetCIDRs out")
	}
	if !s.EndpointPublic && !s.EndpointPrivate {
		fail(base+".endpointAccess", "the API endpoint needs public or private access (or both)")
	}
}

// DecodeSpecSection decodes and checks c's spec.eks strictly (the registry's section decoder): it
// returns the section as written.
func DecodeSpecSection(c *spec.Cluster) (any, []spec.FieldError) {
	m, errs := spec.FreeSection(c, "eks")
	if len(errs) == 0 {
		_, errs = DecodeSection(m)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return m, nil
}

// AddonVersions returns the add-ons the cluster gets, by name: the defaults plus the section's,
// without those set to none; a version of "" means the API's default.
func (s Section) AddonVersions() map[string]string {
	out := map[string]string{}
	for _, n := range DefaultAddons {
		out[n] = ""
	}
	for n, v := range s.Addons {
		switch v {
		case "none":
			delete(out, n)
		case "default":
			out[n] = ""
		default:
			out[n] = v
		}
	}
	return out
}

// normalize turns the maps and lists a decoder made (of whatever Go type) into map[string]any and
// []any, so the section reads the same from YAML, JSON or a record.
func normalize(v any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[fmt.Sprint(it.Key().Interface())] = normalize(it.Value().Interface())
		}
		return m
	case reflect.Slice:
		l := make([]any, rv.Len())
		for i := range l {
			l[i] = normalize(rv.Index(i).Interface())
		}
		return l
	}
	return v
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

func str(v any, p string, fail func(string, string, ...any)) string {
	s, ok := v.(string)
	if !ok {
		fail(p, "want a string, got %s", kindOf(v))
	}
	return s
}

func boolean(v any, p string, def bool, fail func(string, string, ...any)) bool {
	b, ok := v.(bool)
	if !ok {
		fail(p, "want true or false, got %s", kindOf(v))
		return def
	}
	return b
}

func strs(v any, p string, fail func(string, string, ...any)) []string {
	l, ok := v.([]any)
	if !ok {
		fail(p, "want a list of strings, got %s", kindOf(v))
		return nil
	}
	out := make([]string, 0, len(l))
	for i, x := range l {
		out = append(out, str(x, fmt.Sprintf("%s[%d]", p, i), fail))
	}
	return out
}

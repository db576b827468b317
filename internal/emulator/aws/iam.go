package aws

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// iamState is IAM's part of the state: roles by name.
type iamState struct {
	Roles map[string]*iamRole `json:"roles"`
}

type iamTag struct {
	Key   string `xml:"Key" json:"key"`
	Value string `xml:"Value" json:"value"`
}

type iamRole struct {
	Path               string    `json:"path"`
	RoleName           string    `json:"roleName"`
	RoleID             string    `json:"roleId"`
	Arn                string    `json:"arn"`
	CreateDate         time.Time `json:"createDate"`
	AssumeRolePolicy   string    `json:"assumeRolePolicy"`
	Description        string    `json:"description,omitempty"`
	MaxSessionDuration int       `json:"maxSessionDuration"`
	Tags               []iamTag  `json:"tags"`
	Attached           []string  `json:"attached"` // managed policy ARNs
}

// xml is the Role element of IAM's answers (the trust policy URL-encoded, as IAM sends it).
func (r *iamRole) xml() any {
	return struct {
		Path                     string   `xml:"Path"`
		RoleName                 string   `xml:"RoleName"`
		RoleID                   string   `xml:"RoleId"`
		Arn                      string   `xml:"Arn"`
		CreateDate               string   `xml:"CreateDate"`
		AssumeRolePolicyDocument string   `xml:"AssumeRolePolicyDocument"`
		Description              string   `xml:"Description,omitempty"`
		MaxSessionDuration       int      `xml:"MaxSessionDuration"`
		Tags                     []iamTag `xml:"Tags>member"`
	}{r.Path, r.RoleName, r.RoleID, r.Arn, r.CreateDate.Format(time.RFC3339), url.QueryEscape(r.AssumeRolePolicy), r.Description, r.MaxSessionDuration, r.Tags}
}

var iamActions = lazy.Value[map[string]queryHandler]{New: func() map[string]queryHandler {
	return map[string]queryHandler{
		"CreateRole":               (*Server).iamCreateRole,
		"GetRole":                  (*Server).iamGetRole,
		"ListRoles":                (*Server).iamListRoles,
		"DeleteRole":               (*Server).iamDeleteRole,
		"UpdateAssumeRolePolicy":   (*Server).iamUpdateAssumeRolePolicy,
		"AttachRolePolicy":         (*Server).iamAttachRolePolicy,
		"DetachRolePolicy":         (*Server).iamDetachRolePolicy,
		"ListAttachedRolePolicies": (*Server).iamListAttached,
		"TagRole":                  (*Server).iamTagRole,
		"UntagRole":                (*Server).iamUntagRole,
		"ListRoleTags":             (*Server).iamListRoleTags,
	}
}}

// managedPolicies are the AWS managed policies the emulator knows (others are NoSuchEntity, as a
// mistyped policy ARN is on AWS).
var managedPolicies = []string{
	"AmazonEKSClusterPolicy", "AmazonEKSServicePolicy", "AmazonEKSVPCResourceController", "AmazonEKSWorkerNodePolicy",
	"AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly", "AmazonEC2ContainerRegistryPullOnly", "AmazonSSMManagedInstanceCore",
	"AmazonEKSBlockStoragePolicy", "AmazonEKSComputePolicy", "AmazonEKSLoadBalancingPolicy", "AmazonEKSNetworkingPolicy",
	"AmazonEKSWorkerNodeMinimalPolicy", "AmazonEBSCSIDriverPolicy", "CloudWatchAgentServerPolicy", "AdministratorAccess", "ReadOnlyAccess",
}

var roleNameRE = lazy.MustCompile(`^[\w+=,.@-]{1,64}$`)

func (s *Server) iam() *iamState {
	if s.St.IAM.Roles == nil {
		s.St.IAM.Roles = map[string]*iamRole{}
	}
	return &s.St.IAM
}

func noSuchRole(name string) error {
	return errf(404, "NoSuchEntity", "The role with name %s cannot be found.", name)
}

func (s *Server) role(p params) (*iamRole, error) {
	name, err := p.required("RoleName")
	if err != nil {
		return nil, err
	}
	r := s.iam().Roles[name]
	if r == nil {
		return nil, noSuchRole(name)
	}
	return r, nil
}

// checkPolicyDocument checks a policy is JSON with a Statement, as IAM does.
func checkPolicyDocument(doc string) error {
	var d struct {
		Version   string          `json:"Version"`
		Statement json.RawMessage `json:"Statement"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return errf(400, "MalformedPolicyDocument", "This policy contains invalid Json")
	}
	if len(d.Statement) == 0 {
		return errf(400, "MalformedPolicyDocument", "Syntax errors in policy: the policy has no Statement")
	}
	return nil
}

func iamTags(p params) []iamTag {
	var tags []iamTag
	for _, t := range p.structs("Tags.member") {
		k, v := t.get("Key"), t.get("Value")
		found := false
		for i := range tags {
			if tags[i].Key == k {
				tags[i].Value, found = v, true
			}
		}
		if !found {
			tags = append(tags, iamTag{k, v})
		}
	}
	return tags
}

func (s *Server) iamCreateRole(p params) (any, error) {
	name, err := p.required("RoleName")
	if err != nil {
		return nil, err
	}
	if !roleNameRE.MatchString(name) {
		return nil, errf(400, "ValidationError", "1 validation error detected: Value '%s' at 'roleName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+", name)
	}
	doc, err := p.required("AssumeRolePolicyDocument")
	if err != nil {
		return nil, err
	}
	if err := checkPolicyDocument(doc); err != nil {
		return nil, err
	}
	if s.iam().Roles[name] != nil {
		return nil, errf(409, "EntityAlreadyExists", "Role with name %s already exists.", name)
	}
	path := p.get("Path")
	if path == "" {
		path = "/"
	}
	if !strings.HasPrefix(path, "/") || !strings.HasSuffix(path, "/") {
		return nil, errf(400, "ValidationError", "The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters.")
	}
	r := &iamRole{Path: path, RoleName: name, RoleID: "AROA" + randUpper(17), Arn: "arn:aws:iam::" + s.St.Account + ":role" + path + name,
		CreateDate: time.Now().UTC().Truncate(time.Second), AssumeRolePolicy: doc, Description: p.get("Description"),
		MaxSessionDuration: 3600, Tags: iamTags(p), Attached: []string{}}
	s.iam().Roles[name] = r
	return struct {
		Role any `xml:"Role"`
	}{r.xml()}, nil
}

func (s *Server) iamGetRole(p params) (any, error) {
	r, err := s.role(p)
	if err != nil {
		return nil, err
	}
	return struct {
		Role any `xml:"Role"`
	}{r.xml()}, nil
}

func (s *Server) iamListRoles(p params) (any, error) {
	prefix := p.get("PathPrefix")
	var roles []any
	for _, n := range sortedKeys(s.iam().Roles) {
		r := s.iam().Roles[n]
		if prefix == "" || strings.HasPrefix(r.Path, prefix) {
			roles = append(roles, r.xml())
		}
	}
	return struct {
		Roles       []any `xml:"Roles>member"`
		IsTruncated bool  `xml:"IsTruncated"`
	}{roles, false}, nil
}

func (s *Server) iamDeleteRole(p params) (any, error) {
	r, err := s.role(p)
	if err != nil {
		return nil, err
	}
	if len(r.Attached) > 0 {
		return nil, errf(409, "DeleteConflict", "Cannot delete entity, must detach all policies first. (nuv emulator: %s)", strings.Join(r.Attached, ", "))
	}
	for _, c := range s.St.EKS.Clusters {
		if c.RoleARN == r.Arn {
			s.Log.V(1).Infof("emulator: role %s deleted while EKS cluster %s uses it", r.RoleName, c.Name)
		}
	}
	delete(s.iam().Roles, r.RoleName)
	return nil, nil
}

func (s *Server) iamUpdateAssumeRolePolicy(p params) (any, error) {
	r, err := s.role(p)
	if err != nil {
		return nil, err
	}
	doc, err := p.required("PolicyDocument")
	if err != nil {
		return nil, err
	}
	if err := checkPolicyDocument(doc); err != nil {
		return nil, err
	}
	r.AssumeRolePolicy = doc
	return nil, nil
}

func (s *Server) policyName(arn string) (string, error) {
	name, ok := strings.CutPrefix(arn, "arn:aws:iam::aws:policy/")
	if !ok {
		if strings.HasPrefix(arn, "arn:aws:iam::"+s.St.Account+":policy/") {
			return "", errf(404, "NoSuchEntity", "Policy %s does not exist or is not attachable. (nuv emulator: customer managed policies are not emulated)", arn)
		}
		return "", errf(400, "InvalidInput", "ARN %s is not valid.", arn)
	}
	name = name[strings.LastIndexByte(name, '/')+1:]
	if !contains(managedPolicies, name) {
		return "", errf(404, "NoSuchEntity", "Policy %s does not exist or is not attachable.", arn)
	}
	return name, nil
}

func (s *Server) iamAttachRolePolicy(p params) (any, error) {
	r, err := s.role(p)
	if err != nil {
		return nil, err
	}
	arn, err := p.required("PolicyArn")
	if err != nil {
		return nil, err
	}
	if _, err := s.policyName(arn); err != nil {
		return nil, err
	}
	if !contains(r.Attached, arn) {
		if len(r.Attached) >= 20 {
			return nil, errf(409, "LimitExceeded", "Cannot exceed quota for PoliciesPerRole: 20")
		}
		r.Attached = append(r.Attached, arn)
	}
	return nil, nil
}

func (s *Server) iamDetachRolePolicy(p params) (any, error) {
	r, err := s.role(p)
	if err != nil {
		return nil, err
	}
	arn := p.get("PolicyArn")
	for i, a := range r.Attached {
		if a == arn {
			r.Attached = append(r.Attached[:i], r.Attached[i+1:]...)
			return nil, nil
		}
	}
	return nil, errf(404, "NoSuchEntity", "Policy %s was not found.", arn)
}

func (s *Server) iamListAttached(p params) (any, error) {
	r, err := s.role(p)
	if err != nil {
		return nil, err
	}
	type pol struct {
		PolicyName string `xml:"PolicyName"`
		PolicyArn  string `xml:"PolicyArn"`
	}
	var out []pol
	for _, a := range r.Attached {
		out = append(out, pol{a[strings.LastIndexByte(a, '/')+1:], a})
	}
	return struct {
		Policies    []pol `xml:"AttachedPolicies>member"`
		IsTruncated bool  `xml:"IsTruncated"`
	}{out, false}, nil
}

func (s *Server) iamTagRole(p params) (any, error) {
	r, err := s.role(p)
	if err != nil {
		return nil, err
	}
	for _, t := range iamTags(p) {
		found := false
		for i := range r.Tags {
			if r.Tags[i].Key == t.Key {
				r.Tags[i].Value, found = t.Value, true
			}
		}
		if !found {
			r.Tags = append(r.Tags, t)
		}
	}
	if len(r.Tags) > 50 {
		return nil, errf(409, "LimitExceeded", "the number of tags of role %s exceeds 50", r.RoleName)
	}
	return nil, nil
}

func (s *Server) iamUntagRole(p params) (any, error) {
	r, err := s.role(p)
	if err != nil {
		return nil, err
	}
	keys := p.list("TagKeys.member")
	kept := r.Tags[:0]
	for _, t := range r.Tags {
		if !contains(keys, t.Key) {
			kept = append(kept, t)
		}
	}
	r.Tags = kept
	return nil, nil
}

func (s *Server) iamListRoleTags(p params) (any, error) {
	r, err := s.role(p)
	if err != nil {
		return nil, err
	}
	return struct {
		Tags        []iamTag `xml:"Tags>member"`
		IsTruncated bool     `xml:"IsTruncated"`
	}{r.Tags, false}, nil
}

// stsActions: STS serves GetCallerIdentity (signed requests and presigned URLs).
var stsActions = lazy.Value[map[string]queryHandler]{New: func() map[string]queryHandler {
	return map[string]queryHandler{
		"GetCallerIdentity": (*Server).stsGetCallerIdentity,
	}
}}

// callerIdentity is GetCallerIdentity's result.
type callerIdentity struct {
	Arn     string `xml:"Arn" json:"Arn"`
	UserID  string `xml:"UserId" json:"UserId"`
	Account string `xml:"Account" json:"Account"`
}

func (s *Server) stsGetCallerIdentity(params) (any, error) {
	return callerIdentity{Arn: s.St.callerARN(), UserID: s.St.UserID, Account: s.St.Account}, nil
}

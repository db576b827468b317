package eks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

// The IAM roles of a cluster and of its nodes, with their managed policies. Each kind's create and update, delete, Terraform form and observation.

func trustPolicy(service string) string {
	return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"` + service + `"},"Action":"sts:AssumeRole"}]}`
}

func (x *exec) role(ctx context.Context, ch cluster.Change) error {
	rn := x.Res.Name
	if x.Res.ID == "" {
		var tags []iamtypes.Tag
		t := x.Tags()
		for _, k := range slices.Sorted(maps.Keys(t)) {
			tags = append(tags, iamtypes.Tag{Key: aws.String(k), Value: aws.String(t[k])})
		}
		out, err := x.s.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(rn), AssumeRolePolicyDocument: aws.String(trustPolicy(x.Res.Fields["service"])),
			Description: aws.String("nuv cluster " + x.Name), Tags: tags})
		if err != nil {
			return x.Fail("iam:CreateRole", "role "+rn, err)
		}
		if err := x.Made(aws.ToString(out.Role.Arn)); err != nil {
			return err
		}
	}
	have := map[string]bool{}
	if ch.Actual != nil {
		for _, pn := range strings.Split(ch.Actual.Fields["policies"], ",") {
			have[pn] = pn != ""
		}
	}
	want := strings.Split(x.Res.Fields["policies"], ",")
	for _, pn := range want {
		if have[pn] {
			continue
		}
		arn := "arn:aws:iam::aws:policy/" + pn
		if _, err := x.s.iam.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(rn), PolicyArn: aws.String(arn)}); err != nil {
			return x.Fail("iam:AttachRolePolicy", "role "+rn+" (policy "+pn+")", err)
		}
	}
	for pn, ok := range have {
		if ok && !slices.Contains(want, pn) {
			if _, err := x.s.iam.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(rn), PolicyArn: aws.String("arn:aws:iam::aws:policy/" + pn)}); err != nil {
				return x.Fail("iam:DetachRolePolicy", "role "+rn+" (policy "+pn+")", err)
			}
		}
	}
	return nil
}

func (x *exec) deleteRole(ctx context.Context, ch cluster.Change) error {
	rname := x.RName
	pg := iam.NewListAttachedRolePoliciesPaginator(x.s.iam, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(rname)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if awsnet.NotFound(err) && err != nil {
			return nil
		}
		if err != nil {
			return x.Fail("iam:ListAttachedRolePolicies", "role "+rname, err)
		}
		for _, ap := range page.AttachedPolicies {
			if _, err := x.s.iam.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(rname), PolicyArn: ap.PolicyArn}); err != nil && !awsnet.NotFound(err) {
				return x.Fail("iam:DetachRolePolicy", "role "+rname, err)
			}
		}
	}
	if _, err := x.s.iam.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(rname)}); !awsnet.NotFound(err) {
		return x.Fail("iam:DeleteRole", "role "+rname, err)
	}
	return nil
}

func (w *tfWriter) role(r cluster.Resource) error {
	f := r.Fields
	b := w.Block("aws_iam_role", r.Key())
	b.SetAttributeValue("name", cty.StringVal(r.Name))
	b.SetAttributeRaw("assume_role_policy", jsonencode(f["service"]))
	role, _ := w.Ref(r.Key(), "name")
	if w.policyAttachments == nil {
		w.policyAttachments = map[string][]string{}
	}
	for _, pol := range kit.ParseList(f["policies"]) {
		label := tfgen.Name(r.Name + "-" + pol)
		w.Body.AppendNewline()
		ab := w.Body.AppendNewBlock("resource", []string{"aws_iam_role_policy_attachment", label}).Body()
		ab.SetAttributeRaw("role", role)
		ab.SetAttributeValue("policy_arn", cty.StringVal("arn:aws:iam::aws:policy/"+pol))
		w.policyAttachments[r.Key()] = append(w.policyAttachments[r.Key()], "aws_iam_role_policy_attachment."+label)
	}
	return nil
}

// trustService reads the service principal of a role's trust policy (IAM returns it URL-encoded).
func trustService(doc string) string {
	if d, err := url.QueryUnescape(doc); err == nil {
		doc = d
	}
	var p struct {
		Statement []struct {
			Principal struct {
				Service any
			}
		}
	}
	if json.Unmarshal([]byte(doc), &p) != nil || len(p.Statement) == 0 {
		return ""
	}
	switch v := p.Statement[0].Principal.Service.(type) {
	case string:
		return v
	case []any:
		if len(v) > 0 {
			return fmt.Sprint(v[0])
		}
	}
	return ""
}

func (s *session) observeRole(ctx context.Context, o *awsnet.Observation, rn string) error {
	out, err := s.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(rn)})
	if awsnet.APICode(err) == "NoSuchEntity" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("iam:GetRole %s: %s", rn, awsnet.APIMessage(err))
	}
	r := out.Role
	mine := false
	for _, t := range r.Tags {
		mine = mine || aws.ToString(t.Key) == awsnet.TagCluster && aws.ToString(t.Value) == o.Name
	}
	if !mine {
		o.Out = append(o.Out, cluster.Resource{Kind: kindRole, Name: rn, ID: aws.ToString(r.Arn), Foreign: true})
		return nil
	}
	var pols []string
	pg := iam.NewListAttachedRolePoliciesPaginator(s.iam, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(rn)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("iam:ListAttachedRolePolicies %s: %s", rn, awsnet.APIMessage(err))
		}
		for _, ap := range page.AttachedPolicies {
			pols = append(pols, aws.ToString(ap.PolicyName))
		}
	}
	slices.Sort(pols)
	o.Out = append(o.Out, cluster.Resource{Kind: kindRole, Name: rn, ID: aws.ToString(r.Arn),
		Fields: map[string]string{"service": trustService(aws.ToString(r.AssumeRolePolicyDocument)), "policies": strings.Join(pols, ",")}})
	return nil
}

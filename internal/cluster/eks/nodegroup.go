package eks

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/zclconf/go-cty/cty"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

// Managed node groups and EKS add-ons. Each kind's create and update, delete, Terraform form and observation.

func effectOf(e string) ekstypes.TaintEffect {
	for k, v := range effects {
		if v == e {
			return k
		}
	}
	return ekstypes.TaintEffect(e)
}

func taintsOf(s string) []ekstypes.Taint {
	var out []ekstypes.Taint
	for _, t := range kit.ParseList(s) {
		pt, err := spec.ParseTaint(t)
		if err != nil {
			continue
		}
		tt := ekstypes.Taint{Key: aws.String(pt.Key), Effect: effectOf(pt.Effect)}
		if pt.Value != "" {
			tt.Value = aws.String(pt.Value)
		}
		out = append(out, tt)
	}
	return out
}

func atoi32(s string) *int32 {
	n, _ := strconv.Atoi(s)
	return aws.Int32(int32(n))
}

// nodegroup creates a node group (after its cluster is active), replaces it, or updates what EKS
// updates in place: the scaling, labels and taints, then the version.
func (x *exec) nodegroup(ctx context.Context, ch cluster.Change) error {
	if ch.Action == cluster.Replace {
		if err := x.deleteNodegroup(ctx, ch); err != nil {
			return err
		}
		x.Res.ID = ""
	}
	if x.Res.ID == "" {
		return x.createNodegroup(ctx)
	}
	ng := x.RName
	if err := x.p.waitNodegroup(ctx, x.s, x.Name, ng, true); err != nil {
		return err
	}
	f := x.Res.Fields
	if in := nodegroupConfigUpdate(x.Name, ng, ch.Actual.Fields, f); in != nil {
		out, err := x.s.eks.UpdateNodegroupConfig(ctx, in)
		if err != nil {
			return x.Fail("eks:UpdateNodegroupConfig", x.Res.Key(), err)
		}
		if err := x.p.waitUpdate(ctx, x.s, x.Res.Key()+" config", x.Name, aws.ToString(out.Update.Id), ng, ""); err != nil {
			return err
		}
	}
	if ch.Actual.Fields["version"] != f["version"] {
		out, err := x.s.eks.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String(x.Name), NodegroupName: aws.String(ng), Version: aws.String(f["version"])})
		if err != nil {
			return x.Fail("eks:UpdateNodegroupVersion", x.Res.Key()+" (to "+f["version"]+")", err)
		}
		if err := x.p.waitUpdate(ctx, x.s, x.Res.Key()+" upgrade to "+f["version"], x.Name, aws.ToString(out.Update.Id), ng, ""); err != nil {
			return err
		}
	}
	return nil
}

// createNodegroup creates the node group once its cluster is active, retrying while IAM has not
// yet made its new node role usable (as EKS answers then), and waits for it to be active.
func (x *exec) createNodegroup(ctx context.Context) error {
	ng, f := x.RName, x.Res.Fields
	if _, err := x.p.waitCluster(ctx, x.s, x.Name, true); err != nil {
		return err
	}
	role, err := x.ID(awsnet.Key(kindRole, nodeRoleName(x.Name)))
	if err != nil {
		return err
	}
	subnets, err := x.subnetIDs(true)
	if err != nil {
		return err
	}
	in := &eks.CreateNodegroupInput{ClusterName: aws.String(x.Name), NodegroupName: aws.String(ng), NodeRole: aws.String(role), Subnets: subnets,
		InstanceTypes: kit.ParseList(f["instanceTypes"]), CapacityType: ekstypes.CapacityTypes(f["capacity"]), AmiType: ekstypes.AMITypes(f["amiType"]),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: atoi32(f["min"]), MaxSize: atoi32(f["max"]), DesiredSize: atoi32(f["desired"])},
		Labels:        kit.ParseMap(f["labels"]), Taints: taintsOf(f["taints"]), DiskSize: atoi32(f["diskSize"]), Version: aws.String(f["version"]), Tags: x.Tags()}
	if len(in.Labels) == 0 {
		in.Labels = nil
	}
	var out *eks.CreateNodegroupOutput
	err = x.s.RetryWhile(ctx, 2*time.Minute, func() error {
		var err error
		out, err = x.s.eks.CreateNodegroup(ctx, in)
		return err
	}, func(err error) bool {
		return awsnet.APICode(err) == "InvalidParameterException" && strings.Contains(awsnet.APIMessage(err), "role")
	})
	if err != nil {
		return x.Fail("eks:CreateNodegroup", x.Res.Key(), err)
	}
	if err := x.Made(aws.ToString(out.Nodegroup.NodegroupArn)); err != nil {
		return err
	}
	return x.p.waitNodegroup(ctx, x.s, x.Name, ng, true)
}

// nodegroupConfigUpdate is the UpdateNodegroupConfig that takes node group ng of cluster from
// the fields old to f (scaling, labels and taints added, changed and removed); nil if none of
// them changed.
func nodegroupConfigUpdate(cluster, ng string, old, f map[string]string) *eks.UpdateNodegroupConfigInput {
	in := &eks.UpdateNodegroupConfigInput{ClusterName: aws.String(cluster), NodegroupName: aws.String(ng)}
	changed := false
	if old["min"] != f["min"] || old["max"] != f["max"] || old["desired"] != f["desired"] {
		in.ScalingConfig = &ekstypes.NodegroupScalingConfig{MinSize: atoi32(f["min"]), MaxSize: atoi32(f["max"]), DesiredSize: atoi32(f["desired"])}
		changed = true
	}
	if old["labels"] != f["labels"] {
		have, want := kit.ParseMap(old["labels"]), kit.ParseMap(f["labels"])
		lu := &ekstypes.UpdateLabelsPayload{AddOrUpdateLabels: map[string]string{}}
		for k, v := range want {
			if hv, ok := have[k]; !ok || hv != v {
				lu.AddOrUpdateLabels[k] = v
			}
		}
		for k := range have {
			if _, ok := want[k]; !ok {
				lu.RemoveLabels = append(lu.RemoveLabels, k)
			}
		}
		in.Labels, changed = lu, true
	}
	if old["taints"] != f["taints"] {
		have, want := kit.ParseList(old["taints"]), kit.ParseList(f["taints"])
		tu := &ekstypes.UpdateTaintsPayload{}
		for _, t := range want {
			if !slices.Contains(have, t) {
				tu.AddOrUpdateTaints = append(tu.AddOrUpdateTaints, taintsOf(t)...)
			}
		}
		for _, t := range have {
			if !slices.Contains(want, t) {
				tu.RemoveTaints = append(tu.RemoveTaints, taintsOf(t)...)
			}
		}
		in.Taints, changed = tu, true
	}
	if !changed {
		return nil
	}
	return in
}

func (x *exec) addon(ctx context.Context, ch cluster.Change) error {
	name := x.RName
	v := x.Res.Fields["version"]
	if x.Res.ID == "" {
		if _, err := x.p.waitCluster(ctx, x.s, x.Name, true); err != nil {
			return err
		}
		out, err := x.s.eks.CreateAddon(ctx, &eks.CreateAddonInput{ClusterName: aws.String(x.Name), AddonName: aws.String(name), AddonVersion: aws.String(v),
			ResolveConflicts: ekstypes.ResolveConflictsOverwrite, Tags: x.Tags()})
		if err != nil {
			return x.Fail("eks:CreateAddon", x.Res.Key(), err)
		}
		if err := x.Made(aws.ToString(out.Addon.AddonArn)); err != nil {
			return err
		}
		return x.p.waitAddon(ctx, x.s, x.Name, name, true)
	}
	if err := x.p.waitAddon(ctx, x.s, x.Name, name, true); err != nil {
		return err
	}
	out, err := x.s.eks.UpdateAddon(ctx, &eks.UpdateAddonInput{ClusterName: aws.String(x.Name), AddonName: aws.String(name), AddonVersion: aws.String(v),
		ResolveConflicts: ekstypes.ResolveConflictsOverwrite})
	if err != nil {
		return x.Fail("eks:UpdateAddon", x.Res.Key()+" (to "+v+")", err)
	}
	return x.p.waitUpdate(ctx, x.s, x.Res.Key()+" to "+v, x.Name, aws.ToString(out.Update.Id), "", name)
}

func (x *exec) deleteNodegroup(ctx context.Context, ch cluster.Change) error {
	k := ch.Key
	rname := x.RName
	_, err := x.s.eks.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String(x.Name), NodegroupName: aws.String(rname)})
	if awsnet.NotFound(err) && err != nil {
		return nil
	}
	if err != nil && awsnet.APICode(err) != "ResourceInUseException" { // already DELETING
		return x.Fail("eks:DeleteNodegroup", k, err)
	}
	return x.p.waitNodegroup(ctx, x.s, x.Name, rname, false)
}

func (x *exec) deleteAddon(ctx context.Context, ch cluster.Change) error {
	k := ch.Key
	rname := x.RName
	_, err := x.s.eks.DeleteAddon(ctx, &eks.DeleteAddonInput{ClusterName: aws.String(x.Name), AddonName: aws.String(rname)})
	if awsnet.NotFound(err) && err != nil {
		return nil
	}
	if err != nil {
		return x.Fail("eks:DeleteAddon", k, err)
	}
	return x.p.waitAddon(ctx, x.s, x.Name, rname, false)
}

func (w *tfWriter) nodegroup(r cluster.Resource) error {
	f := r.Fields
	name := w.C.Metadata.Name
	b := w.Block("aws_eks_node_group", r.Key())
	cl, err := w.Ref(awsnet.Key(kindCluster, name), "name")
	if err != nil {
		return err
	}
	roleKey := awsnet.Key(kindRole, nodeRoleName(name))
	role, err := w.Ref(roleKey, "arn")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("cluster_name", cl)
	b.SetAttributeValue("node_group_name", cty.StringVal(r.Name))
	b.SetAttributeRaw("node_role_arn", role)
	if err := w.subnetsAttr(b, true); err != nil {
		return err
	}
	b.SetAttributeValue("version", cty.StringVal(f["version"]))
	b.SetAttributeValue("instance_types", tfgen.Strings(kit.ParseList(f["instanceTypes"])...))
	b.SetAttributeValue("capacity_type", cty.StringVal(f["capacity"]))
	b.SetAttributeValue("ami_type", cty.StringVal(f["amiType"]))
	disk, _ := strconv.Atoi(f["diskSize"])
	b.SetAttributeValue("disk_size", cty.NumberIntVal(int64(disk)))
	sc := b.AppendNewBlock("scaling_config", nil).Body()
	for _, k := range []struct{ tf, f string }{{"desired_size", "desired"}, {"max_size", "max"}, {"min_size", "min"}} {
		n, _ := strconv.Atoi(f[k.f])
		sc.SetAttributeValue(k.tf, cty.NumberIntVal(int64(n)))
	}
	if l := kit.ParseMap(f["labels"]); len(l) > 0 {
		b.SetAttributeValue("labels", tfgen.StringMap(l))
	}
	for _, t := range taintsOf(f["taints"]) {
		tb := b.AppendNewBlock("taint", nil).Body()
		tb.SetAttributeValue("key", cty.StringVal(*t.Key))
		if t.Value != nil {
			tb.SetAttributeValue("value", cty.StringVal(*t.Value))
		}
		tb.SetAttributeValue("effect", cty.StringVal(string(t.Effect)))
	}
	deps := slices.Clone(w.policyAttachments[roleKey])
	for _, d := range r.DependsOn {
		if strings.HasPrefix(d, awsnet.KindRouteTable+"/") {
			deps = append(deps, w.Addr[d])
		}
	}
	b.SetAttributeRaw("depends_on", rawList(deps))
	w.nodeGroups = append(w.nodeGroups, w.Addr[r.Key()])
	return nil
}

func (w *tfWriter) addon(r cluster.Resource) error {
	f := r.Fields
	name := w.C.Metadata.Name
	b := w.Block("aws_eks_addon", r.Key())
	cl, err := w.Ref(awsnet.Key(kindCluster, name), "name")
	if err != nil {
		return err
	}
	b.SetAttributeRaw("cluster_name", cl)
	b.SetAttributeValue("addon_name", cty.StringVal(r.Name))
	b.SetAttributeValue("addon_version", cty.StringVal(f["version"]))
	b.SetAttributeValue("resolve_conflicts_on_create", cty.StringVal("OVERWRITE"))
	b.SetAttributeValue("resolve_conflicts_on_update", cty.StringVal("OVERWRITE"))
	if len(w.nodeGroups) > 0 {
		b.SetAttributeRaw("depends_on", rawList(w.nodeGroups))
	}
	return nil
}

func (s *session) observeGroups(ctx context.Context, o *awsnet.Observation, name string) error {
	ck := awsnet.Key(kindCluster, name)
	var subnetsAndRoutes []string
	for _, r := range o.Out {
		if r.Kind == awsnet.KindSubnet || r.Kind == awsnet.KindRouteTable {
			subnetsAndRoutes = append(subnetsAndRoutes, r.Key())
		}
	}
	ngs := eks.NewListNodegroupsPaginator(s.eks, &eks.ListNodegroupsInput{ClusterName: aws.String(name)})
	for ngs.HasMorePages() {
		page, err := ngs.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("eks:ListNodegroups %s: %s", name, awsnet.APIMessage(err))
		}
		for _, gn := range page.Nodegroups {
			out, err := s.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(name), NodegroupName: aws.String(gn)})
			if awsnet.APICode(err) == "ResourceNotFoundException" {
				continue
			}
			if err != nil {
				return fmt.Errorf("eks:DescribeNodegroup %s/%s: %s", name, gn, awsnet.APIMessage(err))
			}
			o.Add(cluster.Resource{Kind: kindNodeGroup, Name: gn, ID: aws.ToString(out.Nodegroup.NodegroupArn), Fields: nodegroupFields(out.Nodegroup),
				DependsOn: append([]string{ck, awsnet.Key(kindRole, nodeRoleName(name))}, subnetsAndRoutes...)})
		}
	}
	ads := eks.NewListAddonsPaginator(s.eks, &eks.ListAddonsInput{ClusterName: aws.String(name)})
	for ads.HasMorePages() {
		page, err := ads.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("eks:ListAddons %s: %s", name, awsnet.APIMessage(err))
		}
		for _, an := range page.Addons {
			out, err := s.eks.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: aws.String(name), AddonName: aws.String(an)})
			if awsnet.APICode(err) == "ResourceNotFoundException" {
				continue
			}
			if err != nil {
				return fmt.Errorf("eks:DescribeAddon %s/%s: %s", name, an, awsnet.APIMessage(err))
			}
			o.Add(cluster.Resource{Kind: kindAddon, Name: an, ID: aws.ToString(out.Addon.AddonArn), Fields: map[string]string{"version": aws.ToString(out.Addon.AddonVersion)}, DependsOn: []string{ck}})
		}
	}
	return nil
}

func nodegroupFields(ng *ekstypes.Nodegroup) map[string]string {
	var labels, taints []string
	for k, v := range ng.Labels {
		labels = append(labels, k+"="+v)
	}
	for _, t := range ng.Taints {
		kv := aws.ToString(t.Key)
		if v := aws.ToString(t.Value); v != "" {
			kv += "=" + v
		}
		taints = append(taints, kv+":"+effects[t.Effect])
	}
	slices.Sort(labels)
	slices.Sort(taints)
	f := map[string]string{
		"instanceTypes": strings.Join(ng.InstanceTypes, ","),
		"capacity":      string(ng.CapacityType),
		"labels":        strings.Join(labels, ","),
		"taints":        strings.Join(taints, ","),
		"diskSize":      strconv.Itoa(int(aws.ToInt32(ng.DiskSize))),
		"version":       aws.ToString(ng.Version),
		"amiType":       string(ng.AmiType),
	}
	if sc := ng.ScalingConfig; sc != nil {
		f["min"] = strconv.Itoa(int(aws.ToInt32(sc.MinSize)))
		f["max"] = strconv.Itoa(int(aws.ToInt32(sc.MaxSize)))
		f["desired"] = strconv.Itoa(int(aws.ToInt32(sc.DesiredSize)))
	}
	return f
}

package cluster

import (
	"strings"
	"testing"
)

func res(kind, name string, fields map[string]string, deps ...string) Resource {
	return Resource{Kind: kind, Name: name, Fields: fields, DependsOn: deps}
}

func summary(p *Plan) string {
	var s []string
	for _, c := range p.Changes {
		line := string(c.Action) + " " + c.Key
		if c.Reason != "" {
			line += " (" + c.Reason + ")"
		}
		for _, f := range c.Fields {
			if c.Action != Create {
				line += " " + f.Field + ":" + f.Old + "->" + f.New
			}
		}
		s = append(s, line)
	}
	return strings.Join(s, "; ")
}

func TestDiff(t *testing.T) {
	cp := res("cp", "c", map[string]string{"version": "1.36"})
	cp.Replace = []string{"version"}
	ng := func(n, count string) Resource { return res("ng", n, map[string]string{"count": count}, "cp/c") }
	vpc := res("vpc", "v", map[string]string{"cidr": "10.0.0.0/16"})
	sub := res("subnet", "s", map[string]string{"cidr": "10.0.1.0/24"}, "vpc/v")
	tests := []struct {
		name            string
		desired, actual []Resource
		want            string
		unchanged       int
	}{
		{"all new, dependencies first", []Resource{sub, vpc}, nil, "create vpc/v; create subnet/s", 0},
		{"nothing to do", []Resource{cp, ng("a", "2")}, []Resource{cp, ng("a", "2")}, "", 2},
		{"scale", []Resource{cp, ng("a", "3")}, []Resource{cp, ng("a", "2")}, "update ng/a count:2->3", 1},
		{"replace", []Resource{res("cp", "c", map[string]string{"version": "1.37"})}, []Resource{cp}, "update cp/c version:1.36->1.37", 0},
		{"forced replace", func() []Resource { c := cp; c.Fields = map[string]string{"version": "1.37"}; return []Resource{c} }(), []Resource{cp}, "replace cp/c version:1.36->1.37", 0},
		{"removed group deleted last", []Resource{cp, ng("a", "1")}, []Resource{cp, ng("a", "1"), ng("b", "2")}, "delete ng/b", 2},
		{"foreign is a conflict, never deleted", []Resource{vpc}, []Resource{{Kind: "vpc", Name: "v", Foreign: true}, {Kind: "vpc", Name: "other", Foreign: true}}, "conflict vpc/v", 0},
		{"broken is replaced even when its fields match", []Resource{cp}, func() []Resource { c := cp; c.Broken = "half made"; return []Resource{c} }(), "replace cp/c (half made)", 0},
		{"actual-only fields ignored", []Resource{res("ng", "a", map[string]string{"count": "1"})}, []Resource{res("ng", "a", map[string]string{"count": "1", "status": "ACTIVE"})}, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Diff("c", "test", tt.desired, tt.actual)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(p); got != tt.want || p.Unchanged != tt.unchanged {
				t.Fatalf("plan %q (unchanged %d), want %q (unchanged %d)", got, p.Unchanged, tt.want, tt.unchanged)
			}
			if p.Empty() != (tt.want == "") {
				t.Fatalf("Empty() = %v", p.Empty())
			}
		})
	}
}

func TestDiffErrors(t *testing.T) {
	a := res("x", "a", nil, "x/b")
	b := res("x", "b", nil, "x/a")
	if _, err := Diff("c", "p", []Resource{a, b}, nil); err == nil || !strings.Contains(err.Error(), "dependency cycle: x/a -> x/b -> x/a") {
		t.Fatalf("cycle: %v", err)
	}
	if _, err := Diff("c", "p", []Resource{res("x", "a", nil, "x/zz")}, nil); err == nil || !strings.Contains(err.Error(), "depends on x/zz") {
		t.Fatalf("dangling: %v", err)
	}
	if _, err := Diff("c", "p", []Resource{res("x", "a", nil), res("x", "a", nil)}, nil); err == nil {
		t.Fatal("duplicate: no error")
	}
}

func TestDeleteAllOrder(t *testing.T) {
	actual := []Resource{
		res("vpc", "v", nil),
		res("subnet", "s1", nil, "vpc/v"),
		res("cluster", "c", nil, "subnet/s1", "role/r"),
		res("role", "r", nil),
		res("ng", "n", nil, "cluster/c"),
		{Kind: "vpc", Name: "theirs", Foreign: true},
	}
	p := DeleteAll("c", "p", actual)
	pos := map[string]int{}
	for i, c := range p.Changes {
		pos[c.Key] = i
	}
	if _, ok := pos["vpc/theirs"]; ok {
		t.Fatal("a foreign resource is in the delete plan")
	}
	for _, pair := range [][2]string{{"ng/n", "cluster/c"}, {"cluster/c", "subnet/s1"}, {"subnet/s1", "vpc/v"}, {"cluster/c", "role/r"}} {
		if pos[pair[0]] > pos[pair[1]] {
			t.Errorf("%s must be deleted before %s: %s", pair[0], pair[1], summary(p))
		}
	}
}

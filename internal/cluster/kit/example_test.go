package kit_test

import (
	"context"
	"fmt"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
)

// disks is a provider's executor of one change: its clients and the spec would be here.
type disks struct{ log []string }

func (d *disks) create(_ context.Context, ch cluster.Change) error {
	d.log = append(d.log, fmt.Sprintf("%s %s", ch.Action, ch.Key))
	return nil
}

func (d *disks) remove(_ context.Context, ch cluster.Change) error {
	d.log = append(d.log, "delete "+ch.Key)
	return nil
}

// A provider lists its resource kinds once, each with its handlers, and carries out every change
// of a plan through the table (its Execute delegates to Kinds.Execute).
func ExampleKinds() {
	kinds := kit.Kinds[*disks, any]{
		Provider: "example",
		ByKind: map[string]kit.Kind[*disks, any]{
			// A disk cannot be resized in place: a replace deletes it and creates it again.
			"disk": {Apply: (*disks).create, Delete: (*disks).remove, Recreate: true},
		},
	}
	x := &disks{}
	for _, ch := range []cluster.Change{
		{Action: cluster.Create, Key: "disk/data"},
		{Action: cluster.Replace, Key: "disk/data"},
		{Action: cluster.Delete, Key: "disk/data"},
		{Action: cluster.Create, Key: "tape/backup"},
	} {
		if err := kinds.Execute(context.Background(), x, ch); err != nil {
			x.log = append(x.log, err.Error())
		}
	}
	for _, l := range x.log {
		fmt.Println(l)
	}
	// Output:
	// create disk/data
	// delete disk/data
	// replace disk/data
	// delete disk/data
	// example provider: cannot create tape/backup
}

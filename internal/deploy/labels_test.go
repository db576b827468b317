package deploy

import (
	"testing"

	"github.com/nuv-dev/nuv/operator/controller"
)

func TestSelectorsMatchTheOperator(t *testing.T) {
	if want := controller.LabelManagedBy + "=" + controller.ManagedByValue; InstanceSelector != want {
		t.Errorf("InstanceSelector = %q, the operator labels %q", InstanceSelector, want)
	}
}

package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/reinhq/rein"
)

func policies(t *testing.T, s rein.Store) {
	for i, d := range []*rein.PolicyDoc{
		{Tenant: "", Version: "v1", Source: "rules: []", LoadedAt: t0, LoadedBy: "file", Origin: "file:p.yaml"},
		{Tenant: "acme", Version: "a1", Source: "x", LoadedAt: t0, LoadedBy: "pat", Origin: "api"},
		{Tenant: "", Version: "v2", Source: "rules: [1]", LoadedAt: t0.Add(time.Minute), LoadedBy: "file", Origin: "file:p.yaml"},
	} {
		if err := s.SavePolicy(ctx, d, entry(rein.KindPolicyUpdated, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Policies(ctx)
	if err != nil || len(list) != 2 || list[0].Tenant != "" || list[0].Version != "v2" || list[1].Version != "a1" || !list[0].LoadedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("policies: %+v %v; want the newest of each tier", list, err)
	}
}

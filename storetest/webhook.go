package storetest

import (
	"fmt"
	"testing"

	"github.com/reinhq/rein"
)

func deliveries(t *testing.T, s rein.Store) {
	for i := range 3 {
		if err := s.LogDelivery(ctx, &rein.WebhookDelivery{Target: "ops", MessageID: fmt.Sprint("msg_", i), EventID: int64(i), Attempt: 1, Status: 200, Delivered: true, At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Deliveries(ctx, 2)
	if err != nil || len(list) != 2 || list[0].MessageID != "msg_2" || !list[0].Delivered {
		t.Errorf("deliveries: %+v %v", list, err)
	}
}

package http_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/reinhq/rein"
)

func TestZZScratch(t *testing.T) {
	hits := 0
	for round := 0; round < 30; round++ {
		e := newEnv(t, globalPolicy)
		r2 := e.addKey("root2", rein.AllTenants, rein.RoleAdmin)
		var wg sync.WaitGroup
		start := make(chan struct{})
		res := make([]int, 2)
		for i, pair := range [][2]string{{"root", r2.ID}, {"root2", e.key("root").ID}} {
			wg.Add(1)
			go func(i int, by, id string) {
				defer wg.Done()
				<-start
				res[i] = e.do("DELETE", "/v1/keys/"+id, by, nil).Status
			}(i, pair[0], pair[1])
		}
		close(start)
		wg.Wait()
		n, _ := e.store.CountActiveKeys(e.ctx, "*", rein.RoleAdmin)
		if n == 0 { hits++ }
		fmt.Println(round, res, n)
	}
	t.Logf("hits %d", hits)
}

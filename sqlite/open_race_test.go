package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wieldhq/wield/sqlite"
)

// Processes that open a fresh database at the same moment (`wield call`
// waiting for an approval and `wield approvals list` from another
// terminal, on their first use) all open it: none fails with "locked by
// another connection" at once, without waiting out the busy timeout.
func TestOpenFreshDatabaseConcurrently(t *testing.T) {
	for round := range 20 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("w%d.db", round))
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := sqlite.Open(context.Background(), path, nil)
				if err != nil {
					errs <- err
					return
				}
				s.Close(context.Background())
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/postgres"
	"github.com/wieldhq/wield/storetest"
)

// TestStoretest runs the suite every store passes, in both durability
// modes, each subtest in a schema of its own.
func TestStoretest(t *testing.T) {
	postgres.NeedServer(t)
	for _, async := range []bool{false, true} {
		name := "sync"
		if async {
			name = "async"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The suite closes the stores it opens.
			open := func(t *testing.T, schema string) wield.Storage {
				s, err := postgres.Open(t.Context(), postgres.ServerDSN(),
					&postgres.Options{Schema: schema, Async: async, FlushInterval: 5 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			storetest.Run(t, storetest.Harness{
				Open: func(t *testing.T) wield.Storage { return open(t, postgres.FreshSchema(t)) },
				Reopen: func(t *testing.T, s wield.Storage) wield.Storage {
					if err := s.Close(context.Background()); err != nil {
						t.Fatal(err)
					}
					return open(t, s.(*postgres.Store).Schema())
				},
			})
		})
	}
}

package mcpbridge_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wieldhq/wield/mcpbridge"
	"golang.org/x/oauth2"
)

// Processes changing the token file at the same moment (wield serve
// refreshing, a login or logout beside it) each keep the other's change:
// a change reads, changes and writes the file while holding its lock, so
// none writes over a change made after it read.
func TestFileTokensConcurrentStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := mcpbridge.OpenFileTokens(path)
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 5 {
				server := fmt.Sprintf("s%d-%d", i, j)
				if err := f.SetToken(server, &mcpbridge.OAuthToken{Token: &oauth2.Token{AccessToken: server}}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	f, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for i := range n {
		for j := range 5 {
			server := fmt.Sprintf("s%d-%d", i, j)
			if tok, _ := f.Token(server); tok == nil {
				lost = append(lost, server)
			}
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d tokens lost to a concurrent change: %v", len(lost), n*5, lost)
	}
}

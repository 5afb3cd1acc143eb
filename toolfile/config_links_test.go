package toolfile

import (
	"strings"
	"testing"
)

// TestLoadConfigAllowHardLinks reads allow_hard_links: off unless written,
// and only a boolean.
func TestLoadConfigAllowHardLinks(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want bool
	}{
		{"allowed_paths: [.]\n", false},
		{"allowed_paths: [.]\nallow_hard_links: true\n", true},
		{"allow_hard_links: false\n", false},
	} {
		cfg, err := LoadConfig(writeConfig(t, tt.src))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.AllowHardLinks != tt.want {
			t.Errorf("%q: AllowHardLinks %v, want %v", tt.src, cfg.AllowHardLinks, tt.want)
		}
	}
	_, err := LoadConfig(writeConfig(t, "allow_hard_links: maybe\n"))
	if err == nil || !strings.Contains(err.Error(), "1:19") {
		t.Errorf("allow_hard_links: maybe: %v; want an error at 1:19", err)
	}
}

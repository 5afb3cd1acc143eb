package mcpbridge_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// impFreeLoopbackURL returns a callback URL on a loopback port that was
// free a moment ago.
func impFreeLoopbackURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/callback"
}

// impBrowse is the person's browser: it opens a URL and follows redirects.
func impBrowse(t *testing.T) func(string) {
	return func(u string) {
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Get(u)
		if err != nil {
			t.Errorf("browse %s: %v", u, err)
			return
		}
		resp.Body.Close()
	}
}

// The browser comes back to the importer's loopback listener, which
// completes the authorization code grant.
func TestAuthorizeOnLoopback(t *testing.T) {
	a := impNewAuthServer(t, nil)
	redirect := impFreeLoopbackURL(t)
	a.SetRedirect(redirect)
	reg := wield.NewRegistry(nil)
	im := impImporter(t, reg, &mcpbridge.ImportOptions{Permission: wield.PermissionAuto})
	err := im.AddOAuth(t.Context(), mcpbridge.ServerConfig{Name: "p", URL: a.RS.URL + "/mcp", Enabled: true},
		&mcpbridge.OAuthConfig{RedirectURL: redirect, Authorize: mcpbridge.AuthorizeOnLoopback(redirect, impBrowse(t))})
	if err != nil {
		t.Fatalf("AddOAuth: %v", err)
	}
	if r := impCall(t, impEngine(t, reg), "p__whoami", `{}`); !r.OK {
		t.Errorf("call: %s", r.Error)
	}
}

func TestAuthorizeOnLoopbackFailures(t *testing.T) {
	redirect := impFreeLoopbackURL(t)
	tests := []struct {
		name     string
		redirect string
		show     func(t *testing.T) func(string)
		timeout  time.Duration
		want     string
	}{
		{"refused", redirect, func(t *testing.T) func(string) {
			return func(string) { impBrowse(t)(redirect + "?error=access_denied") }
		}, 10 * time.Second, "access_denied"},
		{"never back", redirect, func(*testing.T) func(string) { return func(string) {} }, 50 * time.Millisecond, "no redirect came back"},
		{"not loopback", "http://192.0.2.1:8080/callback", impNotShown, 10 * time.Second, "not an http URL on a loopback address"},
		{"no port", "http://127.0.0.1/callback", impNotShown, 10 * time.Second, "with a port"},
		{"https", "https://localhost:8443/callback", impNotShown, 10 * time.Second, "not an http URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
			defer cancel()
			r, err := mcpbridge.AuthorizeOnLoopback(tt.redirect, tt.show(t))(ctx, "http://127.0.0.1:1/authorize")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AuthorizeOnLoopback = %+v, %v; want an error containing %q", r, err, tt.want)
			}
			if tt.name == "never back" && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not wrap the context's", err)
			}
		})
	}
}

// impNotShown fails the test if the authorization URL is shown.
func impNotShown(t *testing.T) func(string) {
	return func(string) { t.Error("the authorization URL was shown for a redirect URL that cannot work") }
}

// A visit to the callback with another state than the authorization URL's
// (a page of another origin, another program on the machine) is refused
// and does not end the wait: the person's redirect, which comes after it,
// is the one returned.
func TestAuthorizeOnLoopbackForgedState(t *testing.T) {
	redirect := impFreeLoopbackURL(t)
	var forged int
	show := func(string) {
		for _, q := range []string{"?code=forged&state=other", "?code=forged", "?error=access_denied&state=other"} {
			resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(redirect + q)
			if err != nil {
				t.Errorf("forged visit %s: %v", q, err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusBadRequest {
				forged++
			}
		}
		impBrowse(t)(redirect + "?code=real&state=s3cret")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	r, err := mcpbridge.AuthorizeOnLoopback(redirect, show)(ctx, "http://127.0.0.1:1/authorize?response_type=code&state=s3cret")
	if err != nil || r.Code != "real" || r.State != "s3cret" {
		t.Fatalf("AuthorizeOnLoopback = %+v, %v; want the code of the visit with the authorization URL's state", r, err)
	}
	if forged != 3 {
		t.Errorf("%d of 3 forged visits were answered 400", forged)
	}
}

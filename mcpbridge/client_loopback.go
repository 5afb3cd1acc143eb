package mcpbridge

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// AuthorizeOnLoopback returns an [OAuthConfig].Authorize for a program run
// by a person on their own machine (a native app, RFC 8252 §7.3): each time
// it is called it listens at redirectURL, which must be an http URL on
// loopback (127.0.0.1, [::1] or localhost) with a fixed port, calls show
// with the authorization URL (print it, or open a browser on it), and waits
// for the browser to come back to redirectURL's path with the state of
// authURL: a visit with another state (a page of another origin, another
// program on the machine) is answered 400 and does not end the wait. It
// returns what the redirect carried, an error for a refusal, and ctx's
// error when ctx ends first.
func AuthorizeOnLoopback(redirectURL string, show func(authURL string)) func(ctx context.Context, authURL string) (*OAuthRedirect, error) {
	return func(ctx context.Context, authURL string) (*OAuthRedirect, error) {
		u, err := url.Parse(redirectURL)
		if err != nil {
			return nil, fmt.Errorf("authorize on loopback: %w", err)
		}
		host := u.Hostname()
		if host == "localhost" {
			host = "127.0.0.1"
		}
		if ip := net.ParseIP(host); u.Scheme != "http" || ip == nil || !ip.IsLoopback() || u.Port() == "" {
			return nil, fmt.Errorf("authorize on loopback: %q is not an http URL on a loopback address with a port", redirectURL)
		}
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(host, u.Port()))
		if err != nil {
			return nil, fmt.Errorf("authorize on loopback: %w", err)
		}
		// The state the authorization server must send back (RFC 6749
		// §4.1.2, §10.12): the handshake checks it again; here it keeps a
		// forged visit from taking the place of the person's.
		var state string
		if au, err := url.Parse(authURL); err == nil {
			state = au.Query().Get("state")
		}
		path := u.EscapedPath()
		if path == "" {
			path = "/"
		}
		type outcome struct {
			r   *OAuthRedirect
			err error
		}
		done := make(chan outcome, 1)
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.URL.EscapedPath() != path || req.Method != http.MethodGet {
				http.NotFound(w, req)
				return
			}
			if got := req.URL.Query().Get("state"); subtle.ConstantTimeCompare([]byte(got), []byte(state)) != 1 {
				http.Error(w, "Not the authorization wield is waiting for (its state differs); nothing was done.", http.StatusBadRequest)
				return
			}
			r, err := ParseOAuthRedirect(req.URL.String())
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintln(w, "Authorization failed; you can close this window.")
			} else {
				fmt.Fprintln(w, "Authorized; you can close this window.")
			}
			select {
			case done <- outcome{r, err}:
			default: // a second visit of the same state: the first one counts
			}
		})}
		go func() { _ = srv.Serve(ln) }()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if srv.Shutdown(sctx) != nil {
				_ = srv.Close()
			}
		}()
		show(authURL)
		select {
		case o := <-done:
			if o.err != nil {
				return nil, fmt.Errorf("authorize on loopback: %w", o.err)
			}
			return o.r, nil
		case <-ctx.Done():
			return nil, errors.Join(errors.New("authorize on loopback: no redirect came back"), ctx.Err())
		}
	}
}

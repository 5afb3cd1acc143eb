// Package otlphttp sends traces to an OpenTelemetry collector over OTLP/HTTP:
// an [sdktrace.SpanExporter] that does what otlptrace's exporter over
// otlptracehttp's client does, configured from the same OTEL_EXPORTER_OTLP_*
// variables, without their dependencies.
//
// otlptracehttp shares its configuration code with the gRPC exporter, so it
// links google.golang.org/grpc (and through it golang.org/x/net/trace and
// html/template) into every program that only speaks HTTP: 3.7 MB of the
// wield binary (63.2 MB with it, 59.4 MB without, Go 1.26, linux/amd64).
// otlptrace converts the spans into the generated types of
// go.opentelemetry.io/proto/otlp, which bring the protobuf runtime, whose
// package initialisation builds the descriptors of every generated file at
// each start. So the spans are written here straight from the SDK's
// [sdktrace.ReadOnlySpan] into an ExportTraceServiceRequest, in protobuf
// (http/protobuf, the default) or in the OTLP JSON encoding (http/json), as
// otlptrace's transform and the generated code would write them; and the
// endpoint, headers, TLS files, insecure flag, compression, protocol and
// timeout are read from the environment as otlptracehttp reads them, with
// its retries of 429, 502, 503 and 504 (Retry-After honoured, 5 s growing to
// 30 s, for a minute at most), its partial-success errors and its proxy from
// the environment.
package otlphttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

const (
	defaultEndpoint = "localhost:4318"
	defaultPath     = "/v1/traces"
	defaultTimeout  = 10 * time.Second
	// The retry schedule of otlptracehttp.
	retryInitial    = 5 * time.Second
	retryMax        = 30 * time.Second
	retryMaxElapsed = time.Minute
	// maxResponse bounds what is read of a collector's answer.
	maxResponse = 64 << 10
)

// errInsecureWithTLS is otlptracehttp's refusal of TLS files for an http://
// endpoint.
var errInsecureWithTLS = errors.New("insecure HTTP endpoint cannot use TLS client configuration")

// config is what the environment says.
type config struct {
	host, path string
	insecure   bool
	tls        *tls.Config
	headers    map[string]string
	gzip       bool
	json       bool
	timeout    time.Duration
}

// Exporter is an [sdktrace.SpanExporter] over OTLP/HTTP. Its zero value is
// not usable: make one with [New].
type Exporter struct {
	cfg  config
	http *http.Client
	stop chan struct{}
	once sync.Once
	// sleepy waits between attempts and now tells the time; tests make
	// both fake.
	sleepy func(context.Context, time.Duration) error
	now    func() time.Time
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)

// New reads the configuration from the environment
// (OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _HEADERS, _TIMEOUT, _COMPRESSION,
// _PROTOCOL, _INSECURE, _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY) and
// makes the exporter. A value that cannot be read is reported to otel's
// error handler and left out, as otlptracehttp does; TLS files for an
// insecure endpoint are an error, as is a ctx already done.
func New(ctx context.Context) (*Exporter, error) {
	cfg := fromEnv(os.Getenv, os.ReadFile)
	if cfg.insecure && cfg.tls != nil {
		return nil, errInsecureWithTLS
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = http.ProxyFromEnvironment
	if cfg.tls != nil {
		t.TLSClientConfig = cfg.tls
	}
	return &Exporter{cfg: cfg, http: &http.Client{Transport: t, Timeout: cfg.timeout}, stop: make(chan struct{}), sleepy: sleep, now: time.Now}, nil
}

func fromEnv(getenv func(string) string, readFile func(string) ([]byte, error)) config {
	cfg := config{host: defaultEndpoint, path: defaultPath, timeout: defaultTimeout}
	env := func(name string) (string, bool) {
		v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + name))
		return v, v != ""
	}
	endpoint := func(name string, join bool) {
		v, ok := env(name)
		if !ok {
			return
		}
		u, err := url.Parse(v)
		if err != nil {
			otel.Handle(fmt.Errorf("OTEL_EXPORTER_OTLP_%s: %w", name, err))
			return
		}
		s := strings.ToLower(u.Scheme)
		cfg.insecure = s == "http" || s == "unix"
		cfg.host = u.Host
		switch {
		case join:
			cfg.path = path.Join(u.Path, defaultPath)
		case u.Path == "":
			cfg.path = "/"
		default:
			cfg.path = u.Path
		}
	}
	endpoint("ENDPOINT", true)
	endpoint("TRACES_ENDPOINT", false)
	tc := &tls.Config{}
	for _, p := range []string{"", "TRACES_"} {
		if v, ok := env(p + "CERTIFICATE"); ok {
			b, err := readFile(v)
			pool := x509.NewCertPool()
			switch {
			case err != nil:
				otel.Handle(fmt.Errorf("read tls ca cert file: %w", err))
			case !pool.AppendCertsFromPEM(b):
				otel.Handle(fmt.Errorf("create tls cert pool from %s: no certificate", v))
			default:
				tc.RootCAs = pool
			}
		}
	}
	for _, p := range []string{"", "TRACES_"} {
		vc, okc := env(p + "CLIENT_CERTIFICATE")
		vk, okk := env(p + "CLIENT_KEY")
		if !okc || !okk {
			continue
		}
		cert, err := readFile(vc)
		if err != nil {
			otel.Handle(fmt.Errorf("read tls client cert: %w", err))
			continue
		}
		key, err := readFile(vk)
		if err != nil {
			otel.Handle(fmt.Errorf("read tls client key: %w", err))
			continue
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			otel.Handle(fmt.Errorf("create tls client key pair: %w", err))
			continue
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	if tc.RootCAs != nil || len(tc.Certificates) > 0 {
		cfg.tls = tc
	}
	for _, p := range []string{"", "TRACES_"} {
		if v, ok := env(p + "INSECURE"); ok {
			cfg.insecure = strings.EqualFold(v, "true")
		}
	}
	for _, p := range []string{"", "TRACES_"} {
		if v, ok := env(p + "HEADERS"); ok {
			cfg.headers = headers(v)
		}
		if v, ok := env(p + "COMPRESSION"); ok {
			cfg.gzip = v == "gzip"
		}
		if v, ok := env(p + "PROTOCOL"); ok {
			cfg.json = v == "http/json"
		}
		if v, ok := env(p + "TIMEOUT"); ok {
			ms, err := strconv.Atoi(v)
			if err != nil {
				otel.Handle(fmt.Errorf("OTEL_EXPORTER_OTLP_%sTIMEOUT: %w", p, err))
				continue
			}
			cfg.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	return cfg
}

// headers reads "k1=v1,k2=v2" with URL-escaped values.
func headers(s string) map[string]string {
	h := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r > '~' || strings.ContainsRune(`()<>@,;:\"/[]?={}`, r) }) {
			otel.Handle(fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %q is not key=value", pair))
			continue
		}
		v, err := url.PathUnescape(v)
		if err != nil {
			otel.Handle(fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %w", err))
			continue
		}
		h[k] = strings.TrimSpace(v)
	}
	return h
}

// Shutdown ends the uploads under way; the exports after it fail at once.
// Only the first call reports ctx's error, as otlptrace's exporter does.
func (c *Exporter) Shutdown(ctx context.Context) error {
	var err error
	c.once.Do(func() {
		close(c.stop)
		err = ctx.Err()
	})
	return err
}

// URL is where the spans go.
func (c *Exporter) URL() string {
	scheme := "https"
	if c.cfg.insecure {
		scheme = "http"
	}
	return (&url.URL{Scheme: scheme, Host: c.cfg.host, Path: c.cfg.path}).String()
}

// ExportSpans sends one batch, retrying what the collector says it may. Its
// errors start "traces export:", as otlptrace's do.
func (c *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	groups := group(spans)
	if len(groups) == 0 {
		return nil
	}
	if err := c.upload(ctx, groups); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

func (c *Exporter) upload(ctx context.Context, groups []*resourceSpans) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var body []byte
	var err error
	ctype := "application/x-protobuf"
	if c.cfg.json {
		ctype = "application/json"
		body, err = marshalJSON(groups)
	} else {
		body = marshalRequest(groups)
	}
	if err != nil {
		return fmt.Errorf("marshal spans: %w", err)
	}
	if c.cfg.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		if err := zw.Close(); err != nil {
			return err
		}
		body = b.Bytes()
	}
	start := c.now()
	for attempt := 0; ; attempt++ {
		throttle, err := c.send(ctx, body, ctype)
		if err == nil || throttle < 0 {
			return err
		}
		d := backoff(attempt)
		d = max(d, throttle)
		if c.now().Sub(start)+d > retryMaxElapsed {
			return fmt.Errorf("max retry time elapsed: %w", err)
		}
		if werr := c.sleepy(ctx, d); werr != nil {
			return errors.Join(err, werr)
		}
	}
}

// send makes one attempt. throttle is negative when the error is final,
// else the wait the collector asked for (0 when it did not say).
func (c *Exporter) send(ctx context.Context, body []byte, ctype string) (throttle time.Duration, err error) {
	u := c.URL()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	// otlptrace's version, which is otel's: they are released together.
	req.Header.Set("User-Agent", "OTel OTLP Exporter Go/"+otel.Version())
	for k, v := range c.cfg.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", ctype)
	if c.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	res, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Temporary() && ctx.Err() == nil {
			return 0, err
		}
		return -1, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxResponse))
	if err != nil {
		return -1, err
	}
	if res.StatusCode >= 200 && res.StatusCode <= 299 {
		return -1, partialSuccess(res.Header.Get("Content-Type"), data)
	}
	msg := strings.TrimSpace(string(data))
	if msg == "" {
		msg = "(empty)"
	}
	switch res.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return retryAfter(res.Header.Get("Retry-After")), fmt.Errorf("retry-able request failure: body: %s", msg)
	}
	return -1, fmt.Errorf("failed to send to %s: %s (body: %s)", u, res.Status, msg)
}

// partialSuccess is the error of a 2xx answer that says spans were
// rejected.
func partialSuccess(ctype string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	var n int64
	var msg string
	switch ctype {
	case "application/x-protobuf":
		var err error
		if n, msg, err = unmarshalResponse(data); err != nil {
			return err
		}
	case "application/json":
		var err error
		if n, msg, err = unmarshalJSONResponse(data); err != nil {
			return err
		}
	default:
		return nil
	}
	if n == 0 && msg == "" {
		return nil
	}
	return fmt.Errorf("OTLP partial success: %s (%d spans rejected)", msg, n)
}

// backoff is the exponential schedule of otlptracehttp: 5 s growing by
// half each time up to 30 s, randomized by half either way.
func backoff(attempt int) time.Duration {
	d := float64(retryInitial)
	for range attempt {
		d *= 1.5
		if d > float64(retryMax) {
			d = float64(retryMax)
			break
		}
	}
	return time.Duration(d * (0.5 + rand.Float64()))
}

func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return time.Duration(min(s, int64(retryMaxElapsed/time.Second)+1)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

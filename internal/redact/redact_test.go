package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMatch(t *testing.T) {
	yes := []string{"authorization", "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key",
		"x_api_key", "api-key", "apiKey", "XApiKey", "APIKey", "apikey", "github_token", "GITHUB_TOKEN", "accessToken",
		"IDToken", "client_secret", "db.password", "user_password_hash", "sessionid", "session_id", "X-Auth-Token",
		"refresh_token", "private_key", "X-Amz-Signature", "passwd"}
	no := []string{"max_tokens", "tokens", "keyboard", "monkey", "author", "cookies_enabled_count_x", "user", "url",
		"headers", "passwords_count", "secretary", "", "page", "Content-Type", "x-trace-id"}
	for _, k := range yes {
		if !Default.Match(k) {
			t.Errorf("Match(%q) = false, want true", k)
		}
	}
	for _, k := range no {
		if Default.Match(k) {
			t.Errorf("Match(%q) = true, want false", k)
		}
	}
	extra := New(DefaultNames, []string{"PIN", " "})
	if !extra.Match("pin") || !extra.Match("user-pin") || !extra.Match("api_key") {
		t.Error("a name added to the defaults does not match, or the defaults were lost")
	}
	var none *Names
	if none.Match("password") || none.MayHold([]byte("password")) || none.Text("password=x") != "password=x" {
		t.Error("a nil set matched")
	}
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://api.example.com/v1?api_key=s3cret&page=2", "https://api.example.com/v1?api_key=[REDACTED]&page=2"},
		{"https://h/x?page=2&token=abc#frag", "https://h/x?page=2&token=[REDACTED]#frag"},
		{"https://user:hunter2@h.example/x", "https://[REDACTED]@h.example/x"},
		{"https://TOKEN@github.com/o/r.git", "https://[REDACTED]@github.com/o/r.git"},
		{"see http://a:b@h/ and ftp://c:d@e/ now", "see http://[REDACTED]@h/ and ftp://[REDACTED]@e/ now"},
		{"grant_type=password&client_secret=xyz&password=p", "grant_type=password&client_secret=[REDACTED]&password=[REDACTED]"},
		{"sid=abc; session=def; theme=dark", "sid=abc; session=[REDACTED]; theme=dark"},
		{"GET http://h/?X-Amz-Signature=ab12&X-Amz-Date=1", "GET http://h/?X-Amz-Signature=[REDACTED]&X-Amz-Date=1"},
		{"a == b, max_tokens=5, token=", "a == b, max_tokens=5, token="},
		{"url \"http://h/?apiKey=k1\" is bad", "url \"http://h/?apiKey=[REDACTED]\" is bad"},
		{"https://h/x?api_key=[REDACTED]", "https://h/x?api_key=[REDACTED]"},
		{"https://[REDACTED]@h/", "https://[REDACTED]@h/"},
		{"mail ann@example.com", "mail ann@example.com"},
		{"https://example.com/@ann", "https://example.com/@ann"},
	}
	for _, tt := range tests {
		if got := Default.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		keys           []string
	}{
		{"header map", `{"url":"https://h/?api_key=s3cret&page=2","headers":{"X-Api-Key":"s3cret","Cookie":"sid=abc","Accept":"text/html"}}`,
			`{"headers":{"Accept":"text/html","Cookie":"[REDACTED]","X-Api-Key":"[REDACTED]"},"url":"https://h/?api_key=[REDACTED]&page=2"}`, nil},
		{"output headers", `{"status":200,"url":"http://u:p@h/d?token=t","headers":{"Set-Cookie":"sid=abc","Content-Type":"application/json"},"body":{"rows":3}}`,
			`{"body":{"rows":3},"headers":{"Content-Type":"application/json","Set-Cookie":"[REDACTED]"},"status":200,"url":"http://[REDACTED]@h/d?token=[REDACTED]"}`, nil},
		{"deep and in arrays", `{"a":[{"b":{"password":"p","n":1}},"x?token=t"]}`, `{"a":[{"b":{"n":1,"password":"[REDACTED]"}},"x?token=[REDACTED]"]}`, nil},
		{"JSON in a string", `{"body":"{\"password\":\"p\",\"user\":\"ann\"}"}`, `{"body":"{\"password\":\"[REDACTED]\",\"user\":\"ann\"}"}`, nil},
		{"tool's own keys", `{"pin":"1234","user":"ann"}`, `{"pin":"[REDACTED]","user":"ann"}`, []string{"pin"}},
		{"a string output", `"https://h/?access_token=t1"`, `"https://h/?access_token=[REDACTED]"`, nil},
		{"not JSON", `GET https://h/?token=t1`, `GET https://h/?token=[REDACTED]`, nil},
	}
	for _, tt := range tests {
		got, changed := Default.JSON([]byte(tt.in), tt.keys)
		if !changed || string(got) != tt.want {
			t.Errorf("%s: JSON(%s)\n got %s (changed %v)\nwant %s", tt.name, tt.in, got, changed, tt.want)
		}
	}
	for _, in := range []string{`{"max_tokens":5,"text":"hello"}`, `{"email":"ann@example.com"}`, ``, `[1,2]`, `{"token":""}`, `{"token":null}`} {
		got, changed := Default.JSON([]byte(in), nil)
		if changed || string(got) != in {
			t.Errorf("JSON(%s) = %s, changed %v: want it as it was", in, got, changed)
		}
	}
	in := []byte(`{"token":"t"}`)
	Default.JSON(in, nil)
	if string(in) != `{"token":"t"}` {
		t.Error("JSON changed its input")
	}
}

// TestMayHold: the quick look never misses what JSON would redact.
func TestMayHold(t *testing.T) {
	for _, s := range []string{`{"X-Api-Key":"k"}`, `{"apiKey":"k"}`, `{"APIKEY":"k"}`, `"http://u:p@h/"`, `{"Set-Cookie":"a"}`, `{"IDToken":"x"}`} {
		if !Default.MayHold([]byte(s)) {
			t.Errorf("MayHold(%s) = false", s)
		}
		if _, changed := Default.JSON([]byte(s), nil); !changed {
			t.Errorf("JSON(%s) changed nothing", s)
		}
	}
	if Default.MayHold([]byte(`{"text":"hello world","n":5}`)) {
		t.Error("MayHold of plain text = true")
	}
	long := []byte(`{"text":"` + strings.Repeat("a", 5000) + `","Password":"x"}`)
	if !Default.MayHold(long) {
		t.Error("MayHold of a long text with a secret = false")
	}
	var v any
	if out, _ := Default.JSON(long, nil); json.Unmarshal(out, &v) != nil || !strings.Contains(string(out), Mark) {
		t.Errorf("JSON of a long text: %.80s", out)
	}
	if d := cmp.Diff([]string{"authorization"}, New([]string{"Authorization", "authorization"}).words); d != "" {
		t.Errorf("names (-want +got)\n%s", d)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"https://u:p@h/?token=t&x=1", "a=b&password=c", "://@", "=", "x://a@b://c@d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Default.Text(s)
		if again := Default.Text(out); again != out {
			t.Errorf("Text is not stable: %q → %q → %q", s, out, again)
		}
	})
}

// TestTextJSONMembers: the values of secret members of JSON that a message
// quotes are replaced, also when that JSON sits in a JSON string or is cut
// short; other members and look-alikes are left.
func TestTextJSONMembers(t *testing.T) {
	tests := []struct{ in, want string }{
		{`message: expected string, got object {"password":"hunter2"}`, `message: expected string, got object {"password":"[REDACTED]"}`},
		{`got object {"user":"ann", "api_key" : "k1", "n":2}`, `got object {"user":"ann", "api_key" : "[REDACTED]", "n":2}`},
		{`got object {"pin":1234,"token":true}`, `got object {"pin":1234,"token":"[REDACTED]"}`},
		{`got object {"a":{"secret":{"x":1,"y":"s]}"},"b":[1]}}`, `got object {"a":{"secret":"[REDACTED]","b":[1]}}`},
		{`got object {"tokens":[1,2],"token":["a","b"],"c":3}`, `got object {"tokens":[1,2],"token":"[REDACTED]","c":3}`},
		{`got string "{\"password\":\"hun\\\"ter2\",\"user\":\"ann\"}"`, `got string "{\"password\":\"[REDACTED]\",\"user\":\"ann\"}"`},
		{`got object {"password":"hunter2 and more text that was cut…`, `got object {"password":"[REDACTED]"`},
		{`got object {"password":"[REDACTED]","token":null}`, `got object {"password":"[REDACTED]","token":null}`},
		{`got object {"max_tokens":5,"passwords_count":2}`, `got object {"max_tokens":5,"passwords_count":2}`},
		{`a "quoted" word: "token" said`, `a "quoted" word: "token" said`},
		{`"`, `"`},
		{`"password":`, `"password":`},
	}
	for _, tt := range tests {
		if got := Default.Text(tt.in); got != tt.want {
			t.Errorf("Text(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

// TestJSONDeep: a secret nested deeper than the walk goes is not kept: the
// part past the limit is replaced whole; shallower secrets as always.
func TestJSONDeep(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 200) + `{"password":"hunter2"}` + strings.Repeat(`}`, 200)
	out, changed := Default.JSON([]byte(`{"password":"p","deep":`+deep+`}`), nil)
	if !changed || strings.Contains(string(out), "hunter2") || strings.Contains(string(out), `"p"`) {
		t.Errorf("JSON of a deep value keeps a secret: %.200s…", out)
	}
	if !json.Valid(out) {
		t.Errorf("not JSON: %.200s…", out)
	}
}

package gotmpl

import (
	"encoding/json"
	"strings"
	"testing"
	"text/template"
)

var testFuncs = map[string]Func{"json": {Args: 1, Call: func(args ...any) (any, error) {
	b, err := json.Marshal(args[0])
	return string(b), err
}}}

var stdFuncs = template.FuncMap{"json": func(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}}

const testData = `{"name": "Ada", "n": 3, "f": 1.5, "big": 1e21, "t": true, "no": false, "null": null, "empty": "",
	"list": [1, "two", {"k": "v"}, null], "none": [], "obj": {"b": 2, "a": "x<y&'z'\"", "c": [true]},
	"nested": {"deep": {"er": "yes"}}, "s": "héllo wörld=1&x", "ctl": "a\u0000b\u0007c"}`

// corpus is templates that run the same here and under text/template
// (with missingkey=zero, "<no value>" removed).
var corpus = []string{
	"plain text",
	// {{template}} without data: its fields are missing, not a null's.
	`{{define "x"}}0{{.A.B}}{{.A "0"}}[{{.}}]{{end}}{{template "x"}}`,
	"",
	"Hello {{.name}}!",
	"{{.}}",
	"{{.n}} {{.f}} {{.big}} {{.t}} {{.no}} [{{.null}}] [{{.missing}}] [{{.empty}}]",
	"{{.list}} {{.none}} {{.obj}}",
	"{{.nested.deep.er}} {{.obj.b}} {{.obj.missing}}",
	"{{json .obj}} {{json .list}} {{json .name}} {{json .missing}} {{.obj | json}}",
	"{{if .t}}yes{{else}}no{{end}} {{if .no}}yes{{else if .n}}n{{else}}none{{end}}",
	"{{if .missing}}x{{end}}{{if .none}}x{{else}}empty{{end}}{{if .obj}}obj{{end}}",
	"{{with .nested}}{{.deep.er}}{{end}} {{with .missing}}x{{else}}no{{end}} {{with $x := .obj}}{{$x.b}}{{end}}",
	"{{range .list}}[{{.}}]{{end}}",
	"{{range $i, $e := .list}}{{$i}}={{$e}};{{end}}",
	"{{range $k, $v := .obj}}{{$k}}:{{$v}},{{end}}",
	"{{range .none}}x{{else}}nothing{{end}} {{range .missing}}x{{else}}no{{end}}",
	"{{range $e := .list}}{{if eq (print $e) \"two\"}}{{break}}{{end}}{{$e}}{{end}}",
	"{{range .list}}{{if not .}}{{continue}}{{end}}<{{.}}>{{end}}",
	"{{range 3}}{{.}}{{end}}",
	"{{$x := 1}}{{range .list}}{{$x = .}}{{end}}{{$x}}",
	"{{$n := .name}}{{$n}} {{$.name}} {{with .obj}}{{$.name}}{{end}}",
	"{{len .name}} {{len .list}} {{len .obj}} {{len .none}}",
	"{{index .list 1}} {{index .obj \"b\"}} {{index .obj \"zz\"}} {{index .obj.c 0}} {{index . \"name\"}}",
	"{{slice .name 1 3}} {{slice .list 1}} {{slice .name}}",
	"{{eq .name \"Ada\"}} {{eq .name \"x\" \"Ada\"}} {{ne .name \"Ada\"}} {{eq .n 3.0}} {{eq .t true}} {{eq .null .missing}}",
	"{{lt .n 4.0}} {{le .n 3.0}} {{gt .n 3.0}} {{ge .n 3.0}} {{lt .name \"B\"}} {{lt 1 2}} {{gt 2 1}}",
	"{{and .t .n}} {{and .t .no .n}} {{or .no .empty .name}} {{or .no .empty}} {{not .t}} {{not .missing}}",
	"{{print .name .n}} {{print .missing}} {{printf \"%s is %v (%.1f)\" .name .n .f}} {{println .name}}",
	"{{html .obj.a}} {{js .obj.a}} {{js .s}} {{urlquery .s}} {{html .ctl}} {{js .ctl}}",
	"{{.name | printf \"%q\"}} {{.n | print \"n=\"}} {{\"x\" | html}}",
	"{{1}} {{1.5}} {{0x10}} {{'a'}} {{1e3}} {{-2}} {{\"str\"}} {{true}} {{`raw`}}",
	"{{define \"T\"}}<{{.}}>{{end}}{{template \"T\" .name}}{{template \"T\" .n}}",
	"{{block \"B\" .obj}}{{.b}}{{end}}",
	"{{/* a comment */}}x{{- \" trimmed \" -}} y",
	"{{(index .list 2).k}} {{(.nested).deep.er}}",
	"{{with .list}}{{index . 0}}{{end}} {{range .obj.c}}{{if .}}T{{end}}{{end}}",
	"{{if and .name (eq .name \"Ada\")}}ok{{end}} {{if or .missing .t}}ok2{{end}}",
	"{{$x := .obj}}{{$x.a}} {{$y := .missing}}[{{$y}}]",
	"{{printf \"%d\" 5}} {{printf \"%v\" .list}} {{printf \"%T\" .n}}",
	"{{print nil}} {{printf \"%v\" nil}} {{json nil}} {{html nil}} {{eq .n nil}} {{eq nil .n}} {{ne .n nil}} {{and nil 1}} {{not nil}} {{or nil 2}}",
}

// errCorpus fails in both.
var errCorpus = []string{
	"{{.name.first}}",
	"{{.missing.x}}",
	"{{len .n}}",
	"{{index .list 10}}",
	"{{index .n 1}}",
	"{{eq .n 3}}",
	"{{lt .t .no}}",
	"{{range .n}}x{{end}}",
	"{{.name 1}}",
	"{{1 2}}",
	"{{not}}",
	"{{ne 1}}",
	"{{slice .name 3 1}}",
	"{{printf .n}}",
	"{{template \"nope\"}}",
	"{{eq .list .list}}",
	"{{$u}}",
	"{{len nil}}",
	"{{lt nil 1}}",
	"{{index nil 1}}",
	"{{nofunc .x}}",
	"{{if}}",
}

func decode(t *testing.T) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal([]byte(testData), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func runStd(text string, data any) (string, error) {
	st, err := template.New("t").Funcs(stdFuncs).Option("missingkey=zero").Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := st.Execute(&b, data); err != nil {
		return "", err
	}
	return strings.ReplaceAll(b.String(), "<no value>", ""), nil
}

func run(text string, data any) (string, error) {
	t, err := Parse("t", text, testFuncs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = t.Execute(&b, data)
	return b.String(), err
}

func TestSameAsTextTemplate(t *testing.T) {
	data := decode(t)
	for _, text := range corpus {
		want, err := runStd(text, data)
		if err != nil {
			t.Fatalf("text/template %q: %v", text, err)
		}
		got, err := run(text, data)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if got != want {
			t.Errorf("%q:\n got %q\nwant %q", text, got, want)
		}
	}
}

func TestErrorsAsTextTemplate(t *testing.T) {
	data := decode(t)
	for _, text := range errCorpus {
		_, stdErr := runStd(text, data)
		if stdErr == nil {
			t.Fatalf("text/template %q: no error", text)
		}
		_, err := run(text, data)
		if err == nil {
			t.Errorf("%q: no error (text/template: %v)", text, stdErr)
			continue
		}
		if !strings.HasPrefix(err.Error(), "template: t:") {
			t.Errorf("%q: error %q does not say where", text, err)
		}
	}
}

func TestDepthBounded(t *testing.T) {
	_, err := run(`{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}`, map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "maximum template depth") {
		t.Fatalf("err = %v", err)
	}
}

func TestOnlyDefinitions(t *testing.T) {
	got, err := run(`{{define "x"}}y{{end}}`, nil)
	if err != nil || got != "" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestFuncError(t *testing.T) {
	bad := map[string]Func{"boom": {Call: func(args ...any) (any, error) { return nil, errBreak }}}
	tp, err := Parse("t", "a{{boom}}", bad)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tp.Execute(&b, nil); err == nil || !strings.Contains(err.Error(), "error calling boom") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzSameAsTextTemplate(f *testing.F) {
	for _, c := range corpus {
		f.Add(c)
	}
	// Templates that call templates: ending, without end, branching.
	for _, c := range []string{
		`{{define "x"}}[{{.}}]{{end}}{{template "x" .name}}`,
		`{{block "b" .}}{{len .}}{{end}}`,
		`{{define "x"}}{{template "x" .}}{{end}}{{template "x" .}}`,
		`{{block "b" .}}{{template "b" .}}{{end}}`,
		`{{define "x"}}{{if .}}{{template "x" (slice . 1)}}{{template "x" (slice . 1)}}{{end}}{{end}}{{template "x" .list}}`,
		`{{range 1000000000000}}{{end}}`,
	} {
		f.Add(c)
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(testData), &data); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "<no value>") || strings.Contains(text, "call") || len(text) > 200 {
			return // differences documented in the package comment
		}
		// Ours first: it is bounded, so a template that recurses ({{template}}
		// or {{block}} calling itself) or ranges without end stops with an
		// error saying which bound it met, never a stack overflow. Only then
		// is text/template, which has no such bounds, asked the same.
		got, err := run(text, data)
		if err != nil && boundMet(err) {
			return
		}
		want, stdErr := runStd(text, data)
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("%q: err %v, text/template err %v", text, err, stdErr)
		}
		if err == nil && got != want {
			t.Fatalf("%q:\n got %q\nwant %q", text, got, want)
		}
	})
}

// boundMet reports whether err is an execution stopped by one of the
// package's bounds, which text/template lacks (its depth limit is 100,000).
func boundMet(err error) bool {
	for _, b := range []string{"exceeded maximum template depth", "template stopped after", "template output past", "bytes long, past"} {
		if strings.Contains(err.Error(), b) {
			return true
		}
	}
	return false
}

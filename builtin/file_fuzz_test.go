package builtin

// The confinement tests: a tree with sentinels outside the allowed folder
// and links leading to them, the corpus of escaping paths, and the fuzz
// test seeded with it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// The sentinel lives outside the allowed folder. Its content, its odd size
// and its old modification time would show in any result that read or
// stated it.
const sentinelToken = "wield-sentinel-5b1e0c"

var (
	sentinelData = strings.Repeat(sentinelToken+"\n", 200)[:4243]
	sentinelTime = time.Unix(1_000_000_000, 0)
	sentinelMS   = strconv.FormatInt(sentinelTime.UnixMilli(), 10)
)

// fileTree is a test's tree: base/root is the allowed folder, base/outside holds
// the sentinels, and root has symbolic links planted that lead outside.
type fileTree struct{ base, root, outside string }

func makeFileTree(t testing.TB) fileTree {
	t.Helper()
	base := t.TempDir()
	d := fileTree{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	for _, dir := range []string{d.root, filepath.Join(d.outside, "dir")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"secret.txt", "dir/inner.txt"} {
		name := filepath.Join(d.outside, p)
		if err := os.WriteFile(name, []byte(sentinelData), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, sentinelTime, sentinelTime); err != nil {
			t.Fatal(err)
		}
	}
	// The folders outside carry the sentinel time too, so that stating
	// them would show.
	for _, dir := range []string{filepath.Join(d.outside, "dir"), d.outside} {
		if err := os.Chtimes(dir, sentinelTime, sentinelTime); err != nil {
			t.Fatal(err)
		}
	}
	d.plant(t)
	return d
}

// plant fills root with a folder, a file and the links that lead outside.
func (d fileTree) plant(t testing.TB) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(d.root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.root, "victim.txt"), []byte("victim"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := [][2]string{
		{"/etc", "etc"},
		{d.outside, "out"},
		{"../outside", "outrel"},
		{filepath.Join(d.outside, "secret.txt"), "secret"},
		{"../outside/secret.txt", "secretrel"},
		{"../../outside", "sub/up"},
	}
	for _, l := range links {
		if err := os.Symlink(l[0], filepath.Join(d.root, l[1])); err != nil && !errors.Is(err, fs.ErrExist) {
			t.Fatal(err)
		}
	}
}

// reset empties root and plants it again.
func (d fileTree) reset(t testing.TB) {
	t.Helper()
	entries, err := os.ReadDir(d.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(d.root, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	d.plant(t)
}

func (d fileTree) expand(s string) string {
	return strings.NewReplacer("{root}", d.root, "{out}", d.outside, "{base}", d.base).Replace(s)
}

// checkOutside fails the test if anything outside root changed.
func (d fileTree) checkOutside(t testing.TB) {
	t.Helper()
	var names []string
	entries, err := os.ReadDir(d.base)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"outside", "root"}, names); diff != "" {
		t.Fatalf("entries next to root changed (-want +got):\n%s", diff)
	}
	got := map[string]string{}
	err = filepath.WalkDir(d.outside, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(d.outside, p)
		switch {
		case e.IsDir():
			got[rel] = "dir"
		case e.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			got[rel] = fmt.Sprintf("%d bytes, sentinel %v, mtime %v", len(b), string(b) == sentinelData, fi.ModTime().Equal(sentinelTime))
		default:
			got[rel] = e.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	same := "4243 bytes, sentinel true, mtime true"
	want := map[string]string{".": "dir", "dir": "dir", "secret.txt": same, filepath.Join("dir", "inner.txt"): same}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the folder outside changed (-want +got):\n%s", diff)
	}
}

// checkSentinelLeak fails the test if out shows anything of the sentinels: their
// content (unless the input, which results and messages echo, held it), or
// their size or time as JSON fields.
func checkSentinelLeak(t testing.TB, what string, out []byte, input string) {
	t.Helper()
	if strings.Contains(string(out), sentinelToken) && !strings.Contains(input, sentinelToken) {
		t.Fatalf("%s: the result shows the sentinel's content: %s", what, out)
	}
	for _, s := range []string{`"size":4243`, `"modified":` + sentinelMS} {
		if strings.Contains(string(out), s) {
			t.Fatalf("%s: the result shows %s from outside: %s", what, s, out)
		}
	}
}

// escapeCase is a path of the corpus and what it must give.
type escapeCase struct {
	path string
	kind string // "denied": permission_denied for every tool; "invalid": validation_error; "link": a link inside root that points out; "inside": a name that stays inside
}

// escapeCorpus is the path corpus, shared with FuzzConfine's seeds.
var escapeCorpus = []escapeCase{
	{"../outside/secret.txt", "denied"},
	{"..", "denied"},
	{"../", "denied"},
	{"../..", "denied"},
	{"a/../../outside/secret.txt", "denied"},
	{"sub/../../outside/secret.txt", "denied"},
	{"./../outside/secret.txt", "denied"},
	{"sub/././../../../outside", "denied"},
	{"../root/../outside/secret.txt", "denied"},
	{"{out}/secret.txt", "denied"},
	{"{out}/dir/../secret.txt", "denied"},
	{"{root}/../outside/secret.txt", "denied"},
	{"{root}x/secret.txt", "denied"},
	{"{base}", "denied"},
	{"/etc/passwd", "denied"},
	{"/", "denied"},
	{"//etc/passwd", "denied"},
	{"/proc/self/root/etc/passwd", "denied"},
	{"etc/passwd", "denied"},
	{"out/secret.txt", "denied"},
	{"outrel/secret.txt", "denied"},
	{"outrel/dir/inner.txt", "denied"},
	{"sub/up/secret.txt", "denied"},
	{"sub/up/dir/inner.txt", "denied"},
	{"{root}/sub/up/secret.txt", "denied"},
	{`..\..\etc\passwd`, "denied"},
	{`..\outside\secret.txt`, "denied"},
	{`sub\..\..\outside\secret.txt`, "denied"},
	{`out\secret.txt`, "denied"},
	{"~", "denied"},
	{"~/.bashrc", "denied"},
	{"~root/.ssh/id_rsa", "denied"},
	{`C:\Windows\win.ini`, "denied"},
	{"c:/outside/secret.txt", "denied"},
	{"etc", "link"},
	{"out", "link"},
	{"outrel", "link"},
	{"secret", "link"},
	{"secretrel", "link"},
	{"sub/up", "link"},
	{"", "invalid"},
	{"a\x00b", "invalid"},
	{"../outside/secret.txt\x00.txt", "invalid"},
	{strings.Repeat("a/", 2100), "invalid"},
	{strings.Repeat("x", 256), "invalid"},
	{"sub/" + strings.Repeat("y", 300) + "/../../outside/secret.txt", "invalid"},
	{"%2e%2e/outside/secret.txt", "inside"},
	{"%2e%2e%2f%2e%2e%2foutside%2fsecret.txt", "inside"},
	{"..%2f..%2foutside%2fsecret.txt", "inside"},
	{"..%c0%af..%c0%afoutside", "inside"},
	{"\u2025/outside/secret.txt", "inside"},
	{"．．/outside/secret.txt", "inside"},
	{"..../outside", "inside"},
	{".../../outside/secret.txt", "inside"},
	{"./~/secret.txt", "inside"},
	{strings.Repeat("z", 255), "inside"},
}

// confineOps are the calls made with each path of the corpus.
var confineOps = []struct {
	name string
	tool string
	args func(p string) map[string]any
}{
	{"info", "get_file_info", func(p string) map[string]any { return fileArgs{"path": p} }},
	{"read", "read_file", func(p string) map[string]any { return fileArgs{"path": p} }},
	{"list", "list_files", func(p string) map[string]any { return fileArgs{"path": p, "recursive": true} }},
	{"write", "write_file", func(p string) map[string]any { return fileArgs{"path": p, "content": "written"} }},
	{"move from", "move_file", func(p string) map[string]any { return fileArgs{"from": p, "to": "moved"} }},
	{"move to", "move_file", func(p string) map[string]any { return fileArgs{"from": "victim.txt", "to": p, "overwrite": true} }},
	{"delete", "delete_file", func(p string) map[string]any { return fileArgs{"path": p} }},
}

func TestFileConfinement(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, wield.ApproverFunc(approveFileCalls))
	for _, tc := range escapeCorpus {
		for _, op := range confineOps {
			env.reset(t)
			res := env.call(t, op.tool, op.args(tc.path), wield.Caller{})
			what := fmt.Sprintf("%s %.60q", op.name, tc.path)
			var wantType wield.ErrorType
			switch {
			case tc.kind == "denied":
				wantType = wield.ErrPermissionDenied
			case tc.kind == "invalid":
				wantType = wield.ErrValidation
			case tc.kind == "link" && (op.name == "info" || op.name == "read" || op.name == "list"):
				wantType = wield.ErrPermissionDenied
			}
			if wantType != "" && (res.OK || res.ErrorType != wantType) {
				t.Errorf("%s: got ok=%v %s %q %s, want %s", what, res.OK, res.ErrorType, res.Error, res.Output, wantType)
			}
			if wantType == wield.ErrPermissionDenied && !strings.Contains(res.Error, "Access denied") {
				t.Errorf("%s: %q does not say Access denied", what, res.Error)
			}
			checkSentinelLeak(t, what, res.Output, tc.path)
			env.checkOutside(t)
		}
	}
}

// A folder swapped for a link to outside between two calls is refused at
// the second: the root resolves every path when it is used.
func TestFileSymlinkSwap(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, wield.ApproverFunc(approveFileCalls))
	swap := filepath.Join(env.root, "swap")
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "write_file", args: fileArgs{"path": "swap/secret.txt", "content": "mine"}, want: `{"bytesWritten":4,"path":"swap/secret.txt"}`},
		{tool: "read_file", args: fileArgs{"path": "swap/secret.txt"}, want: `{"content":"mine","size":4,"encoding":"utf-8"}`},
	})
	if err := os.RemoveAll(swap); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(env.outside, swap); err != nil {
		t.Fatal(err)
	}
	const denied = "Access denied"
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "swap/secret.txt"}, errType: wield.ErrPermissionDenied, errText: denied},
		{tool: "write_file", args: fileArgs{"path": "swap/secret.txt", "content": "x"}, errType: wield.ErrPermissionDenied, errText: denied},
		{tool: "write_file", args: fileArgs{"path": "swap/new.txt", "content": "x"}, errType: wield.ErrPermissionDenied, errText: denied},
		{tool: "list_files", args: fileArgs{"path": "swap"}, errType: wield.ErrPermissionDenied, errText: denied},
		{tool: "get_file_info", args: fileArgs{"path": "swap/secret.txt"}, errType: wield.ErrPermissionDenied, errText: denied},
		{tool: "delete_file", args: fileArgs{"path": "swap/secret.txt"}, errType: wield.ErrPermissionDenied, errText: denied},
		{tool: "move_file", args: fileArgs{"from": "swap/secret.txt", "to": "got.txt"}, errType: wield.ErrPermissionDenied, errText: denied},
		{tool: "move_file", args: fileArgs{"from": "victim.txt", "to": "swap/victim.txt"}, errType: wield.ErrPermissionDenied, errText: denied},
	})
	env.checkOutside(t)
}

// The folder flips between a real folder and a link to outside while calls
// run: each call either works inside or is refused.
func TestFileSymlinkSwapRace(t *testing.T) {
	env := newFileEnv(t, FileOptions{CacheBytes: -1}, wield.ApproverFunc(approveFileCalls))
	swap := filepath.Join(env.root, "swap")
	const rounds = 200
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range rounds {
			_ = os.RemoveAll(swap)
			if i%2 == 0 {
				_ = os.Symlink(env.outside, swap)
			} else if os.Mkdir(swap, 0o755) == nil {
				_ = os.WriteFile(filepath.Join(swap, "secret.txt"), []byte("inside"), 0o644)
			}
		}
	})
	for i := range rounds {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"read_file", fileArgs{"path": "swap/secret.txt"}},
			{"write_file", fileArgs{"path": "swap/w.txt", "content": "w"}},
			{"list_files", fileArgs{"path": "swap"}},
			{"delete_file", fileArgs{"path": "swap/secret.txt"}},
		} {
			res := env.call(t, c.tool, c.args, wield.Caller{})
			outcomes[string(res.ErrorType)]++
			checkSentinelLeak(t, fmt.Sprintf("round %d %s", i, c.tool), res.Output, "")
			if !res.OK && res.ErrorType == wield.ErrPermissionDenied && !strings.Contains(res.Error, "Access denied") {
				t.Errorf("round %d %s: %s", i, c.tool, res.Error)
			}
		}
	}
	wg.Wait()
	t.Logf("outcomes (empty: success): %v", outcomes)
	env.checkOutside(t)
}

// FuzzConfine calls every file tool with generated paths, in a folder with
// links planted that lead outside, and checks that nothing outside was
// read, written or stated: the sentinels next to the folder stay as they
// were, and no result shows their content, size or time. Paths may use the
// placeholders {root}, {out} and {base}; narrowed runs the calls for a
// caller whose allowed paths are only root/sub.
func FuzzConfine(f *testing.F) {
	d := makeFileTree(f)
	files, err := newFiles(FileOptions{AllowedPaths: []string{d.root}, MaxReadBytes: 1 << 20, MaxWriteBytes: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	for _, tc := range escapeCorpus {
		f.Add(tc.path, false)
	}
	for _, p := range []string{".", "victim.txt", "sub", "sub/x", "{root}/sub/../victim.txt", "../root/victim.txt", "sub/up", "x/../../root/sub"} {
		f.Add(p, false)
		f.Add(p, true)
	}
	f.Fuzz(func(t *testing.T, p string, narrowed bool) {
		d.reset(t)
		p = d.expand(p)
		ctx := context.Background()
		if narrowed {
			ctx = wield.WithCall(ctx, &wield.Call{Tool: "fuzz", Caller: wield.Caller{AllowedPaths: []string{filepath.Join(d.root, "sub")}}})
		}
		check := func(op string, out any, err error) {
			t.Helper()
			if err != nil {
				if _, typed := err.(*wield.Error); !typed {
					t.Fatalf("%s %q: untyped error %v", op, p, err)
				}
				checkSentinelLeak(t, op, []byte(err.Error()), p)
				return
			}
			b, merr := json.Marshal(out)
			if merr != nil {
				t.Fatal(merr)
			}
			checkSentinelLeak(t, fmt.Sprintf("%s %q", op, p), b, p)
		}
		out1, err := files.info(ctx, FileInfoInput{Path: p})
		check("get_file_info", out1, err)
		out2, err := files.read(ctx, ReadFileInput{Path: p})
		check("read_file", out2, err)
		out3, err := files.list(ctx, ListFilesInput{Path: p, Recursive: true})
		check("list_files", out3, err)
		out4, err := files.write(ctx, WriteFileInput{Path: p, Content: "fuzz"})
		check("write_file", out4, err)
		out5, err := files.move(ctx, MoveFileInput{From: p, To: "moved"})
		check("move_file from", out5, err)
		out6, err := files.move(ctx, MoveFileInput{From: "victim.txt", To: p, Overwrite: true})
		check("move_file to", out6, err)
		out7, err := files.delete(ctx, DeleteFileInput{Path: p})
		check("delete_file", out7, err)
		d.checkOutside(t)
	})
}

package builtin

// Windows path forms. The file tools read a backslash as a separator on
// every system, so these paths are refused or confined alike on Linux,
// macOS and Windows; where the two differ (a drive-relative C:x is a file
// named so outside Windows, Windows refuses a colon or a reserved device
// name in a file name) each case says what each gives.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// makePlainFileTree is makeFileTree without the symbolic links, which
// Windows lets only privileged users make: root is the allowed folder and
// outside holds the sentinels.
func makePlainFileTree(t testing.TB) fileTree {
	t.Helper()
	base := t.TempDir()
	d := fileTree{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	for _, dir := range []string{filepath.Join(d.root, "sub"), filepath.Join(d.outside, "dir")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d.root, "victim.txt"), []byte("victim"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"secret.txt", filepath.Join("dir", "inner.txt")} {
		name := filepath.Join(d.outside, p)
		if err := os.WriteFile(name, []byte(sentinelData), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, sentinelTime, sentinelTime); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{filepath.Join(d.outside, "dir"), d.outside} {
		if err := os.Chtimes(dir, sentinelTime, sentinelTime); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// rootEntries lists what root holds, recursively, as slash paths.
func rootEntries(t testing.TB, root string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// winPathCase is a Windows path form and what it gives: "denied" is
// permission_denied for every tool, with nothing created, changed or shown
// inside or outside; any other value is the name, relative to root, of the
// file it is confined to.
type winPathCase struct {
	path          string
	unix, windows string
	reason        string // in the refusal, where it is the same on both
	reasonUnix    string
	reasonWindows string
}

var winPathCases = []winPathCase{
	// A drive path: outside every allowed folder (a temporary folder is
	// never C:\Windows). Elsewhere it is read as C:/Windows/x, a relative
	// path whose first name is a drive, refused as such.
	{path: `C:\Windows\x`, unix: "denied", windows: "denied", reasonUnix: "is a Windows drive path", reasonWindows: "is outside the allowed folders"},
	{path: `c:/Windows/x`, unix: "denied", windows: "denied", reasonUnix: "is a Windows drive path", reasonWindows: "is outside the allowed folders"},
	{path: `C:`, unix: "denied", windows: "denied", reason: "is a Windows drive path"},
	// A share (UNC path), and the same with slashes: //server/share/x,
	// which is /server/share/x elsewhere.
	{path: `\\server\share\x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `//server/share/x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `\\server\share`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	// Device and NT namespace paths, which skip Win32's path rules.
	{path: `\\?\C:\x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `\\.\C:\x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `\\?\UNC\server\share\x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `\??\C:\x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	// Climbing out with backslashes.
	{path: `..\..\x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `a\..\..\x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `sub\..\..\outside\secret.txt`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `..\outside\secret.txt`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	// Rooted without a drive: the root of the current drive on Windows, /x
	// elsewhere; outside either way, never a file below the allowed folder.
	{path: `\x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `\outside\secret.txt`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	{path: `/x`, unix: "denied", windows: "denied", reason: "is outside the allowed folders"},
	// Drive-relative: on Windows the current folder of drive C, wherever
	// that is; elsewhere a file named C:x, inside.
	{path: `C:x`, unix: "C:x", windows: "denied", reasonWindows: "is a Windows drive path"},
	{path: `c:..\outside\secret.txt`, unix: "c:../outside/secret.txt", windows: "denied", reasonWindows: "is a Windows drive path"},
	// Backslashes that stay inside.
	{path: `sub\x`, unix: "sub/x", windows: "sub/x"},
	{path: `sub\..\x`, unix: "x", windows: "x"},
	{path: `.\sub\.\x`, unix: "sub/x", windows: "sub/x"},
	// Names Windows gives a meaning: an alternate data stream of a file
	// and a reserved device name. Windows refuses them in an allowed
	// folder (its root takes no colon and no device); elsewhere they are
	// plain names.
	{path: `victim.txt:hidden`, unix: "victim.txt:hidden", windows: "denied"},
	{path: `sub\NUL`, unix: "sub/NUL", windows: "denied"},
	{path: `AUX`, unix: "AUX", windows: "denied"},
}

// TestFileWindowsPathForms calls every file tool with each Windows path
// form: a refused one is permission_denied saying "Access denied" and
// touches nothing; a confined one lands on the file named inside root.
func TestFileWindowsPathForms(t *testing.T) {
	onWindows := runtime.GOOS == "windows"
	for _, tc := range winPathCases {
		want, reason := tc.unix, tc.reasonUnix
		if onWindows {
			want, reason = tc.windows, tc.reasonWindows
		}
		if tc.reason != "" {
			reason = tc.reason
		}
		t.Run(strings.NewReplacer(`\`, "⧵", "/", "∕").Replace(tc.path), func(t *testing.T) {
			d := makePlainFileTree(t)
			env := d.env(t, FileOptions{CacheBytes: -1}, wield.ApproverFunc(approveFileCalls))
			if want == "denied" {
				before := rootEntries(t, d.root)
				for _, op := range confineOps {
					res := env.call(t, op.tool, op.args(tc.path), wield.Caller{})
					what := fmt.Sprintf("%s %q", op.name, tc.path)
					if res.OK || res.ErrorType != wield.ErrPermissionDenied || !strings.Contains(res.Error, "Access denied") {
						t.Errorf("%s: got ok=%v %s %q %s, want permission_denied saying Access denied", what, res.OK, res.ErrorType, res.Error, res.Output)
					}
					if reason != "" && !strings.Contains(res.Error, reason) {
						t.Errorf("%s: %q does not say %q", what, res.Error, reason)
					}
					checkSentinelLeak(t, what, res.Output, tc.path)
					if diff := cmp.Diff(before, rootEntries(t, d.root)); diff != "" {
						t.Errorf("%s: root changed (-before +after):\n%s", what, diff)
					}
					d.checkOutside(t)
				}
				return
			}
			// Confined: a write lands on the named file inside root, and
			// every other tool finds it there.
			res := env.call(t, "write_file", fileArgs{"path": tc.path, "content": "confined"}, wield.Caller{})
			if !res.OK {
				t.Fatalf("write_file %q: %s %s, want a file at %s inside root", tc.path, res.ErrorType, res.Error, want)
			}
			b, err := os.ReadFile(filepath.Join(d.root, filepath.FromSlash(want)))
			if err != nil || string(b) != "confined" {
				t.Fatalf("write_file %q: root/%s holds %q, %v; want the content written", tc.path, want, b, err)
			}
			res = env.call(t, "read_file", fileArgs{"path": tc.path}, wield.Caller{})
			if !res.OK || !strings.Contains(string(res.Output), `"content":"confined"`) {
				t.Errorf("read_file %q: ok=%v %s %s", tc.path, res.OK, res.Error, res.Output)
			}
			res = env.call(t, "get_file_info", fileArgs{"path": tc.path}, wield.Caller{})
			if !res.OK || !strings.Contains(string(res.Output), `"exists":true,"size":8`) {
				t.Errorf("get_file_info %q: ok=%v %s %s", tc.path, res.OK, res.Error, res.Output)
			}
			res = env.call(t, "move_file", fileArgs{"from": tc.path, "to": "moved.txt"}, wield.Caller{})
			if !res.OK {
				t.Errorf("move_file %q: %s %s", tc.path, res.ErrorType, res.Error)
			} else if b, err := os.ReadFile(filepath.Join(d.root, "moved.txt")); err != nil || string(b) != "confined" {
				t.Errorf("move_file %q: moved.txt holds %q, %v", tc.path, b, err)
			}
			d.checkOutside(t)
		})
	}
}

// TestFileWindowsPathFormsNarrowing passes Windows path forms as a caller's
// allowed paths: each must lie inside a configured folder, or the call is
// refused before any tool runs.
func TestFileWindowsPathFormsNarrowing(t *testing.T) {
	d := makePlainFileTree(t)
	env := d.env(t, FileOptions{CacheBytes: -1}, wield.ApproverFunc(approveFileCalls))
	for _, p := range []string{`..\outside`, `sub\..\..\outside`, `\\server\share`, `\\?\C:\x`, `C:\Windows`, `C:`, `\outside`} {
		res := env.call(t, "read_file", fileArgs{"path": "secret.txt"}, wield.Caller{AllowedPaths: []string{p}})
		if res.OK || res.ErrorType != wield.ErrPermissionDenied || !strings.Contains(res.Error, "allowed path") {
			t.Errorf("allowed path %q: got ok=%v %s %q, want permission_denied naming the caller's allowed path", p, res.OK, res.ErrorType, res.Error)
		}
		checkSentinelLeak(t, p, res.Output, "")
	}
	// A backslashed folder inside narrows to that folder.
	if err := os.WriteFile(filepath.Join(d.root, "sub", "in.txt"), []byte("in sub"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := env.call(t, "read_file", fileArgs{"path": "in.txt"}, wield.Caller{AllowedPaths: []string{`.\sub`}})
	if !res.OK || !strings.Contains(string(res.Output), `"content":"in sub"`) {
		t.Errorf(`allowed path .\sub: ok=%v %s %s`, res.OK, res.Error, res.Output)
	}
	res = env.call(t, "read_file", fileArgs{"path": `..\victim.txt`}, wield.Caller{AllowedPaths: []string{`.\sub`}})
	if res.OK || res.ErrorType != wield.ErrPermissionDenied {
		t.Errorf(`..\victim.txt under allowed path .\sub: ok=%v %s %q, want permission_denied`, res.OK, res.ErrorType, res.Error)
	}
	d.checkOutside(t)
}

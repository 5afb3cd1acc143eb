package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield"
)

// Defaults of [FileOptions], and the fixed bounds of the file tools.
const (
	DefaultMaxReadBytes   int64 = 10 << 20
	DefaultMaxWriteBytes  int64 = 10 << 20
	DefaultFileCacheBytes int64 = 32 << 20
	// MaxListFiles bounds the entries of one list_files answer; a longer
	// listing is cut and says truncated.
	MaxListFiles = 5000
	// MaxPathBytes and MaxNameBytes bound a path and each of its
	// components, as Linux does (PATH_MAX, NAME_MAX).
	MaxPathBytes = 4096
	MaxNameBytes = 255
)

// FileOptions configure [FileTools]. Zero fields mean the defaults.
type FileOptions struct {
	// AllowedPaths are the folders the tools may touch (seed 003 config
	// tools.allowedPaths); at least one. Each is a directory, or does not
	// exist yet: a missing folder is looked for again at each call, so one
	// created later is used without a restart. Relative ones are taken
	// from the process's working directory.
	AllowedPaths []string
	// MaxReadBytes bounds the files read_file reads (10 MiB).
	MaxReadBytes int64
	// MaxWriteBytes bounds the content write_file writes (10 MiB).
	MaxWriteBytes int64
	// CacheBytes bounds the in-memory cache of file contents (32 MiB);
	// negative disables it.
	CacheBytes int64
	// AllowHardLinks lets read_file and write_file use a regular file that
	// has more than one name (a hard link). Off by default: a hard link in
	// an allowed folder may name a file outside it, which the folder's
	// root cannot tell from a file of its own.
	AllowHardLinks bool
}

// FileTools returns seed 003's six file tools, read_file, write_file,
// list_files, delete_file, move_file and get_file_info, sharing one
// confinement and one read cache.
//
// # Confinement
//
// Every path is confined to the allowed folders, each opened once as an
// [os.Root] (a folder that does not exist yet is opened at the first call
// after it appears, and a call into it before then is an execution_error
// that says so). A path is cleaned lexically ("a/../b" is "b", "." is the
// folder itself); a relative one starts at the first allowed folder, and
// the absolute result belongs to the allowed folder that contains it (the
// deepest, when they nest), by the folder's name as configured or with its
// symbolic links resolved. Backslashes count as separators, so that
// Windows-style paths mean what they say (a file whose name holds a
// backslash cannot be named); on Windows, \x, rooted but with no drive, is
// on the first folder's drive, and C:x, relative to drive C's current
// folder, is refused as a drive path (elsewhere it is a file named C:x).
// The file is then reached through that folder's root, which refuses any
// symbolic link or swapped directory that would lead outside, at the
// moment of the operation.
//
// A call's [wield.Caller].AllowedPaths narrow the folders for that call:
// each, resolved as above, must lie inside a configured folder, and the
// first is where relative paths start.
//
// # Links and writes
//
// Links inside a folder that stay inside are followed by read_file,
// list_files (for the folder listed, not while descending) and
// get_file_info; delete_file and move_file act on a link itself. write_file
// replaces a file atomically (a temporary file in the same folder, synced,
// then renamed over the target, keeping the target's permission bits), so
// it refuses to replace a link. It and move_file create missing parent
// folders. move_file between folders that share no root copies the file
// and deletes the original.
//
// A hard link is another name of the same file, and it may be made
// anywhere on the same file system: a hard link in an allowed folder to a
// file outside is, to the folder's root, a file like any other. So unless
// [FileOptions.AllowHardLinks] is set, read_file (and move_file's copy
// between folders, which reads) refuses a regular file with more than one
// name, checked on the opened file itself (fstat), so that no swap between
// a check and the read can slip one past; write_file refuses one too,
// although it would only replace the name in the folder (it never writes
// in place), as the write would silently part the names. delete_file and
// move_file within a folder act on the name alone, leaving the file's
// other names as they are, and are allowed.
//
// # Cache
//
// Files read are kept in memory, bounded by CacheBytes, and served again
// while the file, opened anew for every read, keeps its identity, size and
// modification time; writes, deletes and moves through the tools drop
// their entries at once. Files changed in the last two seconds are not
// kept, as a change within the file system's clock tick would not show.
//
// # Errors
//
// A path outside the folders (including "~", which is not expanded, and
// Windows drive paths) or a file with more than one name (unless allowed)
// is permission_denied with "Access denied" in the message, as are the allowed folders themselves for delete_file and
// move_file. A malformed path (empty, with a NUL byte, longer than
// [MaxPathBytes] or with a component longer than [MaxNameBytes]), a bad
// glob pattern, undecodable content or content over the write limit is
// validation_error. What the file system says (not found, is a directory,
// not empty, file over the read limit) is execution_error.
//
// FileTools returns an error when no folder is given or one exists but
// cannot be opened as a directory.
func FileTools(opts FileOptions) ([]*wield.Tool, error) {
	f, err := newFiles(opts)
	if err != nil {
		return nil, err
	}
	return f.tools(), nil
}

// fileSet is the state the six tools share.
type fileSet struct {
	folders  []*fileFolder // the configured folders, in order
	ready    atomic.Pointer[[]fileSpace]
	maxRead  int64
	maxWrite int64
	cache    *fileCache
	// hardLinks allows files with more than one name; see FileTools.
	hardLinks bool
}

// fileSpace is one allowed folder.
type fileSpace struct {
	dir  string   // absolute and clean: as configured, or as a caller narrowed it
	real string   // dir with symbolic links resolved, when that differs; else ""
	root *os.Root // nil while a configured folder does not exist
	// broken says why a configured folder that now exists cannot be opened
	// (it became a file); "" when root is set or the folder is missing.
	broken string
}

// fileFolder is one configured folder. It is opened once it exists, and
// then kept: a folder missing when the tools were built is looked for again
// at each call (a first run names folders nobody has made yet), instead of
// being remembered as missing.
type fileFolder struct {
	dir   string
	mu    sync.Mutex
	space *fileSpace // nil until opened
}

// open returns the folder's space, opening it if it now exists; a folder
// still missing gives a space without a root. Any other failure (not a
// directory, no permission) is an error.
func (fo *fileFolder) open() (fileSpace, error) {
	fo.mu.Lock()
	defer fo.mu.Unlock()
	if fo.space != nil {
		return *fo.space, nil
	}
	r, err := os.OpenRoot(fo.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fileSpace{dir: fo.dir}, nil
	}
	if err != nil {
		return fileSpace{dir: fo.dir, broken: osReason(err)}, err
	}
	sp := &fileSpace{dir: fo.dir, root: r}
	if real, err := filepath.EvalSymlinks(fo.dir); err == nil && real != fo.dir {
		sp.real = real
	}
	fo.space = sp
	return *sp, nil
}

func newFiles(opts FileOptions) (*fileSet, error) {
	if len(opts.AllowedPaths) == 0 {
		return nil, errors.New("file tools: no allowed paths: name at least one folder the tools may use")
	}
	f := &fileSet{
		maxRead:   positiveOr(opts.MaxReadBytes, DefaultMaxReadBytes),
		maxWrite:  positiveOr(opts.MaxWriteBytes, DefaultMaxWriteBytes),
		hardLinks: opts.AllowHardLinks,
	}
	if opts.CacheBytes >= 0 {
		f.cache = newFileCache(positiveOr(opts.CacheBytes, DefaultFileCacheBytes))
	}
	for _, p := range opts.AllowedPaths {
		if p == "" {
			f.close()
			return nil, errors.New("file tools: an allowed path is empty")
		}
		dir, err := filepath.Abs(p)
		if err != nil {
			f.close()
			return nil, fmt.Errorf("file tools: allowed path %s: %w", p, err)
		}
		fo := &fileFolder{dir: dir}
		f.folders = append(f.folders, fo)
		if _, err := fo.open(); err != nil {
			f.close()
			return nil, fmt.Errorf("file tools: allowed path %s: %w", p, err)
		}
	}
	f.spaces()
	return f, nil
}

// close closes the folders opened so far.
func (f *fileSet) close() {
	for _, fo := range f.folders {
		if fo.space != nil {
			_ = fo.space.root.Close()
		}
	}
}

// spaces returns the configured folders as they are now: once all of them
// exist, the same slice every time; before, a fresh one with another look
// for those still missing.
func (f *fileSet) spaces() []fileSpace {
	if p := f.ready.Load(); p != nil {
		return *p
	}
	spaces := make([]fileSpace, len(f.folders))
	all := true
	for i, fo := range f.folders {
		spaces[i], _ = fo.open() // a broken folder fails the calls into it
		all = all && spaces[i].root != nil
	}
	if all {
		f.ready.Store(&spaces)
	}
	return spaces
}

func positiveOr(v, def int64) int64 {
	if v <= 0 {
		return def
	}
	return v
}

// fileTool sets what all six tools share.
func fileTool(t *wield.Tool, a wield.Annotations, timeout time.Duration, tag string) *wield.Tool {
	t.Category = wield.CategoryFile
	t.Annotations = a
	t.Timeout = timeout
	t.Tags = []string{"file", tag, "builtin"}
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}

func (f *fileSet) tools() []*wield.Tool {
	dirs := make([]string, len(f.folders))
	for i, fo := range f.folders {
		dirs[i] = fo.dir
	}
	where := fmt.Sprintf(" Paths are relative to %s, or absolute inside one of the allowed folders: %s.", dirs[0], strings.Join(dirs, ", "))
	return []*wield.Tool{
		fileTool(wield.Func("read_file", "Read a file and return its content and size in bytes. Text is returned as UTF-8; use encoding base64 or hex for binary files."+where, f.read),
			wield.Annotations{ReadOnly: true, Idempotent: true}, 30*time.Second, "read"),
		fileTool(wield.Func("write_file", "Write content to a file, replacing it whole (atomically) or creating it with any missing parent folders."+where, f.write),
			wield.Annotations{Idempotent: true}, 30*time.Second, "write"),
		fileTool(wield.Func("list_files", "List a folder's files and subfolders, optionally recursively and filtered by a glob pattern."+where, f.list),
			wield.Annotations{ReadOnly: true, Idempotent: true}, 30*time.Second, "read"),
		fileTool(wield.Func("delete_file", "Delete a file or an empty folder. Answers deleted false when there was nothing to delete."+where, f.delete),
			wield.Annotations{Destructive: true, Idempotent: true}, 10*time.Second, "write"),
		fileTool(wield.Func("move_file", "Move or rename a file or folder, creating missing parent folders of the destination."+where, f.move),
			wield.Annotations{Destructive: true}, 30*time.Second, "write"),
		fileTool(wield.Func("get_file_info", "Tell whether a path exists and give its size, modification time (Unix milliseconds) and kind."+where, f.info),
			wield.Annotations{ReadOnly: true, Idempotent: true}, 10*time.Second, "read"),
	}
}

// ReadFileInput is the input of read_file.
type ReadFileInput struct {
	Path     string `json:"path" description:"Path of the file to read" minLength:"1" maxLength:"4096"`
	Encoding string `json:"encoding,omitempty" description:"How to return the content: utf-8 text, or base64 or hex for binary files" enum:"utf-8,utf8,base64,hex" default:"utf-8"`
}

// ReadFileOutput is seed 003's result of read_file: the content and the
// file's size in bytes.
type ReadFileOutput struct {
	Content  string `json:"content"`
	Size     int64  `json:"size"`
	Encoding string `json:"encoding"`
}

// WriteFileInput is the input of write_file.
type WriteFileInput struct {
	Path     string `json:"path" description:"Path of the file to write" minLength:"1" maxLength:"4096"`
	Content  string `json:"content" description:"The whole new content of the file"`
	Encoding string `json:"encoding,omitempty" description:"How content is encoded: utf-8 text, or base64 or hex for binary data" enum:"utf-8,utf8,base64,hex" default:"utf-8"`
}

// WriteFileOutput is seed 003's result of write_file.
type WriteFileOutput struct {
	BytesWritten int    `json:"bytesWritten"`
	Path         string `json:"path"`
}

// ListFilesInput is the input of list_files.
type ListFilesInput struct {
	Path      string `json:"path" description:"Folder to list; . for the first allowed folder" minLength:"1" maxLength:"4096"`
	Recursive bool   `json:"recursive,omitempty" description:"Also list the contents of subfolders, at any depth" default:"false"`
	Pattern   string `json:"pattern,omitempty" description:"Glob that entries must match: without a slash it matches names (*.go), with slashes the path below the folder, where ** spans folders (src/**/*.ts)" maxLength:"1000"`
}

// FileInfo is one entry of list_files.
type FileInfo struct {
	// Path can be passed back to the other file tools: the listed folder's
	// path as given, joined with the entry's path below it.
	Path      string `json:"path"`
	Name      string `json:"name"`
	IsDir     bool   `json:"is_dir"`
	Size      int64  `json:"size"`
	Modified  int64  `json:"modified"` // Unix milliseconds
	IsSymlink bool   `json:"is_symlink,omitempty"`
}

// ListFilesOutput is seed 003's result of list_files, in lexical order.
type ListFilesOutput struct {
	Files     []FileInfo `json:"files"`
	Truncated bool       `json:"truncated,omitempty"`
}

// DeleteFileInput is the input of delete_file.
type DeleteFileInput struct {
	Path string `json:"path" description:"Path of the file or empty folder to delete" minLength:"1" maxLength:"4096"`
}

// DeleteFileOutput is seed 003's result of delete_file: false when the path
// did not exist.
type DeleteFileOutput struct {
	Deleted bool   `json:"deleted"`
	Path    string `json:"path"`
}

// MoveFileInput is the input of move_file.
type MoveFileInput struct {
	From      string `json:"from" description:"Path of the file or folder to move" minLength:"1" maxLength:"4096"`
	To        string `json:"to" description:"Its new path" minLength:"1" maxLength:"4096"`
	Overwrite bool   `json:"overwrite,omitempty" description:"Replace the destination if it exists" default:"false"`
}

// MoveFileOutput is seed 003's result of move_file.
type MoveFileOutput struct {
	Success bool `json:"success"`
}

// FileInfoInput is the input of get_file_info.
type FileInfoInput struct {
	Path string `json:"path" description:"Path of the file or folder" minLength:"1" maxLength:"4096"`
}

// FileInfoOutput is seed 003's result of get_file_info; a missing path is
// exists false, not an error.
type FileInfoOutput struct {
	Exists    bool   `json:"exists"`
	Size      int64  `json:"size"`
	Modified  int64  `json:"modified"` // Unix milliseconds
	Path      string `json:"path"`
	IsDir     bool   `json:"is_dir"`
	IsSymlink bool   `json:"is_symlink"`
	Mode      string `json:"mode,omitempty"`
}

// fileSandbox is the set of folders one call may touch.
type fileSandbox struct {
	spaces []fileSpace
	opened []*os.Root // roots opened for this call, closed after it
}

// sandbox returns the folders of the call in ctx: the configured ones, or
// those its caller narrowed them to.
func (f *fileSet) sandbox(ctx context.Context) (*fileSandbox, error) {
	base := &fileSandbox{spaces: f.spaces()}
	c := wield.CallFrom(ctx)
	if c == nil || len(c.Caller.AllowedPaths) == 0 {
		return base, nil
	}
	sb := &fileSandbox{}
	for _, p := range c.Caller.AllowedPaths {
		t, err := base.resolve(p)
		if errors.Is(err, errFolderMissing) {
			sb.close()
			return nil, wield.Errorf(wield.ErrExecution, "the caller's allowed path %s", err.(*wield.Error).Message) // resolve's own error
		}
		if err != nil {
			sb.close()
			return nil, fileAccessDenied("the caller's allowed path %q is not a folder inside the configured ones (%s)", p, base.list())
		}
		sp := fileSpace{dir: t.abs, root: t.sp.root}
		if t.sp.real != "" {
			sp.real = filepath.Join(t.sp.real, t.rel)
		}
		if t.rel != "." {
			r, err := t.sp.root.OpenRoot(t.rel)
			if err != nil {
				sb.close()
				return nil, fileAccessDenied("the caller's allowed path %q cannot be opened inside the configured folders: %s", p, osReason(err))
			}
			sb.opened = append(sb.opened, r)
			sp.root = r
		}
		sb.spaces = append(sb.spaces, sp)
	}
	return sb, nil
}

func (sb *fileSandbox) close() {
	for _, r := range sb.opened {
		_ = r.Close()
	}
}

func (sb *fileSandbox) list() string {
	dirs := make([]string, len(sb.spaces))
	for i, sp := range sb.spaces {
		dirs[i] = sp.dir
	}
	return strings.Join(dirs, ", ")
}

// fileTarget is a path resolved to a folder of the sandbox.
type fileTarget struct {
	sp    *fileSpace
	rel   string // local to sp.root; "." for the folder itself
	abs   string // sp.dir joined with rel: the cache key
	shown string // the path as the model wrote it, cleaned, for messages
}

// resolve places p in one of the sandbox's folders, lexically; the folder's
// root then guards every use of the result against links leading out.
func (sb *fileSandbox) resolve(p string) (fileTarget, error) {
	if err := checkFilePath(p); err != nil {
		return fileTarget{}, err
	}
	q := filepath.FromSlash(strings.ReplaceAll(p, `\`, "/"))
	first, _, _ := strings.Cut(filepath.ToSlash(q), "/")
	switch {
	case (isDrive(first) || filepath.VolumeName(q) != "") && !filepath.IsAbs(q):
		// C:x on Windows is relative to drive C's current folder, not
		// to an allowed one (filepath sees a volume only there).
		return fileTarget{}, fileAccessDenied("%q is a Windows drive path, outside the allowed folders (%s)", p, sb.list())
	case strings.HasPrefix(first, "~"):
		return fileTarget{}, fileAccessDenied("%q starts with ~, which is not expanded and names a home folder, outside the allowed folders (%s)", p, sb.list())
	}
	abs := filepath.Clean(q)
	switch {
	case filepath.IsAbs(abs):
	case os.IsPathSeparator(abs[0]):
		// \x on Windows is not absolute to filepath but rooted: it names
		// a folder of the drive, here the first allowed folder's, not one
		// below that folder.
		abs = filepath.VolumeName(sb.spaces[0].dir) + abs
	default:
		abs = filepath.Join(sb.spaces[0].dir, abs)
	}
	// The deepest folder that holds the path wins; one that does not exist
	// yet only when no existing one holds it.
	best, rel, depth, missing, missingDepth := -1, "", -1, -1, -1
	for i, sp := range sb.spaces {
		for _, dir := range [2]string{sp.dir, sp.real} {
			r, ok := below(dir, abs)
			switch {
			case !ok:
			case sp.root == nil:
				if len(dir) > missingDepth {
					missing, missingDepth = i, len(dir)
				}
			case len(dir) > depth:
				best, rel, depth = i, r, len(dir)
			}
		}
	}
	switch {
	case best < 0 && missing >= 0:
		return fileTarget{}, missingFolder(reusable(filepath.Clean(q)), &sb.spaces[missing])
	case best < 0:
		return fileTarget{}, fileAccessDenied("%q is outside the allowed folders (%s)", p, sb.list())
	}
	sp := &sb.spaces[best]
	return fileTarget{sp: sp, rel: rel, abs: filepath.Join(sp.dir, rel), shown: reusable(filepath.Clean(q))}, nil
}

// errFolderMissing marks the answer for a path in an allowed folder that
// does not exist (yet): an execution_error, as the call was allowed and the
// folder is not there.
var errFolderMissing = errors.New("allowed folder does not exist")

func missingFolder(shown string, sp *fileSpace) *wield.Error {
	if sp.broken != "" {
		return wield.Errorf(wield.ErrExecution, "%q: the allowed folder %s cannot be opened: %s", shown, sp.dir, sp.broken)
	}
	e := wield.Errorf(wield.ErrExecution, "%q: the allowed folder %s does not exist (yet); it can be used once it is created", shown, sp.dir)
	e.Err = errFolderMissing
	return e
}

// reusable returns a clean relative path that resolve would read as
// something else (a name starting with ~, or a drive letter) with "./"
// before it, so that paths the tools answer with can be passed back.
func reusable(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	first, _, _ := strings.Cut(filepath.ToSlash(p), "/")
	if strings.HasPrefix(first, "~") || isDrive(first) {
		return "." + string(filepath.Separator) + p
	}
	return p
}

// checkFilePath refuses paths that are malformed rather than outside.
func checkFilePath(p string) error {
	switch {
	case p == "":
		return wield.Errorf(wield.ErrValidation, "path is empty: give a path inside the allowed folders, such as notes.txt")
	case strings.IndexByte(p, 0) >= 0:
		return wield.Errorf(wield.ErrValidation, "path %q contains a NUL byte at offset %d", p, strings.IndexByte(p, 0))
	case len(p) > MaxPathBytes:
		return wield.Errorf(wield.ErrValidation, "path is %d bytes long, over the limit of %d", len(p), MaxPathBytes)
	}
	for name := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if len(name) > MaxNameBytes {
			return wield.Errorf(wield.ErrValidation, "path component %q... is %d bytes long, over the limit of %d", clipUTF8(name, 32), len(name), MaxNameBytes)
		}
	}
	return nil
}

// isDrive reports whether a path's first element is a Windows drive, C:.
func isDrive(first string) bool {
	return len(first) == 2 && first[1] == ':' && ('a' <= first[0] && first[0] <= 'z' || 'A' <= first[0] && first[0] <= 'Z')
}

// clipUTF8 cuts s to at most n bytes, on a character boundary.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// below returns p relative to dir when p is dir or lies below it.
func below(dir, p string) (string, bool) {
	if dir == "" {
		return "", false
	}
	if p == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" {
		return rest, true
	}
	return "", false
}

// checkLinks refuses a regular file with more than one name, unless hard
// links are allowed: links is what openLinks or entryLinks counted.
func (f *fileSet) checkLinks(what string, links uint64) error {
	if f.hardLinks || links <= 1 {
		return nil
	}
	return fileAccessDenied("%s: the file has more than one link (%d names: a hard link, which may be a file outside the allowed folders); the server's configuration must set allow_hard_links: true for the file tools to use it", what, links)
}

func fileAccessDenied(format string, args ...any) *wield.Error {
	return &wield.Error{Type: wield.ErrPermissionDenied, Message: "Access denied: " + fmt.Sprintf(format, args...)}
}

// osReason is the operating system's word for err, without the paths and
// operation names of the Go errors that wrap it.
func osReason(err error) string {
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error()
		}
		err = inner
	}
}

// fsError turns an error of the file system into one a model can act on;
// what names the operation and its path(s).
func fsError(what string, err error) error {
	r := osReason(err)
	var e error
	switch {
	case r == "path escapes from parent": // os.Root's refusal; its error is unexported
		e = fileAccessDenied("%s: the path leads outside the allowed folders (through .. or a symbolic link)", what)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, fs.ErrNotExist):
		e = wield.Errorf(wield.ErrExecution, "%s: not found", what)
	case errors.Is(err, fs.ErrExist):
		e = wield.Errorf(wield.ErrExecution, "%s: already exists", what)
	case errors.Is(err, fs.ErrPermission):
		e = fileAccessDenied("%s: the operating system refused (%s)", what, r)
	case errors.Is(err, syscall.ENOTDIR):
		e = wield.Errorf(wield.ErrExecution, "%s: not a directory (or a part of the path is a file)", what)
	case errors.Is(err, syscall.EISDIR):
		e = wield.Errorf(wield.ErrExecution, "%s: is a directory", what)
	case errors.Is(err, syscall.ENOTEMPTY):
		e = wield.Errorf(wield.ErrExecution, "%s: the directory is not empty; delete what it holds first", what)
	case errors.Is(err, syscall.ENAMETOOLONG):
		e = wield.Errorf(wield.ErrValidation, "%s: a name is too long", what)
	case errors.Is(err, syscall.EINVAL):
		e = wield.Errorf(wield.ErrValidation, "%s: the operating system rejects it (%s)", what, r)
	default:
		e = wield.Errorf(wield.ErrExecution, "%s: %s", what, r)
	}
	e.(*wield.Error).Err = err
	return e
}

func (f *fileSet) list(ctx context.Context, in ListFilesInput) (ListFilesOutput, error) {
	in.Pattern = strings.TrimPrefix(in.Pattern, "./")
	if err := checkGlob(in.Pattern); err != nil {
		return ListFilesOutput{}, err
	}
	sb, err := f.sandbox(ctx)
	if err != nil {
		return ListFilesOutput{}, err
	}
	defer sb.close()
	t, err := sb.resolve(in.Path)
	if err != nil {
		return ListFilesOutput{}, err
	}
	what := "list " + strconv.Quote(t.shown)
	dir := t.sp.root
	if t.rel != "." {
		r, err := t.sp.root.OpenRoot(t.rel)
		if err != nil {
			return ListFilesOutput{}, fsError(what, err)
		}
		defer r.Close()
		dir = r
	}
	out := ListFilesOutput{Files: []FileInfo{}}
	err = fs.WalkDir(dir.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		switch {
		case err != nil && p == ".":
			return err
		case err != nil:
			return nil // an unreadable subfolder is listed without its contents
		case p == ".":
			return nil
		}
		if in.Pattern == "" || matchGlob(in.Pattern, p) {
			if len(out.Files) == MaxListFiles {
				out.Truncated = true
				return fs.SkipAll
			}
			if fi, err := d.Info(); err == nil {
				out.Files = append(out.Files, listEntry(reusable(filepath.Join(t.shown, filepath.FromSlash(p))), fi))
			}
		}
		if d.IsDir() && !in.Recursive {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return ListFilesOutput{}, fsError(what, err)
	}
	return out, nil
}

func listEntry(p string, fi fs.FileInfo) FileInfo {
	e := FileInfo{Path: p, Name: fi.Name(), IsDir: fi.IsDir(), Modified: fi.ModTime().UnixMilli(), IsSymlink: fi.Mode()&fs.ModeSymlink != 0}
	if !e.IsDir {
		e.Size = fi.Size()
	}
	return e
}

// maxGlobStars bounds the ** of a pattern, whose matching costs grow with
// the power of their number.
const maxGlobStars = 4

func checkGlob(pattern string) error {
	if pattern == "" {
		return nil
	}
	if strings.Count(pattern, "**") > maxGlobStars {
		return wield.Errorf(wield.ErrValidation, "pattern %q has more than %d **", pattern, maxGlobStars)
	}
	for seg := range strings.SplitSeq(pattern, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return wield.Errorf(wield.ErrValidation, "pattern %q is not a valid glob: %q is malformed (unclosed [ or a trailing \\)", pattern, seg)
		}
	}
	return nil
}

// matchGlob reports whether name, a slash-separated path below the listed
// folder, matches pattern: by its last element when the pattern has no
// slash, else element by element, with ** matching any number of them.
func matchGlob(pattern, name string) bool {
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(name))
		return ok
	}
	return matchElems(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchElems(pat, elems []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(elems); i++ {
				if matchElems(pat[1:], elems[i:]) {
					return true
				}
			}
			return false
		}
		if len(elems) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], elems[0]); !ok {
			return false
		}
		pat, elems = pat[1:], elems[1:]
	}
	return len(elems) == 0
}

func (f *fileSet) delete(ctx context.Context, in DeleteFileInput) (DeleteFileOutput, error) {
	sb, err := f.sandbox(ctx)
	if err != nil {
		return DeleteFileOutput{}, err
	}
	defer sb.close()
	t, err := sb.resolve(in.Path)
	if err != nil {
		return DeleteFileOutput{}, err
	}
	if t.rel == "." {
		return DeleteFileOutput{}, fileAccessDenied("%q is an allowed folder itself; it cannot be deleted", t.shown)
	}
	what := "delete " + strconv.Quote(t.shown)
	fi, err := t.sp.root.Lstat(t.rel)
	if errors.Is(err, fs.ErrNotExist) {
		return DeleteFileOutput{Path: t.shown}, nil
	}
	if err != nil {
		return DeleteFileOutput{}, fsError(what, err)
	}
	err = t.sp.root.Remove(t.rel)
	f.cache.invalidate(t.abs, fi.IsDir())
	switch {
	case fi.IsDir() && (errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY)):
		return DeleteFileOutput{}, wield.Errorf(wield.ErrExecution, "%s: the folder is not empty; delete what it holds first", what)
	case errors.Is(err, fs.ErrNotExist):
		return DeleteFileOutput{Path: t.shown}, nil
	case err != nil:
		return DeleteFileOutput{}, fsError(what, err)
	}
	return DeleteFileOutput{Deleted: true, Path: t.shown}, nil
}

func (f *fileSet) move(ctx context.Context, in MoveFileInput) (MoveFileOutput, error) {
	sb, err := f.sandbox(ctx)
	if err != nil {
		return MoveFileOutput{}, err
	}
	defer sb.close()
	from, err := sb.resolve(in.From)
	if err != nil {
		return MoveFileOutput{}, err
	}
	to, err := sb.resolve(in.To)
	if err != nil {
		return MoveFileOutput{}, err
	}
	if from.rel == "." || to.rel == "." {
		return MoveFileOutput{}, fileAccessDenied("an allowed folder itself cannot be moved or replaced (%q to %q)", from.shown, to.shown)
	}
	what := fmt.Sprintf("move %q to %q", from.shown, to.shown)
	root, fromRel, toRel, ok := sb.common(from, to)
	if !ok {
		return f.moveAcross(ctx, from, to, in.Overwrite, what)
	}
	fi, err := root.Lstat(fromRel)
	if err != nil {
		return MoveFileOutput{}, fsError(what, err)
	}
	if from.abs == to.abs {
		return MoveFileOutput{Success: true}, nil
	}
	if _, err := root.Lstat(toRel); err == nil && !in.Overwrite {
		return MoveFileOutput{}, wield.Errorf(wield.ErrExecution, "%s: the destination already exists; pass overwrite true to replace it", what)
	}
	if err := mkdirParents(root, toRel, what); err != nil {
		return MoveFileOutput{}, err
	}
	err = root.Rename(fromRel, toRel)
	f.cache.invalidate(from.abs, fi.IsDir())
	f.cache.invalidate(to.abs, true)
	if errors.Is(err, syscall.EINVAL) {
		return MoveFileOutput{}, wield.Errorf(wield.ErrValidation, "%s: a folder cannot be moved into itself", what)
	}
	if err != nil {
		return MoveFileOutput{}, fsError(what, err)
	}
	return MoveFileOutput{Success: true}, nil
}

// mkdirParents makes the missing folders above rel.
func mkdirParents(root *os.Root, rel, what string) error {
	dir := filepath.Dir(rel)
	if dir == "." {
		return nil
	}
	err := root.MkdirAll(dir, 0o755)
	switch {
	case errors.Is(err, fs.ErrExist), errors.Is(err, syscall.ENOTDIR):
		return wield.Errorf(wield.ErrExecution, "%s: a part of the path is a file, not a folder", what)
	case err != nil:
		return fsError(what, err)
	}
	return nil
}

// common returns the deepest folder of the sandbox holding both targets, as
// a rename needs one root.
func (sb *fileSandbox) common(a, b fileTarget) (root *os.Root, arel, brel string, ok bool) {
	if a.sp == b.sp {
		return a.sp.root, a.rel, b.rel, true
	}
	depth := -1
	for i := range sb.spaces {
		sp := &sb.spaces[i]
		if sp.root == nil {
			continue
		}
		ar, aok := below(sp.dir, a.abs)
		br, bok := below(sp.dir, b.abs)
		if aok && bok && len(sp.dir) > depth {
			root, arel, brel, ok, depth = sp.root, ar, br, true, len(sp.dir)
		}
	}
	return root, arel, brel, ok
}

func fileKind(fi fs.FileInfo) string {
	switch {
	case fi.IsDir():
		return "directory"
	case fi.Mode()&fs.ModeSymlink != 0:
		return "symbolic link"
	case fi.Mode().IsRegular():
		return "file"
	}
	return "special file"
}

func (f *fileSet) info(ctx context.Context, in FileInfoInput) (FileInfoOutput, error) {
	sb, err := f.sandbox(ctx)
	if err != nil {
		return FileInfoOutput{}, err
	}
	defer sb.close()
	t, err := sb.resolve(in.Path)
	if err != nil {
		return FileInfoOutput{}, err
	}
	what := "get info of " + strconv.Quote(t.shown)
	out := FileInfoOutput{Path: t.shown}
	fi, err := t.sp.root.Lstat(t.rel)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return out, nil
	case err != nil:
		return FileInfoOutput{}, fsError(what, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		out.IsSymlink = true
		fi, err = t.sp.root.Stat(t.rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return out, nil // a dangling link
		case err != nil:
			return FileInfoOutput{}, fsError(what, err)
		}
	}
	out.Exists = true
	out.IsDir = fi.IsDir()
	out.Modified = fi.ModTime().UnixMilli()
	out.Mode = fi.Mode().String()
	if !out.IsDir {
		out.Size = fi.Size()
	}
	return out, nil
}

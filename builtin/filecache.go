package builtin

// The content path of the file tools: read_file and write_file, reads
// through the cache, atomic writes that keep it true, content encodings,
// and moves between folders (which copy content).

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
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

// racyWindow is how old a file's modification time must be before its
// content is cached. Filesystems stamp times from a coarse clock (a kernel
// tick on Linux, two seconds on FAT), so a file changed again within the same
// tick keeps its size and time; caching only files older than the window
// means such a change cannot go unseen (git's "racy clean" rule).
const racyWindow = 2 * time.Second

// cacheEntryOverhead is what one cache entry costs besides its key and content:
// the list element, the map slot and the file information.
const cacheEntryOverhead = 256

// fileCache keeps the content of files read through the file tools, bounded
// in bytes, least recently used out first (seed 003 "performance": cache
// read-only operations in memory). An entry is served only while the file,
// opened again through its root for every read, still has the identity
// (device and inode), size and modification time it had when it was read:
// a file replaced or changed by someone else is read afresh. Writes, deletes
// and moves made by the tools drop their entries at once.
//
// A nil *fileCache is a disabled cache: every method does nothing.
type fileCache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	order list.List // of *cachedFile, most recently used first
	items map[string]*list.Element

	hits, misses atomic.Int64
}

// cachedFile is one file's content as it was read.
type cachedFile struct {
	key  string
	data string
	text bool // data is valid UTF-8
	info fs.FileInfo
}

func (e *cachedFile) cost() int64 { return int64(len(e.data)+len(e.key)) + cacheEntryOverhead }

func newFileCache(max int64) *fileCache {
	return &fileCache{max: max, items: make(map[string]*list.Element)}
}

// get returns the entry for key if it still describes the file whose current
// information is fi, and drops a stale one.
func (c *fileCache) get(key string, fi fs.FileInfo) *cachedFile {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		c.misses.Add(1)
		return nil
	}
	e := el.Value.(*cachedFile)
	if !sameVersion(e.info, fi) {
		c.drop(el)
		c.misses.Add(1)
		return nil
	}
	c.order.MoveToFront(el)
	c.hits.Add(1)
	return e
}

// sameVersion reports whether two observations of a file show the same
// file, unchanged.
func sameVersion(a, b fs.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && os.SameFile(a, b)
}

// put keeps e unless it is too large for the cache or too recent to trust
// (see racyWindow), evicting the least recently used entries to make room.
func (c *fileCache) put(e *cachedFile, now time.Time) {
	if c == nil || e.cost() > c.max || now.Sub(e.info.ModTime()) < racyWindow {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[e.key]; ok {
		c.drop(el)
	}
	c.items[e.key] = c.order.PushFront(e)
	c.used += e.cost()
	for c.used > c.max {
		c.drop(c.order.Back())
	}
}

// invalidate drops the entry for key and, when tree is set (a directory was
// deleted or moved), every entry below it.
func (c *fileCache) invalidate(key string, tree bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.drop(el)
	}
	if !tree {
		return
	}
	prefix := key
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	for k, el := range c.items {
		if strings.HasPrefix(k, prefix) {
			c.drop(el)
		}
	}
}

func (c *fileCache) drop(el *list.Element) {
	e := el.Value.(*cachedFile)
	c.order.Remove(el)
	delete(c.items, e.key)
	c.used -= e.cost()
}

// stats returns how many reads were served from the cache and how many were
// not, and the bytes the cache holds.
func (c *fileCache) stats() (hits, misses, used int64) {
	if c == nil {
		return 0, 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits.Load(), c.misses.Load(), c.used
}

func (f *fileSet) read(ctx context.Context, in ReadFileInput) (ReadFileOutput, error) {
	enc, err := contentEncoding(in.Encoding)
	if err != nil {
		return ReadFileOutput{}, err
	}
	sb, err := f.sandbox(ctx)
	if err != nil {
		return ReadFileOutput{}, err
	}
	defer sb.close()
	t, err := sb.resolve(in.Path)
	if err != nil {
		return ReadFileOutput{}, err
	}
	c, err := f.load(t.sp.root, t, "read")
	if err != nil {
		return ReadFileOutput{}, err
	}
	out := ReadFileOutput{Size: int64(len(c.data)), Encoding: enc}
	switch enc {
	case "base64":
		out.Content = base64.StdEncoding.EncodeToString([]byte(c.data))
	case "hex":
		out.Content = hex.EncodeToString([]byte(c.data))
	default:
		if !c.text {
			return ReadFileOutput{}, wield.Errorf(wield.ErrExecution, "read %q: the file is not UTF-8 text; read it with encoding base64 or hex", t.shown)
		}
		out.Content = c.data
	}
	return out, nil
}

func (f *fileSet) write(ctx context.Context, in WriteFileInput) (WriteFileOutput, error) {
	enc, err := contentEncoding(in.Encoding)
	if err != nil {
		return WriteFileOutput{}, err
	}
	data := []byte(in.Content)
	switch enc {
	case "base64":
		data, err = base64.StdEncoding.DecodeString(in.Content)
	case "hex":
		data, err = hex.DecodeString(in.Content)
	}
	if err != nil {
		return WriteFileOutput{}, wield.Errorf(wield.ErrValidation, "content is not valid %s: %v", enc, err)
	}
	if int64(len(data)) > f.maxWrite {
		return WriteFileOutput{}, wield.Errorf(wield.ErrValidation, "content is %d bytes, over the write limit of %d bytes", len(data), f.maxWrite)
	}
	sb, err := f.sandbox(ctx)
	if err != nil {
		return WriteFileOutput{}, err
	}
	defer sb.close()
	t, err := sb.resolve(in.Path)
	if err != nil {
		return WriteFileOutput{}, err
	}
	if err := f.writeAtomic(ctx, t.sp.root, t, data, true); err != nil {
		return WriteFileOutput{}, err
	}
	return WriteFileOutput{BytesWritten: len(data), Path: t.shown}, nil
}

// load returns the content of a regular file, from the cache when the file
// is unchanged since it was cached.
func (f *fileSet) load(root *os.Root, t fileTarget, op string) (*cachedFile, error) {
	what := op + " " + strconv.Quote(t.shown)
	// O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
	// below as not a regular file.
	file, err := root.OpenFile(t.rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fsError(what, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	switch {
	case err != nil:
		return nil, fsError(what, err)
	case fi.IsDir():
		return nil, wield.Errorf(wield.ErrExecution, "%s: it is a directory; use list_files to see what it holds", what)
	case !fi.Mode().IsRegular():
		return nil, wield.Errorf(wield.ErrExecution, "%s: not a regular file (%s)", what, fi.Mode().Type())
	case fi.Size() > f.maxRead:
		return nil, f.tooLarge(what, fi.Size())
	}
	if err := f.checkLinks(what, openLinks(file, fi)); err != nil {
		return nil, err
	}
	if c := f.cache.get(t.abs, fi); c != nil {
		return c, nil
	}
	data, err := readAtMost(file, fi.Size(), f.maxRead)
	switch {
	case errors.Is(err, errFileTooLarge):
		return nil, f.tooLarge(what, int64(len(data)))
	case err != nil:
		return nil, fsError(what, err)
	}
	c := &cachedFile{key: t.abs, data: string(data), text: utf8.Valid(data), info: fi}
	if after, err := file.Stat(); err == nil && sameVersion(fi, after) && int64(len(data)) == fi.Size() {
		f.cache.put(c, time.Now())
	}
	return c, nil
}

func (f *fileSet) tooLarge(what string, size int64) error {
	return wield.Errorf(wield.ErrExecution, "%s: the file is %d bytes, over the read limit of %d bytes", what, size, f.maxRead)
}

var errFileTooLarge = errors.New("over the limit")

// readAtMost reads r to its end, refusing more than limit bytes; hint is
// the expected size.
func readAtMost(r io.Reader, hint, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(hint, limit)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, errFileTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// writeAtomic replaces the file at t.rel in root with data: it writes a
// temporary file in the same directory, syncs it and renames it over the
// target, so that readers see the old content or the new, never a part.
// The temporary file is removed when anything fails.
func (f *fileSet) writeAtomic(ctx context.Context, root *os.Root, t fileTarget, data []byte, overwrite bool) (err error) {
	what := "write " + strconv.Quote(t.shown)
	if t.rel == "." {
		return wield.Errorf(wield.ErrExecution, "%s: it is an allowed folder itself, not a file", what)
	}
	defer f.cache.invalidate(t.abs, false)
	if err := mkdirParents(root, t.rel, what); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	switch fi, err := root.Lstat(t.rel); {
	case err == nil && !overwrite:
		return wield.Errorf(wield.ErrExecution, "%s: it already exists; pass overwrite true to replace it", what)
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return wield.Errorf(wield.ErrValidation, "%s: it is a symbolic link, which write_file does not replace or write through; write to the file it points to", what)
	case err == nil && fi.IsDir():
		return wield.Errorf(wield.ErrExecution, "%s: it is a directory", what)
	case err == nil:
		if fi.Mode().IsRegular() {
			if err := f.checkLinks(what, entryLinks(root, t.rel, fi)); err != nil {
				return err
			}
		}
		mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return fsError(what, err)
	}
	tmp := filepath.Join(filepath.Dir(t.rel), tempFileName())
	file, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fsError(what, err)
	}
	defer func() {
		if err != nil {
			_ = file.Close()
			_ = root.Remove(tmp)
		}
	}()
	if _, err := file.Write(data); err != nil {
		return fsError(what, err)
	}
	if err := file.Chmod(mode); err != nil {
		return fsError(what, err)
	}
	if err := file.Sync(); err != nil {
		return fsError(what, err)
	}
	if err := file.Close(); err != nil {
		return fsError(what, err)
	}
	if err := ctx.Err(); err != nil {
		return err // the call is over: leave the old content in place
	}
	if err := root.Rename(tmp, t.rel); err != nil {
		return fsError(what, err)
	}
	return nil
}

// tempFileName is the name of a temporary file: hidden, and short whatever the
// target's name, so that it fits where the target fits.
func tempFileName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return ".wield-tmp-" + hex.EncodeToString(b[:])
}

// contentEncoding checks an encoding name; empty means UTF-8.
func contentEncoding(name string) (string, error) {
	switch strings.ToLower(name) {
	case "", "utf-8", "utf8":
		return "utf-8", nil
	case "base64":
		return "base64", nil
	case "hex":
		return "hex", nil
	}
	return "", wield.Errorf(wield.ErrValidation, "unknown encoding %q: use utf-8, base64 or hex", name)
}

// moveAcross moves a regular file between folders that do not share a
// root: it copies the file atomically, then deletes the original.
func (f *fileSet) moveAcross(ctx context.Context, from, to fileTarget, overwrite bool, what string) (MoveFileOutput, error) {
	fi, err := from.sp.root.Lstat(from.rel)
	switch {
	case err != nil:
		return MoveFileOutput{}, fsError(what, err)
	case !fi.Mode().IsRegular():
		return MoveFileOutput{}, wield.Errorf(wield.ErrExecution, "%s: only regular files move between different allowed folders, and this is a %s", what, fileKind(fi))
	}
	c, err := f.load(from.sp.root, from, "move")
	if err != nil {
		return MoveFileOutput{}, err
	}
	if int64(len(c.data)) > f.maxWrite {
		return MoveFileOutput{}, wield.Errorf(wield.ErrExecution, "%s: the file is %d bytes, over the write limit of %d bytes", what, len(c.data), f.maxWrite)
	}
	if err := f.writeAtomic(ctx, to.sp.root, to, []byte(c.data), overwrite); err != nil {
		return MoveFileOutput{}, err
	}
	err = from.sp.root.Remove(from.rel)
	f.cache.invalidate(from.abs, false)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return MoveFileOutput{}, wield.Errorf(wield.ErrExecution, "%s: the file was copied, but the original could not be deleted: %s", what, osReason(err))
	}
	return MoveFileOutput{Success: true}, nil
}

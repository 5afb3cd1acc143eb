package engine

import (
	"container/list"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/wieldhq/wield"
)

// Defaults of [ReplayWindow].
const (
	DefaultReplayKeys  = 10_000
	DefaultReplayAge   = 10 * time.Minute
	DefaultReplayBytes = 64 << 20
)

// ReplayWindow bounds what the engine remembers in memory of the calls
// with an idempotency key that succeeded, so that the same key is answered
// without running the tool again even when the store cannot replay (no
// store, or one that is not a [wield.Replayer]), and before a buffered
// store has written the first record. A key is remembered for Age after
// its call finished, and only the newest Keys keys are; outputs are kept
// up to Bytes in all, the oldest dropped first. A key still remembered
// whose output was dropped is refused (rejected: the tool does not run)
// unless the store can replay it. Zero fields mean the defaults.
type ReplayWindow struct {
	Keys  int           // 10,000 keys
	Age   time.Duration // 10 minutes
	Bytes int           // 64 MiB of outputs
}

// window is the engine's replay window: keys in the order their calls
// finished, oldest first, each found by the hash of its tool and key (a
// key's length is the client's choice; its hash's is not).
type window struct {
	mu    sync.Mutex
	max   ReplayWindow
	byKey map[[sha256.Size]byte]*list.Element
	order list.List // of *kept, oldest first
	bytes int       // of the outputs kept
	// dropped is where dropping outputs for room goes on from: every
	// entry up to it has lost its output; nil means none has.
	dropped *list.Element
}

// kept is one remembered call.
type kept struct {
	key    [sha256.Size]byte
	at     time.Time
	digest string
	callID string
	out    json.RawMessage // nil once dropped for room
}

func newWindow(w ReplayWindow) *window {
	if w.Keys <= 0 {
		w.Keys = DefaultReplayKeys
	}
	if w.Age <= 0 {
		w.Age = DefaultReplayAge
	}
	if w.Bytes <= 0 {
		w.Bytes = DefaultReplayBytes
	}
	return &window{max: w, byKey: map[[sha256.Size]byte]*list.Element{}}
}

func windowKey(tool, key string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(key))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// find returns the remembered call of tool with key, if any: found reports
// that the key is remembered, and rec is nil when its output was dropped.
func (w *window) find(tool, key string) (rec *wield.Record, found bool) {
	k := windowKey(tool, key)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expire(time.Now())
	el, ok := w.byKey[k]
	if !ok {
		return nil, false
	}
	c := el.Value.(*kept)
	if c.out == nil {
		return nil, true
	}
	return &wield.Record{Call: &wield.Call{ID: c.callID}, Digest: c.digest, Result: &wield.Result{OK: true, Output: c.out}}, true
}

// keep remembers a successful call of tool with key, its arguments'
// digest and its output as recorded.
func (w *window) keep(tool, key, callID, digest string, out json.RawMessage) {
	// The ID is copied: NewID writes 16 IDs to one allocation, which a
	// kept ID would hold whole for as long as the window keeps it.
	c := &kept{key: windowKey(tool, key), at: time.Now(), digest: digest, callID: strings.Clone(callID), out: out}
	if c.out == nil {
		c.out = json.RawMessage("null")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if el, ok := w.byKey[c.key]; ok { // a run after the key's output was dropped
		w.remove(el)
	}
	if len(c.out) > w.max.Bytes {
		c.out = nil // too large to keep: the key alone is remembered
	}
	w.byKey[c.key] = w.order.PushBack(c)
	w.bytes += len(c.out)
	w.expire(c.at)
	for w.order.Len() > w.max.Keys {
		w.remove(w.order.Front())
	}
	for w.bytes > w.max.Bytes {
		w.dropOldestOutput()
	}
}

// expire forgets the calls that finished more than Age ago.
func (w *window) expire(now time.Time) {
	for el := w.order.Front(); el != nil && now.Sub(el.Value.(*kept).at) > w.max.Age; el = w.order.Front() {
		w.remove(el)
	}
}

func (w *window) remove(el *list.Element) {
	c := el.Value.(*kept)
	if el == w.dropped {
		w.dropped = el.Prev()
	}
	w.bytes -= len(c.out)
	delete(w.byKey, c.key)
	w.order.Remove(el)
}

// dropOldestOutput drops the output of the oldest entry that still has
// one, keeping its key.
func (w *window) dropOldestOutput() {
	el := w.order.Front()
	if w.dropped != nil {
		el = w.dropped.Next()
	}
	for ; el != nil; el = el.Next() {
		w.dropped = el
		if c := el.Value.(*kept); c.out != nil {
			w.bytes -= len(c.out)
			c.out = nil
			return
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"
)

// stdioDrain holds back the end of a stdio client's input until every
// request read before it is answered, or until grace has passed or ctx
// ends. A client that writes its requests and closes stdin at once (a
// one-shot pipe: `wield mcp < requests.jsonl`) is still reading stdout; the
// go-sdk, though, closes its connection on the end of the input and drops
// every answer not written yet (modelcontextprotocol/go-sdk#1061).
//
// The requests are told from the bytes the transport reads (JSON values,
// batches included); an answer is a response naming a request's ID among
// the bytes the transport writes, each Write being one message or batch.
type stdioDrain struct {
	ctx   context.Context
	in    io.Reader
	out   io.Writer
	grace time.Duration
	// atEOF runs once when the input ends, before the wait: calls waiting
	// for a person's approval end then, as on a shutdown.
	atEOF func()

	feed    *io.PipeWriter // what was read, to the goroutine that finds the requests
	decoded chan struct{}  // closed once that goroutine has read all of it

	// pending counts, by ID (its JSON), the requests read less the
	// answers written. An answer may be written before its request is
	// noted (the transport reads the same bytes at once): its count is -1
	// until then.
	mu      sync.Mutex
	pending map[string]int
	changed chan struct{} // closed, and replaced, when pending changes
}

func newStdioDrain(ctx context.Context, in io.Reader, out io.Writer, grace time.Duration, atEOF func()) *stdioDrain {
	pr, pw := io.Pipe()
	d := &stdioDrain{ctx: ctx, in: in, out: out, grace: grace, atEOF: atEOF, feed: pw,
		decoded: make(chan struct{}), pending: map[string]int{}, changed: make(chan struct{})}
	go d.decode(pr)
	return d
}

// decode notes the ID of every request in the input. Input it cannot read
// as JSON ends the noting (the server answers it with an error, and later
// requests are not waited for); the rest is still consumed.
func (d *stdioDrain) decode(r *io.PipeReader) {
	defer close(d.decoded)
	dec := json.NewDecoder(r)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			io.Copy(io.Discard, r)
			return
		}
		d.count(rpcIDs(raw, true), 1)
	}
}

// rpcIDs returns the IDs of the requests (requests true) or of the
// responses in one message or batch.
func rpcIDs(raw []byte, requests bool) []string {
	var msgs []json.RawMessage
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(raw, &msgs) != nil {
			return nil
		}
	} else {
		msgs = []json.RawMessage{raw}
	}
	var ids []string
	for _, m := range msgs {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if json.Unmarshal(m, &msg) != nil || len(msg.ID) == 0 || string(msg.ID) == "null" || (msg.Method != nil) != requests {
			continue
		}
		ids = append(ids, canonicalID(msg.ID))
	}
	return ids
}

// canonicalID writes an ID as the server will write it back, so that the
// response's ID matches: a string as its JSON without the escapes a client
// may have used, a number as its integer part (the go-sdk reads a number
// ID so, jsonrpc2.MakeID: 2.5 is answered as 2, 7.0 and 1e2 as 7 and 100).
func canonicalID(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	if f, ok := v.(float64); ok {
		return strconv.FormatInt(int64(f), 10)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(id)
	}
	return string(b)
}

func (d *stdioDrain) Read(p []byte) (int, error) {
	n, err := d.in.Read(p)
	if n > 0 {
		d.feed.Write(p[:n])
	}
	if err == nil {
		return n, nil
	}
	d.feed.Close()
	if errors.Is(err, io.EOF) {
		if n > 0 {
			return n, nil // the end comes with the next Read, once these are read too
		}
		d.wait()
	}
	return n, err
}

// wait returns once every request read is answered, grace has passed or
// ctx has ended.
func (d *stdioDrain) wait() {
	<-d.decoded
	if d.atEOF != nil {
		d.atEOF()
		d.atEOF = nil
	}
	timer := time.NewTimer(d.grace)
	defer timer.Stop()
	for {
		d.mu.Lock()
		n, changed := len(d.pending), d.changed
		d.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		case <-d.ctx.Done():
			return
		}
	}
}

// writer is the protocol's output, noting the requests it answers.
func (d *stdioDrain) writer() io.Writer { return drainWriter{d} }

type drainWriter struct{ d *stdioDrain }

func (w drainWriter) Write(p []byte) (int, error) {
	n, err := w.d.out.Write(p)
	if err != nil {
		return n, err
	}
	w.d.count(rpcIDs(p, false), -1)
	return n, nil
}

// count adds by to the count of each ID: 1 for a request, -1 for an answer.
func (d *stdioDrain) count(ids []string, by int) {
	if len(ids) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		if d.pending[id] += by; d.pending[id] == 0 {
			delete(d.pending, id)
		}
	}
	close(d.changed)
	d.changed = make(chan struct{})
}

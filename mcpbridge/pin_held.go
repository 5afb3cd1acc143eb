package mcpbridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wieldhq/wield"
)

// HeldTool is an imported tool held because the server changed its
// definition since it was pinned: what `wield pins`, GET /v1/pins and the
// console show an operator before they accept it.
type HeldTool struct {
	// Name is the tool's registry name (server__tool by default), the name
	// accepted with [Importer.AcceptName].
	Name string `json:"name"`
	// Server and Tool are the server's name and the server's name for the
	// tool.
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Changed lists the parts that differ from the pin ("annotations",
	// "description", "input_schema", "name", "output_schema", "permission"),
	// sorted.
	Changed []string `json:"changed"`
	// Pinned and Current are the definitions as accepted and as the server
	// offers them now: {"annotations", "description", "input_schema",
	// "name", "output_schema"}. Pinned is null when the pin kept no
	// definition (written before wield kept them, or over
	// [MaxPinDefinition]); Current is null over MaxPinDefinition.
	Pinned  json.RawMessage `json:"pinned"`
	Current json.RawMessage `json:"current"`
	// PinnedAt is when the accepted definition was pinned; HeldSince when
	// the change was seen.
	PinnedAt  time.Time `json:"pinned_at,omitzero"`
	HeldSince time.Time `json:"held_since,omitzero"`
	// Hash is the fingerprint of the current definition: an accept given
	// it ([Importer.AcceptName]) is refused if the server changed the tool
	// again since, so what is accepted is what was shown.
	Hash string `json:"hash"`
	// Diff shows each changed part as a unified line diff of its
	// pretty-printed JSON (the description as its text), pinned first;
	// control characters are written as visible escapes.
	Diff string `json:"diff"`
}

// ErrNotHeld is wrapped by the error of [Importer.AcceptName] and
// [Importer.Accept] for a tool that is imported and not held: there is
// nothing to accept.
var ErrNotHeld = errors.New("the tool is not held")

// ErrPinMoved is wrapped by the error of [Importer.AcceptName] when the
// server changed the tool again since the definition whose hash was given:
// accepting it would accept a definition nobody was shown.
var ErrPinMoved = errors.New("the tool changed again since it was shown")

// Held returns the held tools of every server, sorted by name, each with
// what changed since it was pinned. It returns an error when the pin store
// cannot be read.
func (im *Importer) Held() ([]HeldTool, error) {
	type held struct {
		server string
		t      impTool
	}
	var list []held
	im.mu.Lock()
	servers := slices.Clone(im.order)
	im.mu.Unlock()
	for _, s := range servers {
		s.mu.Lock()
		for _, t := range s.tools {
			if t.owned && t.held {
				list = append(list, held{s.cfg.Name, *t})
			}
		}
		s.mu.Unlock()
	}
	out := make([]HeldTool, 0, len(list))
	for _, h := range list {
		old, ok, err := im.opts.Pins.Pin(h.server, h.t.remote)
		if err != nil {
			return nil, fmt.Errorf("held tools: %w", err)
		}
		out = append(out, im.heldTool(h.server, &h.t, old, ok))
	}
	slices.SortFunc(out, func(a, b HeldTool) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// heldTool describes a held tool against its pin (ok false: none, which a
// hand-edited pins file can cause).
func (im *Importer) heldTool(server string, t *impTool, old Pin, ok bool) HeldTool {
	h := HeldTool{Name: t.name, Server: server, Tool: t.remote, HeldSince: t.pin.Time, Hash: t.pin.Hash,
		Current: t.pin.Definition}
	if ok {
		h.PinnedAt, h.Pinned = old.Time, old.Definition
	}
	h.Changed = old.Changed(t.pin)
	h.Diff = im.diffOf(old.Hash, h)
	return h
}

// maxDiffCache bounds the diffs kept: past it the cache starts again.
const maxDiffCache = 256

// diffOf is the diff of a held tool, computed once per pair of
// definitions: GET /v1/pins, which any client may poll, must not cost a
// diff of up to MaxPinDefinition each time.
func (im *Importer) diffOf(pinnedHash string, h HeldTool) string {
	key := pinnedHash + " " + h.Hash
	im.diffMu.Lock()
	d, ok := im.diffs[key]
	im.diffMu.Unlock()
	if ok {
		return d
	}
	d = pinDiff(h.Pinned, h.Current, h.Changed)
	im.diffMu.Lock()
	if im.diffs == nil || len(im.diffs) >= maxDiffCache {
		im.diffs = map[string]string{}
	}
	im.diffs[key] = d
	im.diffMu.Unlock()
	return d
}

// AcceptName accepts the current definition of the held tool of that
// registry name (see [Importer.Accept]) and returns it as it was held.
// hash, when not empty, must be the [HeldTool].Hash shown: a tool changed
// again since is refused with an error wrapping [ErrPinMoved]. A name no
// server imported is an error wrapping [wield.ErrNotFound], a tool not held
// one wrapping [ErrNotHeld].
func (im *Importer) AcceptName(name, hash string) (HeldTool, error) {
	im.mu.Lock()
	servers := slices.Clone(im.order)
	im.mu.Unlock()
	for _, s := range servers {
		s.mu.Lock()
		for _, t := range s.tools {
			if t.owned && t.name == name {
				h, err := s.accept(t, hash)
				s.mu.Unlock()
				return h, err
			}
		}
		s.mu.Unlock()
	}
	return HeldTool{}, fmt.Errorf("accept %s: no MCP server imported a tool of that name: %w", name, wield.ErrNotFound)
}

// accept pins t's current definition and makes it callable; s.mu is held.
func (s *impServer) accept(t *impTool, hash string) (HeldTool, error) {
	im, server := s.im, s.cfg.Name
	if !t.held {
		return HeldTool{}, fmt.Errorf("accept %s (mcp server %q, tool %q): %w", t.name, server, t.remote, ErrNotHeld)
	}
	if hash != "" && hash != t.pin.Hash {
		return HeldTool{}, fmt.Errorf("accept %s (mcp server %q, tool %q): %w: list the held tools again", t.name, server, t.remote, ErrPinMoved)
	}
	old, ok, err := im.opts.Pins.Pin(server, t.remote)
	if err != nil {
		return HeldTool{}, fmt.Errorf("accept %s: %w", t.name, err)
	}
	h := im.heldTool(server, t, old, ok)
	p := t.pin
	p.Time = time.Now()
	if err := im.opts.Pins.SetPin(server, t.remote, p); err != nil {
		return HeldTool{}, fmt.Errorf("accept %s: %w", t.name, err)
	}
	if err := s.release(t); err != nil {
		return HeldTool{}, fmt.Errorf("accept %s: %w", t.name, err)
	}
	t.pin = p
	im.log.Info("mcp tool accepted", "server", server, "tool", t.remote, "name", t.name, "changed", pinChangeList(h.Changed))
	return h, nil
}

// release makes a held tool callable again: its definition is the one
// pinned now. s.mu is held.
func (s *impServer) release(t *impTool) error {
	next := *t.tool
	next.Status = ""
	if err := s.im.reg.Update(&next); err != nil {
		return err
	}
	t.tool, t.held = &next, false
	return nil
}

// ReloadPins reads the pin store again (when it can: [FilePins.Reload])
// and releases every held tool whose current definition is now the pinned
// one: another process accepted it (`wield pins accept` run without
// --server beside a `wield serve` sharing the pins file, which watches it
// and calls this). A tool pinned otherwise stays held. It returns the
// names of the tools released, and an error when the store cannot be read
// (nothing is released then) or a tool could not be released (the others
// are).
func (im *Importer) ReloadPins() (released []string, err error) {
	if r, ok := im.opts.Pins.(interface{ Reload() error }); ok {
		if err := r.Reload(); err != nil {
			return nil, fmt.Errorf("reload pins: %w", err)
		}
	}
	im.mu.Lock()
	servers := slices.Clone(im.order)
	im.mu.Unlock()
	var errs []error
	for _, s := range servers {
		s.mu.Lock()
		for _, t := range s.tools {
			if !t.owned || !t.held {
				continue
			}
			p, ok, err := im.opts.Pins.Pin(s.cfg.Name, t.remote)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !ok || p.Hash != t.pin.Hash {
				continue // not accepted, or accepted as another definition
			}
			if err := s.release(t); err != nil {
				errs = append(errs, fmt.Errorf("release %s: %w", t.name, err))
				continue
			}
			t.pin = p
			released = append(released, t.name)
			im.log.Info("mcp tool accepted by another process", "server", s.cfg.Name, "tool", t.remote, "name", t.name)
		}
		s.mu.Unlock()
	}
	slices.Sort(released)
	if err := errors.Join(errs...); err != nil {
		return released, fmt.Errorf("reload pins: %w", err)
	}
	return released, nil
}

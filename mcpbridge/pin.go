package mcpbridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/wieldhq/wield/internal/atomicfile"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Pin is the fingerprint of a remote tool's definition as it was accepted:
// the SHA-256 of its canonical JSON as a whole and of each part, so that a
// change can be reported as "description and input schema changed" rather
// than only "changed".
type Pin struct {
	// Hash covers the name, description, input schema and output schema.
	Hash string `json:"hash"`
	// Parts hashes each of "name", "description", "input_schema" and
	// "output_schema" alone.
	Parts map[string]string `json:"parts,omitempty"`
	// Time is when the definition was pinned.
	Time time.Time `json:"time"`
	// Definition is the canonical JSON of the pinned parts ({"annotations",
	// "description", "input_schema", "name", "output_schema", and
	// "permission" when sent}), kept so that
	// a held tool can be shown as a diff of what was accepted and what the
	// server offers now ([HeldTool]). It is left out of a definition over
	// [MaxPinDefinition] bytes (the diff then says only which parts
	// changed), and is missing from pins written before wield kept it.
	Definition json.RawMessage `json:"definition,omitempty"`
}

// MaxPinDefinition is the most bytes of a tool's definition a [Pin] keeps
// for the diff of a held tool: room for any usual schema, while a server
// that sends megabytes (an enum of a million values) cannot make every
// write of the pins file, and the memory of each pin, that large.
const MaxPinDefinition = 256 << 10

// PinStore keeps the pins of imported tools between runs, keyed by server
// name and remote tool name. Implementations are safe for concurrent use.
// [MemPins] keeps them in memory, [FilePins] in a JSON file.
type PinStore interface {
	// Pin returns the pin of a tool; ok is false when there is none.
	Pin(server, tool string) (p Pin, ok bool, err error)
	// SetPin records the pin of a tool, replacing any earlier one.
	SetPin(server, tool string, p Pin) error
}

// PinBatcher is a [PinStore] that records many pins of one server at once;
// the importer uses it, when the store has it, to write the pins of one
// listing in one go (a file store otherwise rewrites its file once per
// tool, which makes importing N tools O(N²)). [MemPins] and [FilePins]
// have it.
type PinBatcher interface {
	// SetPins records the pins of a server's tools, by remote tool name,
	// replacing earlier ones; on an error none of them is recorded.
	SetPins(server string, pins map[string]Pin) error
}

// setPins records pins through the store's [PinBatcher], else one by one.
func setPins(st PinStore, server string, pins map[string]Pin) error {
	if len(pins) == 0 {
		return nil
	}
	if b, ok := st.(PinBatcher); ok {
		return b.SetPins(server, pins)
	}
	for tool, p := range pins {
		if err := st.SetPin(server, tool, p); err != nil {
			return err
		}
	}
	return nil
}

// PinTool fingerprints a remote tool's definition: its name, description,
// input schema, output schema and behaviour hints (read-only, destructive,
// idempotent, open-world, with MCP's defaults applied: they decide whether
// the tool needs a person's confirmation and whether it is retried), each
// written as canonical JSON (object keys sorted, no insignificant space,
// numbers as the SDK decoded them, so 10 and 10.0 are the same) and hashed
// with SHA-256. The description pinned is the text a model reads
// ([ImportDescription]): the description, or the title that stands in for
// an empty one, so that title drift is held too (a tool with a description
// pins the same hash as before titles were pinned). Icons, _meta and a
// title beside a description are left out: they describe the tool to
// people, while the pinned parts are what a model reads and sends and what
// decides how the call is guarded (so another wield's permission in _meta,
// [MetaPermission], is pinned as the part "permission" when it is sent).
func PinTool(t *mcp.Tool) (Pin, error) {
	parts := map[string]any{
		"name":          t.Name,
		"description":   ImportDescription(t),
		"input_schema":  t.InputSchema,
		"output_schema": t.OutputSchema,
		// The hints as wield reads them (MCP's defaults applied): they
		// decide the tool's permission and whether it is retried, so a
		// server must not lower them unnoticed.
		"annotations": ImportAnnotations(t.Annotations),
	}
	// The permission another wield exports under MetaPermission decides
	// how the call is guarded ([ImportPermission]), like the hints: a
	// server lowering it from confirm to auto is held. It is a part only
	// when the server sends it, so the pins of every other tool keep
	// their hashes.
	if perm, ok := t.Meta[MetaPermission]; ok {
		parts["permission"] = perm
	}
	p := Pin{Parts: make(map[string]string, len(parts))}
	whole := make(map[string]json.RawMessage, len(parts))
	for k, v := range parts {
		b, err := pinCanonical(v)
		if err != nil {
			return Pin{}, fmt.Errorf("pin tool %q: %s: %w", t.Name, k, err)
		}
		whole[k] = b
		p.Parts[k] = pinHash(b)
	}
	b, err := pinCanonical(whole)
	if err != nil {
		return Pin{}, fmt.Errorf("pin tool %q: %w", t.Name, err)
	}
	p.Hash = pinHash(b)
	if len(b) <= MaxPinDefinition {
		p.Definition = b
	}
	return p, nil
}

// Changed lists the parts whose hashes differ between p and q, sorted; all
// parts when either pin has no part hashes.
func (p Pin) Changed(q Pin) []string {
	var out []string
	for _, k := range []string{"annotations", "description", "input_schema", "name", "output_schema", "permission"} {
		a, okA := p.Parts[k]
		b, okB := q.Parts[k]
		if k == "permission" && !okA && !okB && len(p.Parts) > 0 && len(q.Parts) > 0 {
			continue // neither server sent one
		}
		if !okA || !okB || a != b {
			out = append(out, k)
		}
	}
	return out
}

func pinHash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// pinCanonical writes v as canonical JSON: it goes through a generic value
// (maps marshal with sorted keys), decoded with UseNumber so that a number
// is not rounded on the way.
func pinCanonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(g); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func pinKey(server, tool string) string { return server + "\x00" + tool }

// MemPins is a [PinStore] in memory, for tests and for processes that
// re-pin on every start. The zero value is ready to use.
type MemPins struct {
	mu   sync.Mutex
	pins map[string]Pin
}

// Pin returns the pin of a tool.
func (m *MemPins) Pin(server, tool string) (Pin, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pins[pinKey(server, tool)]
	return p, ok, nil
}

// SetPin records the pin of a tool.
func (m *MemPins) SetPin(server, tool string, p Pin) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pins == nil {
		m.pins = map[string]Pin{}
	}
	m.pins[pinKey(server, tool)] = p
	return nil
}

// SetPins records the pins of many tools of a server.
func (m *MemPins) SetPins(server string, pins map[string]Pin) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pins == nil {
		m.pins = make(map[string]Pin, len(pins))
	}
	for tool, p := range pins {
		m.pins[pinKey(server, tool)] = p
	}
	return nil
}

// FilePins is a [PinStore] kept in one JSON file ({"server": {"tool": pin}}),
// rewritten atomically (a temporary file in the same folder, synced, then
// renamed over the old one) on every change, so a crash leaves either the old
// pins or the new ones, never a torn file.
type FilePins struct {
	path string
	mu   sync.Mutex
	pins map[string]map[string]Pin
}

// OpenFilePins reads the pins kept at path; a missing file is an empty
// store, created on the first change. It returns an error when the file
// cannot be read or is not a pin file.
func OpenFilePins(path string) (*FilePins, error) {
	pins, err := pinReadFile(path)
	if err != nil {
		return nil, err
	}
	return &FilePins{path: path, pins: pins}, nil
}

// pinReadFile reads a pins file; a missing or empty one has no pins.
func pinReadFile(path string) (map[string]map[string]Pin, error) {
	pins := map[string]map[string]Pin{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return pins, nil
	case err != nil:
		return nil, fmt.Errorf("open pins: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return pins, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pins); err != nil {
		return nil, fmt.Errorf("open pins %s: %w", path, err)
	}
	if pins == nil {
		pins = map[string]map[string]Pin{}
	}
	return pins, nil
}

// Reload reads the file again, for pins another process wrote (`wield pins
// accept` beside a running `wield serve`); see [Importer.ReloadPins]. On an
// error the store keeps what it had.
func (f *FilePins) Reload() error {
	pins, err := pinReadFile(f.path)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.pins = pins
	f.mu.Unlock()
	return nil
}

// Path returns the file the pins are kept in.
func (f *FilePins) Path() string { return f.path }

// Pin returns the pin of a tool.
func (f *FilePins) Pin(server, tool string) (Pin, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pins[server][tool]
	return p, ok, nil
}

// SetPin records the pin of a tool and rewrites the file. On a write error
// the store keeps its previous content.
func (f *FilePins) SetPin(server, tool string, p Pin) error {
	if err := f.SetPins(server, map[string]Pin{tool: p}); err != nil {
		return fmt.Errorf("set pin %s/%s: %w", server, tool, errors.Unwrap(err))
	}
	return nil
}

// SetPins records the pins of many tools of a server and rewrites the file
// once. The file is read again first, so that pins another process wrote
// since (`wield pins accept` beside a running server) are kept, not
// written over; a file that cannot be read then is replaced by what the
// store holds. On a write error the store keeps its previous content.
func (f *FilePins) SetPins(server string, pins map[string]Pin) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	base := f.pins
	if disk, err := pinReadFile(f.path); err == nil {
		base = disk
	}
	next := make(map[string]map[string]Pin, len(base)+1)
	for k, v := range base {
		next[k] = v
	}
	tools := make(map[string]Pin, len(next[server])+len(pins))
	for k, v := range next[server] {
		tools[k] = v
	}
	for k, v := range pins {
		tools[k] = v
	}
	next[server] = tools
	if err := pinWriteFile(f.path, next); err != nil {
		return fmt.Errorf("set pins of %s: %w", server, err)
	}
	f.pins = next
	return nil
}

func pinWriteFile(path string, pins map[string]map[string]Pin) error {
	b, err := json.MarshalIndent(pins, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	return atomicfile.Write(path, b)
}

// pinChangeList formats changed parts for a message: "description and
// input schema".
func pinChangeList(parts []string) string {
	words := make([]string, len(parts))
	for i, p := range parts {
		words[i] = strings.ReplaceAll(p, "_", " ")
	}
	sort.Strings(words)
	switch len(words) {
	case 0:
		return "definition"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Package artifact edits the versioned documents agents work on
// (artifacts), over a [wield.ArtifactStore]: create, read a version,
// update by replacing a fragment, rewrite. Every change is a new version;
// old ones stay readable.
//
// # Updates by fragment
//
// A model asked to change part of a document quotes the part it means, and
// quotes it imperfectly: a space lost, a word misremembered. [Manager.Update]
// finds the fragment exactly if it can; otherwise it searches for the
// closest passage with diff-match-patch (github.com/sergi/go-diff), and
// takes it only when it is close enough (similarity at least
// [Manager.MinSimilarity], 0.8 by default, measured by edit distance) and
// no other passage is nearly as close. An exact fragment found more than
// once, a weak match and two equally good matches are refused with errors
// that say what to send instead.
//
// # Whose artifacts
//
// Every read and change names a [Scope]: the owner (the API key that asks,
// or "" without keys) and, for a tool called in a conversation, the
// conversation. An artifact outside the scope is [wield.ErrNotFound], the
// same as one that does not exist, so a scope learns nothing of the others.
package artifact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/wieldhq/wield"
)

// Errors of updates by fragment, for errors.Is.
var (
	ErrAmbiguous = errors.New("artifact: fragment is ambiguous")
	ErrNoMatch   = errors.New("artifact: fragment not found")
)

// Manager edits artifacts in a store. It retries a change when another
// writer got in between (wield.ErrConflict), a few times.
type Manager struct {
	store wield.ArtifactStore
	// MinSimilarity is how alike a passage must be to a fragment to stand
	// for it, from 0 to 1 (0.8 when zero).
	MinSimilarity float64
}

// New returns a manager over store.
func New(store wield.ArtifactStore) *Manager { return &Manager{store: store} }

// Scope is whose artifacts a read or change may reach: those of Owner
// (see [wield.Artifact].Owner) and, when Conversation is set, only those of
// that conversation and of none ([wield.ArtifactVisible]).
type Scope struct {
	Owner        string
	Conversation string
}

// Create stores a new artifact as version 1 for a.Owner; it assigns an ID
// (unguessable: [wield.NewID]) when a.ID is empty.
func (m *Manager) Create(ctx context.Context, a wield.Artifact) (*wield.Artifact, error) {
	if a.ID == "" {
		a.ID = "art_" + wield.NewID()
	}
	a.Version = 1
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now()
	}
	if err := m.store.CreateArtifact(ctx, &a); err != nil {
		return nil, fmt.Errorf("create artifact %s: %w", a.ID, err)
	}
	return &a, nil
}

// Read returns a version of an artifact in scope; version 0 is the latest.
// One out of scope is wield.ErrNotFound.
func (m *Manager) Read(ctx context.Context, sc Scope, id string, version int) (*wield.Artifact, error) {
	a, err := m.read(ctx, sc, id, version)
	if err != nil {
		return nil, fmt.Errorf("read artifact %s: %w", id, err)
	}
	return a, nil
}

// read is the one way to an artifact: from the owner's, and in the
// conversation's sight.
func (m *Manager) read(ctx context.Context, sc Scope, id string, version int) (*wield.Artifact, error) {
	a, err := m.store.Artifact(ctx, sc.Owner, id, version)
	if err != nil {
		return nil, err
	}
	if !wield.ArtifactVisible(a, sc.Conversation) {
		return nil, fmt.Errorf("artifact %s version %d: %w", id, version, wield.ErrNotFound)
	}
	return a, nil
}

// Rewrite replaces the whole content of an artifact in scope with a new version.
func (m *Manager) Rewrite(ctx context.Context, sc Scope, id, content string) (*wield.Artifact, error) {
	return m.change(ctx, sc, id, func(string) (string, error) { return content, nil })
}

// Update replaces the fragment old with new in the latest version of an
// artifact in scope, finding old exactly or, failing that, by fuzzy match
// (see the package doc).
func (m *Manager) Update(ctx context.Context, sc Scope, id, old, new string) (*wield.Artifact, error) {
	if old == "" {
		return nil, fmt.Errorf("update artifact %s: the fragment to replace is empty: use rewrite to replace everything", id)
	}
	return m.change(ctx, sc, id, func(text string) (string, error) {
		start, end, err := m.locate(text, old)
		if err != nil {
			return "", err
		}
		return text[:start] + new + text[end:], nil
	})
}

func (m *Manager) change(ctx context.Context, sc Scope, id string, edit func(string) (string, error)) (*wield.Artifact, error) {
	for range 5 {
		// The new version keeps the owner and conversation of cur, so the
		// check of cur holds for it.
		cur, err := m.read(ctx, sc, id, 0)
		if err != nil {
			return nil, fmt.Errorf("change artifact %s: %w", id, err)
		}
		text, err := edit(cur.Content)
		if err != nil {
			return nil, fmt.Errorf("change artifact %s (version %d): %w", id, cur.Version, err)
		}
		a, err := m.store.PutArtifactVersion(ctx, sc.Owner, id, cur.Version, text)
		if errors.Is(err, wield.ErrConflict) {
			continue // someone else wrote a version: apply the change to it
		}
		if err != nil {
			return nil, fmt.Errorf("change artifact %s: %w", id, err)
		}
		return a, nil
	}
	return nil, fmt.Errorf("change artifact %s: %w (five times in a row)", id, wield.ErrConflict)
}

// locate finds the passage of text that fragment stands for.
func (m *Manager) locate(text, fragment string) (int, int, error) {
	switch n := strings.Count(text, fragment); {
	case n == 1:
		i := strings.Index(text, fragment)
		return i, i + len(fragment), nil
	case n > 1:
		return 0, 0, fmt.Errorf("%w: it occurs %d times; quote more of the surrounding text", ErrAmbiguous, n)
	}
	min := m.MinSimilarity
	if min <= 0 {
		min = 0.8
	}
	best := m.closest(text, fragment, -1, -1)
	if best.score < min {
		if best.start < 0 {
			return 0, 0, fmt.Errorf("%w: nothing like it in the text", ErrNoMatch)
		}
		return 0, 0, fmt.Errorf("%w: the closest passage (line %d) is only %.0f%% alike, and %.0f%% is needed: quote the text as it is",
			ErrNoMatch, line(text, best.start), 100*best.score, 100*min)
	}
	// Look again with the best passage masked: a second one nearly as
	// close makes the choice a guess.
	if second := m.closest(text, fragment, best.start, best.end); second.score >= min && best.score-second.score < 0.05 {
		return 0, 0, fmt.Errorf("%w: passages at lines %d and %d are equally close; quote more of the surrounding text",
			ErrAmbiguous, line(text, best.start), line(text, second.start))
	}
	return best.start, best.end, nil
}

type match struct {
	start, end int
	score      float64
}

// closest finds the passage most like fragment, skipping [skipFrom, skipTo).
// It anchors on the fragment's first and last 32 bytes, the longest patterns
// diff-match-patch's bitap search takes, then scores the passage between
// them by edit distance.
func (m *Manager) closest(text, fragment string, skipFrom, skipTo int) match {
	if skipFrom >= 0 {
		text = text[:skipFrom] + strings.Repeat("\x00", skipTo-skipFrom) + text[skipTo:]
	}
	dmp := diffmatchpatch.New()
	dmp.MatchThreshold = 0.5
	dmp.MatchDistance = len(text) + len(fragment) // anywhere in the text
	head, tail := prefix(fragment, dmp.MatchMaxBits), suffix(fragment, dmp.MatchMaxBits)
	best := match{start: -1}
	// Try the head's best place, and the tail's (the head may be the part
	// the model got wrong).
	var starts []int
	if s := dmp.MatchMain(text, head, 0); s >= 0 {
		starts = append(starts, s)
	}
	if e := dmp.MatchMain(text, tail, 0); e >= 0 {
		starts = append(starts, max(0, e+len(tail)-len(fragment)))
	}
	for _, s := range starts {
		s = runeStart(text, min(max(s, 0), len(text)))
		end := s + len(fragment)
		if e := dmp.MatchMain(text, tail, max(0, s+len(fragment)-len(tail))); e >= s {
			end = e + len(tail)
		}
		end = runeStart(text, min(end, len(text)))
		if end <= s || strings.Contains(text[s:end], "\x00") {
			continue
		}
		// The anchors are approximate: trim what the passage has at its
		// edges and the fragment does not.
		diffs := dmp.DiffMain(fragment, text[s:end], false)
		if d := diffs[0]; len(diffs) > 1 && d.Type == diffmatchpatch.DiffInsert && s+len(d.Text) < end {
			s += len(d.Text)
			diffs = diffs[1:]
		}
		if d := diffs[len(diffs)-1]; len(diffs) > 1 && d.Type == diffmatchpatch.DiffInsert && end-len(d.Text) > s {
			end -= len(d.Text)
			diffs = diffs[:len(diffs)-1]
		}
		score := similarity(dmp.DiffLevenshtein(diffs), fragment, text[s:end])
		// A passage that stops inside a word the fragment ends with
		// ("degre|es" for "degres") scores as well as the whole word: prefer
		// the whole word, at either edge, when it scores no worse.
		if ws, we := wordStart(text, s), wordEnd(text, end); (ws != s && wordRune(fragment, 0)) || (we != end && wordRune(fragment, len(fragment)-1)) {
			if !wordRune(fragment, 0) {
				ws = s
			}
			if !wordRune(fragment, len(fragment)-1) {
				we = end
			}
			if !strings.Contains(text[ws:we], "\x00") {
				d := dmp.DiffLevenshtein(dmp.DiffMain(fragment, text[ws:we], false))
				if sc := similarity(d, fragment, text[ws:we]); sc >= score {
					s, end, score = ws, we, sc
				}
			}
		}
		if score > best.score || best.start < 0 {
			best = match{start: s, end: end, score: score}
		}
	}
	return best
}

func similarity(dist int, fragment, passage string) float64 {
	return 1 - float64(dist)/float64(max(utf8.RuneCountInString(fragment), utf8.RuneCountInString(passage)))
}

// wordRune reports whether the character of s at byte i (or ending there,
// for the last one) is a letter or digit.
func wordRune(s string, i int) bool {
	if s == "" {
		return false
	}
	var r rune
	if i >= len(s)-1 {
		r, _ = utf8.DecodeLastRuneInString(s)
	} else {
		r, _ = utf8.DecodeRuneInString(s[i:])
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// wordStart moves i back over the letters and digits just before it.
func wordStart(text string, i int) int {
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(text[:i])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		i -= n
	}
	return i
}

// wordEnd moves i forward over the letters and digits from it.
func wordEnd(text string, i int) int {
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		i += n
	}
	return i
}

func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeStart(s, n)]
}

func suffix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// runeStart moves i back to the start of the character it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func line(text string, at int) int { return strings.Count(text[:at], "\n") + 1 }

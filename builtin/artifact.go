package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/artifact"
)

// CreateArtifactInput is the input of create_artifact.
type CreateArtifactInput struct {
	Title   string `json:"title,omitempty" description:"Short title of the document" maxLength:"200"`
	Type    string `json:"type,omitempty" description:"Kind of content" enum:"markdown,code,text,html,json,csv" default:"markdown"`
	Content string `json:"content" description:"The full content of the first version" maxLength:"1000000"`
}

// ReadArtifactInput is the input of read_artifact.
type ReadArtifactInput struct {
	ID      string `json:"id" description:"The artifact's id, as create_artifact returned it" minLength:"1"`
	Version int    `json:"version,omitempty" description:"A version to read; 0 or absent for the latest" minimum:"0"`
}

// UpdateArtifactInput is the input of update_artifact.
type UpdateArtifactInput struct {
	ID  string `json:"id" description:"The artifact's id" minLength:"1"`
	Old string `json:"old" description:"The passage to replace, quoted from the latest version; a slightly misquoted passage is found when it is unambiguous" minLength:"1" maxLength:"100000"`
	New string `json:"new" description:"The text to put in its place" maxLength:"1000000"`
}

// RewriteArtifactInput is the input of rewrite_artifact.
type RewriteArtifactInput struct {
	ID      string `json:"id" description:"The artifact's id" minLength:"1"`
	Content string `json:"content" description:"The full new content" maxLength:"1000000"`
}

// ArtifactOutput is what every artifact tool answers: the version it made
// or read. Content is left out of the answers of changes, to save the
// model's context; read_artifact carries it.
type ArtifactOutput struct {
	ID      string `json:"id"`
	Title   string `json:"title,omitempty"`
	Type    string `json:"type,omitempty"`
	Version int    `json:"version"`
	Content string `json:"content,omitempty"`
	Length  int    `json:"length"`
}

func artifactOutput(a *wield.Artifact, withContent bool) ArtifactOutput {
	out := ArtifactOutput{ID: a.ID, Title: a.Title, Type: a.Type, Version: a.Version, Length: len(a.Content)}
	if withContent {
		out.Content = a.Content
	}
	return out
}

// ArtifactTools returns create_artifact, read_artifact, update_artifact and
// rewrite_artifact over a store (any wield.Storage, or memstore). Every
// change is a new version; nothing is overwritten, so the tools run without
// confirmation (AUTO, as the artifact tools are specified).
//
// An artifact belongs to whoever called the tool that made it: the API key
// the server authenticated ([wield.RequesterFrom]; none is one owner), and
// the conversation of the call when it has one. The tools reach only the
// caller's own artifacts, and in a conversation only those of that
// conversation and those made outside any (see [artifact.Scope]); another's
// is "not found" like an ID that does not exist. Missing artifacts and
// versions, and fragments that match nothing or too much, are
// validation_error with a message that says what to send instead.
func ArtifactTools(store wield.ArtifactStore) []*wield.Tool {
	m := artifact.New(store)
	create := wield.Func("create_artifact", "Create a new document (artifact) that can be read and edited later; returns its id and version 1.",
		func(ctx context.Context, in CreateArtifactInput) (ArtifactOutput, error) {
			sc := artifactScope(ctx)
			a := wield.Artifact{Title: in.Title, Type: in.Type, Content: in.Content, Owner: sc.Owner, ConversationID: sc.Conversation}
			if a.Type == "" {
				a.Type = "markdown"
			}
			made, err := m.Create(ctx, a)
			if err != nil {
				return ArtifactOutput{}, artifactError(err, "", 0)
			}
			return artifactOutput(made, false), nil
		})
	read := wield.Func("read_artifact", "Read a document (artifact): its latest version, or an older one.",
		func(ctx context.Context, in ReadArtifactInput) (ArtifactOutput, error) {
			a, err := m.Read(ctx, artifactScope(ctx), in.ID, in.Version)
			if err != nil {
				return ArtifactOutput{}, artifactError(err, in.ID, in.Version)
			}
			return artifactOutput(a, true), nil
		})
	update := wield.Func("update_artifact", "Edit a document (artifact) by replacing one passage of its latest version with new text.",
		func(ctx context.Context, in UpdateArtifactInput) (ArtifactOutput, error) {
			a, err := m.Update(ctx, artifactScope(ctx), in.ID, in.Old, in.New)
			if err != nil {
				return ArtifactOutput{}, artifactError(err, in.ID, 0)
			}
			return artifactOutput(a, false), nil
		})
	rewrite := wield.Func("rewrite_artifact", "Replace the whole content of a document (artifact) with a new version.",
		func(ctx context.Context, in RewriteArtifactInput) (ArtifactOutput, error) {
			a, err := m.Rewrite(ctx, artifactScope(ctx), in.ID, in.Content)
			if err != nil {
				return ArtifactOutput{}, artifactError(err, in.ID, 0)
			}
			return artifactOutput(a, false), nil
		})
	read.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}
	rewrite.Annotations = wield.Annotations{Idempotent: true}
	tools := []*wield.Tool{create, read, update, rewrite}
	for _, t := range tools {
		t.Category = wield.CategoryData
		t.Tags = []string{"artifact", "builtin"}
		t.Timeout = 10 * time.Second
		t.Version = "1.0.0"
		t.Source = "builtin"
	}
	return tools
}

// artifactScope is whose artifacts a tool call reaches: those of the key
// that asked, in the call's conversation.
func artifactScope(ctx context.Context) artifact.Scope {
	sc := artifact.Scope{Owner: wield.RequesterFrom(ctx)}
	if c := wield.CallFrom(ctx); c != nil {
		sc.Conversation = c.Caller.ConversationID
	}
	return sc
}

// artifactError turns what a model can fix into validation errors that say
// how; any other failure is the store's, and reaches the model only as "the
// artifact store failed" (the cause stays in Err, for logs).
func artifactError(err error, id string, version int) error {
	switch {
	case errors.Is(err, wield.ErrNotFound) && version > 0:
		return &wield.Error{Type: wield.ErrValidation, Err: err,
			Message: fmt.Sprintf("artifact %q has no version %d (or does not exist): read it without a version for the latest", id, version)}
	case errors.Is(err, wield.ErrNotFound):
		return &wield.Error{Type: wield.ErrValidation, Err: err,
			Message: fmt.Sprintf("there is no artifact with id %q: use the id create_artifact returned", id)}
	case errors.Is(err, artifact.ErrAmbiguous), errors.Is(err, artifact.ErrNoMatch):
		// The manager's message after the sentinel says what to quote instead.
		msg := err.Error()
		for _, s := range []error{artifact.ErrAmbiguous, artifact.ErrNoMatch} {
			if i := strings.Index(msg, s.Error()); i >= 0 {
				msg = msg[i+len("artifact: "):]
			}
		}
		return &wield.Error{Type: wield.ErrValidation, Err: err, Message: "cannot update: " + msg}
	}
	return &wield.Error{Type: wield.ErrExecution, Err: err, Message: "the artifact store failed; try again later"}
}

package httpapi

import (
	"net/http"
	"strconv"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/artifact"
)

// ArtifactCreate is the body of POST /v1/artifacts.
type ArtifactCreate struct {
	ID             string `json:"id,omitempty"`
	Title          string `json:"title,omitempty"`
	Type           string `json:"type,omitempty"`
	Content        string `json:"content"`
	ConversationID string `json:"conversation_id,omitempty"`
}

// ArtifactUpdate is the body of PATCH /v1/artifacts/{id}: replace the
// fragment Old (found exactly, or by close match) with New.
type ArtifactUpdate struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// ArtifactRewrite is the body of PUT /v1/artifacts/{id}: the whole new
// content.
type ArtifactRewrite struct {
	Content string `json:"content"`
}

// artifactScope is whose artifacts a request reaches: those of its key
// (named as the engine names the key that calls a tool, so that the
// artifact tools and these endpoints agree), or on a server without keys
// the one owner "". A request is its key's own, so it reaches the key's
// artifacts of every conversation.
func artifactScope(r *http.Request) artifact.Scope {
	if k := KeyFrom(r.Context()); k != nil {
		return artifact.Scope{Owner: "key:" + k.ID}
	}
	return artifact.Scope{}
}

// createArtifact answers POST /v1/artifacts. A chosen ID is the key's to
// choose: another key's artifact of that ID is no hindrance, and the
// answer says nothing of it.
func (s *Server) createArtifact(w http.ResponseWriter, r *http.Request) error {
	var req ArtifactCreate
	if err := decode(r, &req); err != nil {
		return err
	}
	sc := artifactScope(r)
	if req.ID != "" {
		if _, err := s.store.Artifact(r.Context(), sc.Owner, req.ID, 0); err == nil {
			return apiError(http.StatusConflict, CodeConflict, "an artifact with ID '"+req.ID+"' exists")
		}
	}
	a, err := s.artifacts.Create(r.Context(), wield.Artifact{ID: req.ID, Title: req.Title, Type: req.Type,
		Content: req.Content, ConversationID: req.ConversationID, Owner: sc.Owner})
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/artifacts/"+a.ID)
	writeJSON(w, http.StatusCreated, a)
	return nil
}

// getArtifact answers GET /v1/artifacts/{id}?version=N (latest without):
// 404 for another key's artifact, as for one that does not exist.
func (s *Server) getArtifact(w http.ResponseWriter, r *http.Request) error {
	version := 0
	if v := r.URL.Query().Get("version"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return apiError(http.StatusBadRequest, CodeBadRequest, "version is not a number from 1")
		}
		version = n
	}
	a, err := s.artifacts.Read(r.Context(), artifactScope(r), r.PathValue("id"), version)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *Server) updateArtifact(w http.ResponseWriter, r *http.Request) error {
	var req ArtifactUpdate
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Old == "" {
		return apiError(http.StatusBadRequest, CodeBadRequest, "old is empty: to replace everything, PUT the new content")
	}
	a, err := s.artifacts.Update(r.Context(), artifactScope(r), r.PathValue("id"), req.Old, req.New)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *Server) rewriteArtifact(w http.ResponseWriter, r *http.Request) error {
	var req ArtifactRewrite
	if err := decode(r, &req); err != nil {
		return err
	}
	a, err := s.artifacts.Rewrite(r.Context(), artifactScope(r), r.PathValue("id"), req.Content)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

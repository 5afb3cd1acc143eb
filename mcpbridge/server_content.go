package mcpbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/gotmpl"
)

// Rich results. A tool's output is JSON, which a [Server] sends as text
// (and, for an object, as structured content). A tool that has pictures,
// sound or documents to give an MCP client returns instead the object
//
//	{"mcp_content": [ ...MCP content items... ]}
//
// (see [ContentKey] and [ContentOutput]): its items are sent as the
// result's content, as they are. Other callers (the REST API, models over
// other dialects) get that object as the output, like any other.

// ContentKey is the one key of a tool output that a [Server] sends as MCP
// content rather than as text.
const ContentKey = "mcp_content"

// The types of [Content].
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResource     = "resource"      // an embedded resource: URI, MIMEType, and Text or Data
	ContentResourceLink = "resource_link" // a link to a resource: URI and Name
)

// Content is one item of MCP content: in a tool's result, in a prompt's
// message. Which fields count depends on Type: Text for text; Data and
// MIMEType for image and audio; URI, MIMEType and Text or Data (a blob) for
// an embedded resource; URI, Name and MIMEType for a resource link.
type Content struct {
	Type     string
	Text     string
	Data     []byte
	MIMEType string
	URI      string
	Name     string
}

// mcp converts c to the SDK's type, or says why it cannot.
func (c Content) mcp() (mcp.Content, error) {
	switch c.Type {
	case ContentText, "":
		return &mcp.TextContent{Text: c.Text}, nil
	case ContentImage, ContentAudio:
		if len(c.Data) == 0 || c.MIMEType == "" {
			return nil, fmt.Errorf("%s content needs data and a MIME type", c.Type)
		}
		if c.Type == ContentImage {
			return &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType}, nil
		}
		return &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType}, nil
	case ContentResource:
		if c.URI == "" {
			return nil, errors.New("resource content needs a uri")
		}
		rc := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType}
		if c.Data != nil {
			rc.Blob = c.Data
		} else {
			rc.Text = c.Text
		}
		return &mcp.EmbeddedResource{Resource: rc}, nil
	case ContentResourceLink:
		if c.URI == "" || c.Name == "" {
			return nil, errors.New("resource_link content needs a uri and a name")
		}
		return &mcp.ResourceLink{URI: c.URI, Name: c.Name, MIMEType: c.MIMEType}, nil
	}
	return nil, fmt.Errorf("content type %q is not text, image, audio, resource or resource_link", c.Type)
}

// ContentOutput returns the tool output that a [Server] sends as the given
// content items: {"mcp_content": [...]}. It fails when an item lacks what
// its type needs.
func ContentOutput(items ...Content) (json.RawMessage, error) {
	list := make([]mcp.Content, len(items))
	for i, c := range items {
		m, err := c.mcp()
		if err != nil {
			return nil, fmt.Errorf("content %d: %w", i, err)
		}
		list[i] = m
	}
	b, err := json.Marshal(map[string][]mcp.Content{ContentKey: list})
	if err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return b, nil
}

// srvContent reads a successful result whose output is {"mcp_content":
// [...]} as MCP content. Anything else (another key beside it, an item
// the SDK cannot read) is not content, and is sent as text.
func srvContent(r *wield.Result) ([]mcp.Content, bool) {
	if !r.OK || !bytes.Contains(r.Output, []byte(`"`+ContentKey+`"`)) {
		return nil, false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(r.Output, &top) != nil || len(top) != 1 || top[ContentKey] == nil {
		return nil, false
	}
	// The SDK decodes content by its type inside a result.
	var res mcp.CallToolResult
	wire, err := json.Marshal(map[string]json.RawMessage{"content": top[ContentKey]})
	if err != nil || json.Unmarshal(wire, &res) != nil || len(res.Content) == 0 {
		return nil, false
	}
	return res.Content, true
}

// tplFuncs are the functions of the templates of content, prompts and
// tool-file entries: json writes a value as JSON.
var tplFuncs = map[string]gotmpl.Func{
	"json": {Args: 1, Call: func(v ...any) (any, error) {
		b, err := json.Marshal(v[0])
		return string(b), err
	}},
}

// tplParse parses a Go text template (internal/gotmpl: text/template's
// syntax and rules over JSON values, without its executor's cost to the
// binary); text without "{{" is kept as it is.
func tplParse(name, text string) (*gotmpl.Template, error) {
	if !strings.Contains(text, "{{") {
		return nil, nil
	}
	t, err := gotmpl.Parse(name, text, tplFuncs)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	return t, nil
}

// tplText is a text with its template, if it has one.
type tplText struct {
	raw string
	t   *gotmpl.Template
}

func newTplText(name, text string) (tplText, error) {
	t, err := tplParse(name, text)
	return tplText{raw: text, t: t}, err
}

// render executes the template with data; a missing or null value renders
// as nothing.
func (x tplText) render(data map[string]any) (string, error) {
	if x.t == nil {
		return x.raw, nil
	}
	var b strings.Builder
	if err := x.t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// tplContent is a content item whose text and URI are templates.
type tplContent struct {
	c         Content
	text, uri tplText
}

func newTplContent(name string, c Content) (tplContent, error) {
	if _, err := c.mcp(); err != nil {
		return tplContent{}, fmt.Errorf("%s: %w", name, err)
	}
	text, err := newTplText(name+" text", c.Text)
	if err != nil {
		return tplContent{}, err
	}
	uri, err := newTplText(name+" uri", c.URI)
	if err != nil {
		return tplContent{}, err
	}
	return tplContent{c: c, text: text, uri: uri}, nil
}

func (x tplContent) render(data map[string]any) (Content, error) {
	c := x.c
	var err error
	if c.Text, err = x.text.render(data); err != nil {
		return c, err
	}
	if c.URI, err = x.uri.render(data); err != nil {
		return c, err
	}
	return c, nil
}

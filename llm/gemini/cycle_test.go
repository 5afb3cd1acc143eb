package gemini_test

import (
	"testing"
	"time"

	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/openai"
)

// A schema whose references go round without reaching a value (A → B → A),
// or through allOf back to the root, converts promptly, with a problem saying what was left out, for
// Gemini (no references at all) and for OpenAI's strict mode (which inlines).
func TestConvertReferenceCycles(t *testing.T) {
	for _, src := range []string{
		`{"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}},"$ref":"#/$defs/A"}`,
		`{"type":"object","allOf":[{"$ref":"#"}]}`,
		`{"$defs":{"A":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/A"}]}},"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}}`,
	} {
		done := make(chan []string, 1)
		go func() {
			_, ps := gemini.ConvertSchema(schemaOf(t, src))
			_, ops := openai.StrictSchema(schemaOf(t, src))
			var msgs []string
			for _, p := range append(ps, ops...) {
				msgs = append(msgs, p.Message)
			}
			done <- msgs
		}()
		select {
		case msgs := <-done:
			if len(msgs) == 0 {
				t.Errorf("%s: no problem reported", src)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: conversion did not end within 10s", src)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
)

// toolView is a tool as `wield list --json` shows it.
type toolView struct {
	Name         string             `json:"name"`
	Version      string             `json:"version,omitempty"`
	Description  string             `json:"description"`
	Category     wield.Category     `json:"category"`
	Tags         []string           `json:"tags,omitempty"`
	Permission   wield.Permission   `json:"permission"`
	Annotations  wield.Annotations  `json:"annotations"`
	TimeoutMS    int64              `json:"timeout_ms,omitempty"`
	Status       wield.Status       `json:"status"`
	Source       string             `json:"source,omitempty"`
	InputSchema  *jsonschema.Schema `json:"input_schema"`
	OutputSchema *jsonschema.Schema `json:"output_schema,omitempty"`
}

func viewOf(t *wield.Tool) toolView {
	st := t.Status
	if st == "" {
		st = wield.StatusActive
	}
	return toolView{
		Name: t.Name, Version: t.Version, Description: t.Description, Category: t.Category, Tags: t.Tags,
		Permission: t.EffectivePermission(), Annotations: t.Annotations, TimeoutMS: t.Timeout.Milliseconds(),
		Status: st, Source: t.Source, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
	}
}

func (a *app) listCommand() *cobra.Command {
	var asJSON bool
	var category string
	var tags []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tools",
		Long:  "List the registered tools, optionally only those of a category or carrying any of the given tags.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var tools []*wield.Tool
			if c := a.client(); c != nil {
				infos, err := c.Tools(cmd.Context(), httpapi.ToolQuery{Category: category, Tags: tags})
				if err != nil {
					return err
				}
				for _, ti := range infos {
					tools = append(tools, &wield.Tool{Name: ti.Name, Version: ti.Version, Description: ti.Description, Category: ti.Category,
						Tags: ti.Tags, InputSchema: ti.InputSchema, OutputSchema: ti.OutputSchema, Annotations: ti.Annotations,
						Permission: ti.Permission, Timeout: time.Duration(ti.TimeoutMS) * time.Millisecond, Status: ti.Status, Source: ti.Source})
				}
			} else {
				reg, _, err := a.setup(nil)
				if err != nil {
					return err
				}
				tools = reg.List(wield.Query{Category: wield.Category(category), Tags: tags})
			}
			if asJSON {
				views := make([]toolView, len(tools))
				for i, t := range tools {
					views[i] = viewOf(t)
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(views)
			}
			if len(tools) == 0 {
				fmt.Fprintln(a.stdout, "no tools match")
				return nil
			}
			w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tCATEGORY\tPERMISSION\tPARAMETERS\tDESCRIPTION")
			for _, t := range tools {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Category, t.EffectivePermission(), params(t.InputSchema), firstSentence(t.Description))
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tools with their schemas as JSON")
	cmd.Flags().StringVar(&category, "category", "", "only tools of this category ("+categories()+")")
	cmd.Flags().StringSliceVar(&tags, "tag", nil, "only tools with any of these tags (repeatable)")
	return cmd
}

func categories() string {
	names := make([]string, len(wield.Categories))
	for i, c := range wield.Categories {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// params shows a schema's properties as name, name? (optional).
func params(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	names := s.PropertyOrder
	if len(names) == 0 {
		for n := range s.Properties {
			names = append(names, n)
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if !contains(s.Required, n) {
			out[i] += "?"
		}
	}
	return strings.Join(out, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

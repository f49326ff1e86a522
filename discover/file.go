package discover

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// File is the configuration init writes.
type File struct {
	// Connector is the connector's name.
	Connector string
	// BaseURL is the workspace API's address.
	BaseURL string
	// APIKeyEnv is the variable holding the workspace API key.
	APIKeyEnv string
	// StatePath is the state file.
	StatePath string
	// Source and Proposal are what discovery found and guessed.
	Source   *Source
	Proposal Proposal
	// Head is written as the file's first comment.
	Head string
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func mapNode(pairs ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Content: pairs}
}

func anyNode(v any) *yaml.Node {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return scalar(fmt.Sprint(v))
	}
	return &n
}

// YAML renders the file: every guess with its reason as a comment, the
// fields left unmapped listed as comments under the mapping.
func (f *File) YAML() ([]byte, error) {
	ws := mapNode(
		scalar("baseURL"), scalar(f.BaseURL),
		scalar("apiKey"), scalar("${"+f.APIKeyEnv+"}"),
	)
	ws.Content[2].HeadComment = "The API key, read from the environment: export " + f.APIKeyEnv + " where syncd runs."
	st := mapNode(scalar("path"), scalar(f.StatePath))

	settings := mapNode()
	for _, s := range f.Source.Settings {
		v := anyNode(s.Value)
		v.LineComment = s.Why
		k := scalar(s.Key)
		k.HeadComment = s.Note
		if seq, ok := s.Value.([]string); ok {
			v = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, LineComment: s.Why}
			for _, x := range seq {
				v.Content = append(v.Content, scalar(x))
			}
		}
		settings.Content = append(settings.Content, k, v)
	}
	fields := mapNode()
	for _, g := range f.Proposal.Guesses {
		var v *yaml.Node
		if len(g.Transform) == 0 && g.Region == "" {
			v = scalar(g.From)
		} else {
			v = mapNode(scalar("from"), scalar(g.From))
			v.Style = yaml.FlowStyle
			if len(g.Transform) > 0 {
				tr := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
				for _, t := range g.Transform {
					tr.Content = append(tr.Content, scalar(t))
				}
				v.Content = append(v.Content, scalar("transform"), tr)
			}
			if g.Region != "" {
				v.Content = append(v.Content, scalar("region"), scalar(g.Region))
			}
		}
		v.LineComment = g.Why
		fields.Content = append(fields.Content, scalar(g.Target), v)
	}
	mp := mapNode(scalar("fields"), fields)
	if f.Proposal.Region != "" {
		mp.Content[0].HeadComment = "Phone region " + f.Proposal.Region + ": " + f.Proposal.RegionWhy + "."
	}
	if len(f.Proposal.Unmapped) > 0 {
		var b strings.Builder
		b.WriteString("Not mapped (add any as fieldName: <field>, or custom.<key>: <field>):")
		for _, u := range f.Proposal.Unmapped {
			fmt.Fprintf(&b, "\n  %s: %s", u.Field, u.Why)
		}
		mp.FootComment = b.String()
	}
	if len(f.Proposal.Guesses) == 0 {
		return nil, fmt.Errorf("no field of the source could be mapped: name the fields with the mapping yourself")
	}

	conn := mapNode(
		scalar("name"), scalar(f.Connector),
		scalar("type"), scalar(f.Source.Type),
		scalar("direction"), scalar("to-workspace"),
		scalar("settings"), settings,
		scalar("mapping"), mp,
	)
	conn.Content[4].LineComment = "read only to start; see the README for both ways"

	conn.Content[8].HeadComment = fmt.Sprintf("Proposed from %d record(s) read; each guess says why.", f.Source.Records)
	if f.Source.Export != "" {
		conn.Content[6].HeadComment = "Recognised export: " + f.Source.Export + ". Its header is " + f.Source.ExportSource + "."
	}
	root := mapNode(
		scalar("workspace"), ws,
		scalar("state"), st,
		scalar("connectors"), &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{conn}},
	)
	root.HeadComment = f.Head
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	out := b.String()
	if a := f.Source.Activities; a != nil {
		// The connector is the file's last node: its keys are indented
		// by four spaces, and so is the block, to uncomment in place.
		out += "\n"
		for _, line := range strings.Split(a.comment(), "\n") {
			out += "    # " + line + "\n"
		}
	}
	return []byte(out), nil
}

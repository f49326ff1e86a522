package config

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseConfig parses a configuration: defaults, then ${VAR} expansion
// from getenv, then strict decoding, then Validate. The error is a
// *ValidationError listing every problem found.
func ParseConfig(data []byte, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var ps problems
	root, err := parseYAML(data)
	if err != nil {
		ps.add("", "check the indentation and quoting near that line", "invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, ps.err()
	}
	c := DefaultConfig()
	var used map[string]string
	var secrets []string
	if root != nil {
		var orig map[*yaml.Node]string
		orig, used = expandEnv(root, getenv, &ps)
		secrets = secretValues(root)
		d := &decoder{ps: &ps, orig: orig, failed: map[string]bool{}}
		for _, p := range ps {
			d.failed[p.Path] = true
		}
		d.decode(root, reflect.ValueOf(&c).Elem(), "")
	}
	c.ApplyDefaults()

	// A key with a decoding problem is not reported again by Validate,
	// which sees its default or empty value.
	reported := map[string]bool{}
	for _, p := range ps {
		reported[p.Path] = true
	}
	var ve *ValidationError
	if err := c.Validate(); errors.As(err, &ve) {
		for _, p := range ve.Problems {
			if !reported[p.Path] {
				ps = append(ps, p)
			}
		}
	}
	scrub(ps, used, secrets)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return &c, nil
}

// parseYAML returns the document's root node, nil for an empty file. A
// file of several documents is refused.
func parseYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, errors.New("the file holds several YAML documents (---); keep one")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = root.Content[0]
	}
	return root, nil
}

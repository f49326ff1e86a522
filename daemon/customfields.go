package daemon

import (
	"context"
	"fmt"
	"strings"
)

// loadCustomFields reads the workspace's custom field definitions when a
// connector maps a custom field, so that values are written in the form
// of their field's type and compared by it, and returns their keys (nil
// when nothing maps one: no call is made).
func (d *Daemon) loadCustomFields(ctx context.Context) ([]string, error) {
	needed := false
	for _, cc := range d.cfg.Connectors {
		for target := range cc.Mapping.Fields {
			needed = needed || strings.HasPrefix(target, "custom.")
		}
	}
	if !needed {
		return nil, nil
	}
	defs, err := d.ws.LoadCustomFields(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the workspace's custom field definitions: %w", err)
	}
	keys := make([]string, 0, len(defs))
	for _, def := range defs {
		keys = append(keys, def.Key)
	}
	d.log.WithField("custom_fields", len(defs)).WithField("form", d.ws.CustomFieldValues()).Info("custom field definitions loaded")
	return keys, nil
}

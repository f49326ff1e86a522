package daemon

import (
	"context"
	"fmt"
	"strings"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
)

// loadCustomFields reads the workspace's custom field definitions when a
// connector maps a custom field, so that values are written in the form
// of their field's type and compared by it, and returns their keys (nil
// when nothing maps one: no call is made).
func (d *Daemon) loadCustomFields(ctx context.Context) ([]string, error) {
	keys, err := CustomFieldKeys(ctx, d.cfg, d.ws)
	if err != nil || keys == nil {
		return keys, err
	}
	d.log.WithField(logfield.CustomFields, len(keys)).WithField(logfield.Form, d.ws.CustomFieldValues()).Info("custom field definitions loaded")
	return keys, nil
}

// CustomFieldKeys reads the workspace's custom field keys when a connector
// of cfg maps a custom field (nil and no call otherwise): the keys New
// compiles each mapping with, so that syncd validate checks the same.
// ws must be the client of cfg (see WorkspaceOptions).
func CustomFieldKeys(ctx context.Context, cfg *config.Config, ws *workspace.Client) ([]string, error) {
	needed := false
	for _, cc := range cfg.Connectors {
		for target := range cc.Mapping.Fields {
			needed = needed || strings.HasPrefix(target, "custom.")
		}
	}
	if !needed {
		return nil, nil
	}
	defs, err := ws.LoadCustomFields(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the workspace's custom field definitions: %w", err)
	}
	keys := make([]string, 0, len(defs))
	for _, def := range defs {
		keys = append(keys, def.Key)
	}
	return keys, nil
}

// CompileMapping compiles a connector's mapping as New does; customKeys
// are the workspace's custom field keys (see CustomFieldKeys). Its error
// is a *mapping.SpecError listing every problem.
func CompileMapping(cc config.ConnectorConfig, customKeys []string) (*mapping.Mapper, error) {
	return mapping.Compile(cc.Mapping, cc.Direction, customKeys)
}
